"""Local identification of a CFA model in lavaan syntax, checked before any fit is printed.

A model whose free parameters outnumber the (co)variances is refused by the CFA itself
(``cfa._refusal``); a model can pass that global count and still have parameters that no data
determine (a *local* under-identification): the fit then prints indices with a df counted
from parameters that are not free at all. The rules here are the textbook ones (Bollen 1989,
ch. 7; Kline 2016, ch. 9):

- every factor needs a scale: a fixed loading (the first, unless written ``NA*``, as lavaan
  and semopy fix it to 1) or a fixed variance (``F ~~ 1*F``);
- a factor with one indicator is identified only when that indicator's residual variance is
  fixed (``x ~~ 0*x``): otherwise the factor's variance and the residual share one variance;
- a factor with two indicators is identified only beside another factor it covaries with (the
  two-indicator rule); the common case that breaks it is a second-order factor over only two
  first-order factors, or a lone two-item factor.

Bounds (docs/reference/bounds.md): a model has at most ``MAX_FACTORS`` factors and
``MAX_TERMS`` loadings and covariances (a 2,000-factor model would occupy semopy for hours).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["MAX_FACTORS", "MAX_TERMS", "identification_problem", "fixed_value"]

MAX_FACTORS = 100  # factors of one --cfa-model
MAX_TERMS = 5_000  # loadings and covariances of one --cfa-model


def fixed_value(term: str) -> str | None:
    """The modifier of ``term`` (``0.5*x`` -> ``0.5``; ``NA*x`` -> ``NA``), None when bare."""
    mod, star, _ = term.rpartition("*")
    return mod.strip() if star else None


def _is_number(mod: str | None) -> bool:
    if mod is None:
        return False
    try:
        float(mod)
    except ValueError:
        return False
    return True


def identification_problem(
    loadings: Mapping[str, Sequence[str]], covariances: Sequence[tuple[str, str]]
) -> str | None:
    """Why the model is not locally identified (None: every factor passes the rules above).

    ``loadings``: factor -> its ``=~`` terms as written (with modifiers); ``covariances``:
    each ``a ~~ term`` as (a, term).
    """
    fixed_var = {a for a, t in covariances if _is_number(fixed_value(t)) and _name(t) == a}
    indicator_of = {_name(t) for terms in loadings.values() for t in terms}
    exogenous = [f for f in loadings if f not in indicator_of]
    for factor, terms in loadings.items():
        names = [_name(t) for t in terms]
        mods = [fixed_value(t) for t in terms]
        scaled = mods[0] != "NA" or any(_is_number(m) for m in mods) or factor in fixed_var
        if not scaled:
            return (
                f"factor {factor} has no scale: its first loading is freed (NA*) and no "
                f"loading or variance is fixed (write {factor} ~~ 1*{factor})"
            )
        if len(names) == 1 and names[0] not in fixed_var:
            return (
                f"factor {factor} has one indicator ({names[0]}): its variance and "
                f"{names[0]}'s residual variance are not separately identified (fix one, e.g. "
                f"{names[0]} ~~ 0*{names[0]}, or give {factor} two or more indicators)"
            )
        if len(names) == 2 and factor in exogenous and len(exogenous) < 2:
            kind = "second-order factor" if all(n in loadings for n in names) else "factor"
            return (
                f"{kind} {factor} has only two indicators ({', '.join(names)}) and no other "
                "factor to covary with (the two-indicator rule): give it three or more"
            )
    return None


def _name(term: str) -> str:
    return term.rpartition("*")[2].strip()
