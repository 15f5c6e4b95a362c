"""Typed model of an instrument spec (``instrument.yaml``) and of one item CSV row.

``spec.py`` validates every spec through ``InstrumentSpec`` and every CSV row through
``ItemRow``; a validation error becomes one ``SpecError`` line naming the file, the CSV line
(rows) and the field. ``psym schema instrument`` prints the JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.models import Open, Strict
from psymetrics_core.base.versions import SPEC_SCHEMA_VERSION

__all__ = [
    "SPEC_SCHEMA_VERSION",
    "InstrumentSpec",
    "LicenseSpec",
    "ResponseScaleSpec",
    "ScaleSpec",
    "PromptSpec",
    "HumanLoadingsSpec",
    "ItemRow",
    "validate_spec",
    "validate_row",
]

TRUE = {"1", "true", "yes", "y", "r", "reverse", "reversed"}
FALSE = {"", "0", "false", "no", "n"}
FLAGS = ("attention_check", "filler")


def _expect(kind: type | tuple[type, ...], value: Any) -> Any:
    """``value`` if it is a ``kind`` (bools are not numbers), else the one-line ValueError."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        want = " or ".join(k.__name__ for k in kinds)
        raise ValueError(f"expected {want}, got {type(value).__name__} {value!r}")
    return value


def _optional(kind: type, value: Any, message: str) -> Any:
    """``value`` if it is None or a ``kind``, else ``ValueError(message)`` (optional fields)."""
    if value is not None and not isinstance(value, kind):
        raise ValueError(message)
    return value


class LicenseSpec(Open):
    """The licence of the item texts: a status and whether they may be redistributed."""

    status: str
    redistributable: bool | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: Any) -> Any:
        return _expect(str, v)

    @field_validator("redistributable", mode="before")
    @classmethod
    def _redist(cls, v: Any) -> Any:
        return _optional(bool, v, "expected true, false or null")


class ResponseScaleSpec(Strict):
    """A response format: integer codes min..max, one label per code; ``agree`` names the end
    of the scale that means agreement (``high``, the default: max = agree; ``low``: min = agree,
    as in 16Personalities' 1 = Agree ... 7 = Disagree)."""

    min: int
    max: int
    labels: list[str]
    instruction: str | None = None
    agree: Literal["high", "low"] = "high"

    @field_validator("min", "max", mode="before")
    @classmethod
    def _int(cls, v: Any) -> Any:
        return _expect(int, v)

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, v: Any) -> Any:
        return [str(x) for x in _expect(list, v)]

    @model_validator(mode="after")
    def _range(self) -> ResponseScaleSpec:
        if self.max <= self.min:
            raise _FieldError("max", f"max ({self.max}) must be greater than min ({self.min})")
        want = self.max - self.min + 1
        if len(self.labels) != want:
            raise _FieldError(
                "labels",
                f"expected {want} labels (one per value {self.min}..{self.max}), "
                f"got {len(self.labels)}",
            )
        return self


class ScaleSpec(Strict):
    """A scale: its items (the CSV's ``scale`` column, ``all``, or a union of scales), how
    it is scored, and optional inversion, MRAT centring, per-scale rescale maps and norms."""

    method: Literal["mean", "sum"] = "mean"
    description: str = ""
    items: Literal["all"] | list[str] | None = None
    centre: Literal["mrat"] | None = None
    invert: bool = False
    higher_is: str = ""
    rescale: dict[str, str] = Field(
        default_factory=dict, description="item id -> value map, e.g. {3: '1=1;2=4;3=2.5'}"
    )
    norms: list[dict[str, Any]] | None = Field(
        default=None, description="human norm groups: group, mean, sd, n, source, year, note"
    )
    adjectives: list[str] = Field(
        default_factory=list,
        description="adjectives describing a person high on the scale (the interview judge's "
        "dimension-aware option conversion)",
    )

    @field_validator("adjectives", mode="before")
    @classmethod
    def _adjectives(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            raise ValueError("expected a list of non-empty words, e.g. [talkative, assertive]")
        return [x.strip() for x in v]

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, v: Any) -> Any:
        if v not in ("mean", "sum"):
            raise ValueError(f"method must be one of ['mean', 'sum'], got {v!r}")
        return v

    @field_validator("description", "higher_is", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return "" if v is None else str(v)

    @field_validator("items", mode="before")
    @classmethod
    def _items(cls, v: Any) -> Any:
        ok = v in (None, "all") or (
            isinstance(v, list) and v and all(isinstance(x, str) for x in v)
        )
        if not ok:
            raise ValueError(
                "expected 'all' or a list of scale names (membership is the CSV's 'scale' "
                f"column), got {v!r}"
            )
        return v

    @field_validator("centre", mode="before")
    @classmethod
    def _centre(cls, v: Any) -> Any:
        if v not in (None, "mrat"):
            raise ValueError(
                f"expected 'mrat' (minus the mean rating of all scored items), got {v!r}"
            )
        return v

    @field_validator("invert", mode="before")
    @classmethod
    def _invert(cls, v: Any) -> Any:
        if not isinstance(v, bool):
            raise ValueError(f"expected true or false, got {v!r}")
        return v

    @field_validator("rescale", mode="before")
    @classmethod
    def _rescale(cls, v: Any) -> Any:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise ValueError(
                "expected a mapping of item id to value map, e.g. {3: '1=1;2=4;3=2.5'}"
            )
        return {str(k): str(x) for k, x in v.items()}

    @field_validator("norms", mode="before")
    @classmethod
    def _norms(cls, v: Any) -> Any:
        return _optional(list, v, "expected a list of norm groups")


class PromptSpec(Open):
    """The instruction shown with every item, an optional Jinja2 template and system prompt."""

    instruction: str
    template: str | None = None
    system: str | None = None
    eos: str = ":"

    @field_validator("instruction", mode="before")
    @classmethod
    def _instruction(cls, v: Any) -> Any:
        return _expect(str, v)

    @field_validator("template", mode="before")
    @classmethod
    def _template(cls, v: Any) -> Any:
        return _optional(str, v, f"expected a string (a Jinja template), got {type(v).__name__}")

    @field_validator("eos", mode="before")
    @classmethod
    def _eos(cls, v: Any) -> Any:
        return str(v)


class HumanLoadingsSpec(Strict):
    """Published human factor loadings: a CSV (``item,<factor>,<factor>,...``, loadings in the
    items' raw direction as published) and where they come from."""

    file: str = Field(description="CSV: item,<factor1>,<factor2>,... (relative path)")
    source: str = Field(description="where they are published, e.g. 'Author (2001), Table 3'")
    rotation: str | None = Field(default=None, description="the published rotation, e.g. oblimin")
    method: str | None = Field(default=None, description="the published extraction, e.g. ml")
    n: int | None = Field(default=None, description="the published sample size")
    note: str = ""

    @field_validator("file", "source", mode="before")
    @classmethod
    def _required(cls, v: Any) -> Any:
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"expected a non-empty string, got {v!r}"[:200])
        return v.strip()

    @field_validator("rotation", "method", mode="before")
    @classmethod
    def _name(cls, v: Any) -> Any:
        return None if v is None else str(_expect(str, v)).strip() or None

    @field_validator("n", mode="before")
    @classmethod
    def _n(cls, v: Any) -> Any:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"expected a positive whole number, got {v!r}"[:200])
        return v

    @field_validator("note", mode="before")
    @classmethod
    def _note(cls, v: Any) -> Any:
        return "" if v is None else str(v)


class InstrumentSpec(Open):
    """An ``instrument.yaml``. Keys not listed here are kept for plugins (``Instrument.extra``)."""

    schema_version: Literal[1] = SPEC_SCHEMA_VERSION
    id: str = Field(description="task id: letters, digits, '-' and '_'")
    name: str
    version: str
    citation: str
    license: LicenseSpec
    item_source: str
    forms: dict[str, str] = Field(description="form name -> item CSV (relative path)")
    response_scales: dict[str, ResponseScaleSpec]
    scales: dict[str, ScaleSpec]
    prompt: PromptSpec
    reverse: Literal["min_plus_max"] = "min_plus_max"
    item_texts: Literal["shipped", "user"] = "shipped"
    scoring_rule: str | None = None
    parser: str = "first_valid_int"
    notes: str = ""
    human_loadings: HumanLoadingsSpec | None = Field(
        default=None, description="published human factor loadings (file, source, ...)"
    )

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        if v != SPEC_SCHEMA_VERSION:
            raise ValueError(
                f"unsupported schema_version {v!r} (this psymetrics reads {SPEC_SCHEMA_VERSION})"
            )
        return v

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v: Any) -> Any:
        _expect(str, v)
        if not v.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"task id {v!r} may hold only letters, digits, '-' and '_'")
        return v

    @field_validator("name", "citation", "item_source", mode="before")
    @classmethod
    def _str(cls, v: Any) -> Any:
        return _expect(str, v)

    @field_validator("version", mode="before")
    @classmethod
    def _ver(cls, v: Any) -> Any:
        return str(_expect((str, int, float), v))

    @field_validator("human_loadings", mode="before")
    @classmethod
    def _loadings(cls, v: Any) -> Any:
        return _optional(dict, v, "expected a mapping {file, source, rotation?, method?, n?}")

    @field_validator("license", "prompt", mode="before")
    @classmethod
    def _mapping(cls, v: Any) -> Any:
        return _expect(dict, v)

    @field_validator("forms", mode="before")
    @classmethod
    def _forms(cls, v: Any) -> Any:
        _expect(dict, v)
        if "original" not in v:
            raise ValueError("must define an 'original' form")
        for k, x in v.items():
            if not isinstance(x, str) or not x.strip():
                raise ValueError(
                    f"form '{k}' must name its item CSV file (a relative path), got "
                    f"{type(x).__name__} {x!r}"[:200]
                )
        return {str(k): str(x) for k, x in v.items()}

    @field_validator("response_scales", mode="before")
    @classmethod
    def _rscales(cls, v: Any) -> Any:
        if not _expect(dict, v):
            raise ValueError("define at least one response scale")
        for name, rs in v.items():
            if not isinstance(rs, dict):
                raise _FieldError(str(name), "expected a mapping")
        return {str(k): x for k, x in v.items()}

    @field_validator("scales", mode="before")
    @classmethod
    def _scales(cls, v: Any) -> Any:
        if not _expect(dict, v):
            raise ValueError("define at least one scale")
        out = {}
        for name, sd in v.items():
            if sd is not None and not isinstance(sd, dict):
                raise _FieldError(str(name), "expected a mapping")
            out[str(name)] = sd or {}
        return out

    @field_validator("reverse", mode="before")
    @classmethod
    def _reverse(cls, v: Any) -> Any:
        if v != "min_plus_max":
            raise ValueError("only 'min_plus_max' (x' = min + max - x) is supported")
        return v

    @field_validator("item_texts", mode="before")
    @classmethod
    def _texts(cls, v: Any) -> Any:
        if v not in ("shipped", "user"):
            raise ValueError(f"expected 'shipped' or 'user', got {v!r}")
        return v

    @field_validator("parser", mode="before")
    @classmethod
    def _parser(cls, v: Any) -> Any:
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"expected a parser name, got {v!r}")
        return v.strip()

    @field_validator("notes", mode="before")
    @classmethod
    def _plain(cls, v: Any) -> Any:
        return "" if v is None else str(v)

    @model_validator(mode="after")
    def _unions(self) -> InstrumentSpec:
        for name, sd in self.scales.items():
            for other in sd.items if isinstance(sd.items, list) else ():
                if other not in self.scales or other == name:
                    raise _FieldError(
                        f"scales.{name}.items",
                        f"unknown scale {other!r} (spec defines: {', '.join(self.scales)})",
                    )
        return self


class ItemRow(Open):
    """One row of an item CSV (cells as text). ``scale``: ';'-separated scale names;
    ``reverse``: 1/0 (or true/false, R); ``flag``: attention_check, filler or empty;
    ``rescale``: a value map after reverse keying, e.g. ``1=1;2=2.5;3=4``; ``question``: the
    item as an open question, for the ``interview`` administration (e.g. "Are you talkative?")."""

    id: str
    text: str = ""
    scale: str = ""
    reverse: bool = False
    response_scale: str = "default"
    flag: Literal["attention_check", "filler"] | None = None
    rescale: str = ""
    question: str = ""

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v: Any) -> Any:
        if not (v or "").strip():
            raise ValueError("empty item id")
        return v.strip()

    @field_validator("reverse", mode="before")
    @classmethod
    def _reverse(cls, v: Any) -> Any:
        raw = (v or "").strip()
        if raw.lower() not in TRUE | FALSE:
            raise ValueError(f"expected 1/0 (or true/false, R), got {raw!r}")
        return raw.lower() in TRUE

    @field_validator("flag", mode="before")
    @classmethod
    def _flag(cls, v: Any) -> Any:
        raw = (v or "").strip()
        if raw and raw not in FLAGS:
            raise ValueError(f"expected one of {sorted(FLAGS)} or empty, got {raw!r}")
        return raw or None

    @field_validator("text", "scale", "rescale", "question", mode="before")
    @classmethod
    def _cell(cls, v: Any) -> Any:
        return (v or "").strip()

    @field_validator("response_scale", mode="before")
    @classmethod
    def _rs(cls, v: Any) -> Any:
        return (v or "").strip() or "default"

    @property
    def scales(self) -> tuple[str, ...]:
        """The scale names of the ``scale`` cell."""
        return tuple(s.strip() for s in self.scale.split(";") if s.strip())


class _FieldError(ValueError):
    """A ValueError that names a sub-field of the value being validated."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _spec_error(path: Path, exc: ValidationError, row: int | None = None) -> SpecError:
    """The first validation error as one SpecError line naming the field."""
    err = exc.errors()[0]
    loc = [str(x) for x in err["loc"]]
    ctx = err.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, _FieldError):
        loc.append(cause.field)
        msg = cause.message
    elif err["type"] == "missing":
        msg = "is required but missing"
    elif err["type"] == "value_error":
        msg = str(cause) if cause is not None else err["msg"]
    elif err["type"] == "extra_forbidden":
        msg = "unknown field"
    else:
        msg = f"{err['msg']}, got {err.get('input')!r}"
    return SpecError(path, msg, row=row, field=".".join(loc) or None)


def validate_spec(path: Path, raw: dict[str, Any]) -> InstrumentSpec:
    """``raw`` (a parsed instrument.yaml) as an ``InstrumentSpec``; SpecError if invalid."""
    for key in ("license", "prompt", "response_scales", "scales", "forms"):
        if raw.get(key, ...) is None:
            raise SpecError(path, "is required but missing", field=key)
    try:
        return InstrumentSpec.model_validate(raw)
    except ValidationError as exc:
        raise _spec_error(path, exc) from None


def validate_row(csv_path: Path, lineno: int, row: Mapping[str, Any]) -> ItemRow:
    """One item CSV row as an ``ItemRow``; SpecError naming the line and field if invalid."""
    try:
        return ItemRow.model_validate({k: v for k, v in row.items() if k is not None})
    except ValidationError as exc:
        raise _spec_error(csv_path, exc, row=lineno) from None
