"""Every choice the paper leaves open, as one recorded set of options (``--option KEY=VALUE``).

Han et al. (2025) give the five prompt templates but not how placeholders are rendered, how
answers are parsed or what happens to unparseable answers. Each such decision is a field here;
the defaults follow the reimplementation notes, and the values used are written into
``contamination.json`` so a run can be re-scored or reproduced under other choices.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from psymetrics_core.api import PsymError, bound

__all__ = ["ProbeOptions", "PROBES", "parse_probe_options", "parse_probes"]

PROBES = ("verbatim", "keyword", "item-dimension", "option-score", "target-score", "order")

_CHOICES: dict[str, tuple[str, ...]] = {
    "item_form": ("full", "stored"),
    "options_format": ("comma", "numbered"),
    "target_mid_rule": ("nearest", "floor", "ceil", "exact"),
    "option_score_unparsed": ("max_error", "drop", "truncate_pad"),
    "target_unparsed": ("max_error", "drop"),
    "keyword_unparsed": ("wrong", "drop"),
    "keyword_headline": ("normalized", "strict"),
    "verbatim_clean": ("none", "quotes_numbering"),
    "verbatim_control": ("name", "none"),
    "score_base": ("native", "one"),
    "dimension_labels": ("paper", "instrument"),
}


@dataclass(frozen=True)
class ProbeOptions:
    """Decisions the paper leaves open (defaults in brackets are the reimplementation notes').

    - ``item_form``: ``full`` shows items as administered (BFI with its stem, "I see myself as
      someone who is talkative."), ``stored`` as the instrument stores them ("Is talkative").
    - ``options_format``: ``{options}`` as comma-separated labels in ascending value order, or
      a numbered list.
    - ``target_mid_rule``: the middle target of target-score matching; ``nearest`` is the keyed
      value closest to (min + max) / 2, lower on ties (= (min + max) // 2 on integer scales).
    - ``option_score_unparsed``: an answer without exactly one number per option counts as the
      largest possible error, is dropped, or is truncated/padded with the scale minimum.
    - ``target_unparsed``/``keyword_unparsed``: unmatched answers are the largest error
      (wrong) or dropped.
    - ``keyword_headline``: which keyword match (both are always reported) feeds the index.
    - ``verbatim_clean``: strip surrounding quotes and a leading "1." before the edit distance.
    - ``verbatim_control``: also ask for each item under a made-up inventory name.
    - ``target_numeric``: accept a bare number k as the k-th option in target-score answers.
    - ``include_unscored``: attention checks in the verbatim, keyword and order probes.
    - ``score_base``: ``one`` shifts 0-based keyed values (MFQ 0-5) to 1-based, since the
      option-score prompt says "All scores are positive integers".
    - ``dimension_labels``: ``paper`` shows the dimensions of the four inventories Han et al.
      probed in their own wording and order (their Appendix A.1: "Harm/Care,
      Fairness/Reciprocity, In-group/Loyalty, Authority/Respect, Purity/Sanctity" for the MFQ;
      the notes' suggested ``{dimensions}`` rendering, §3.6); ``instrument`` the labels of the
      instrument's spec ("Care/harm, ..."). Other instruments always show their spec's labels.
    - ``max_new_tokens_*``: generation length per probe (the paper reports none); verbatim
      recall gets 256 tokens (about 1,000 characters) so that a refusal, which the paper
      scores as it is, fits whole (see the plugin README); an answer that hits its budget is
      marked ``truncated``.
    """

    item_form: str = "full"
    options_format: str = "comma"
    target_mid_rule: str = "nearest"
    option_score_unparsed: str = "max_error"
    target_unparsed: str = "max_error"
    keyword_unparsed: str = "wrong"
    keyword_headline: str = "normalized"
    verbatim_clean: str = "none"
    verbatim_control: str = "name"
    control_name: str = "Lindqvist Everyday Attitudes Survey (LEAS)"
    target_numeric: bool = False
    include_unscored: bool = True
    score_base: str = "native"
    dimension_labels: str = "paper"
    bootstrap: int = 1000
    seed: int = 1234
    max_new_tokens_verbatim: int = 512
    max_new_tokens_keyword: int = 8
    max_new_tokens_item_dimension: int = 16
    max_new_tokens_option_score: int = 24
    max_new_tokens_target_score: int = 16

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for ``contamination.json``."""
        return asdict(self)

    def max_new_tokens(self, probe: str) -> int:
        """Generation length for ``probe``."""
        return int(asdict(self)["max_new_tokens_" + probe.replace("-", "_")])


def parse_probe_options(
    pairs: tuple[str, ...] | list[str], base: ProbeOptions | None = None
) -> ProbeOptions:
    """``base`` (default options) with ``KEY=VALUE`` pairs applied; one-line errors."""
    known = {f.name: f for f in fields(ProbeOptions)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        value = value.strip()
        if not sep or key not in known:
            raise PsymError(
                f"--option expects KEY=VALUE with KEY one of {', '.join(sorted(known))}; "
                f"got {pair!r}"
            )
        default = asdict(ProbeOptions())[key]
        if key in _CHOICES and value not in _CHOICES[key]:
            raise PsymError(
                f"--option {key}: expected one of {', '.join(_CHOICES[key])}, got {value!r}"
            )
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise PsymError(f"--option {key}: expected true or false, got {value!r}")
            changes[key] = value.lower() in ("true", "1", "yes")
        elif isinstance(default, int):  # seed, bootstrap, max_new_tokens_*: base/bounds.py
            changes[key] = bound(f"--option {key}").parse(value, f"--option {key}")
        else:
            if not value:
                raise PsymError(f"--option {key}: empty value")
            changes[key] = value
    return replace(base or ProbeOptions(), **changes)


def parse_probes(text: str | None) -> tuple[str, ...]:
    """The ``--probes`` list (default: all six), in canonical order; unknown names are errors."""
    if not text:
        return PROBES
    wanted = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PROBES]
    if unknown or not wanted:
        raise PsymError(
            f"--probes: unknown probe {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(PROBES)}"
        )
    return tuple(p for p in PROBES if p in wanted)
