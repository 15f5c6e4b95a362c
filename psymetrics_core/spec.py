"""Load and validate instrument specs: an ``instrument.yaml`` plus item CSV file(s).

Every error is a ``SpecError`` naming the file, the CSV line and the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import SpecError
from .norms import parse_norms
from .safe_io import load_yaml, read_csv
from .spec_scoring import check_scale_rescales, item_rescale, scale_options
from .types import Instrument, Item, Option, ResponseScale, ScaleDef

__all__ = ["load_instrument", "DEFAULT_TEMPLATE", "SCHEMA_VERSION", "find_spec_file"]

SCHEMA_VERSION = 1

DEFAULT_TEMPLATE = """{{ instruction }}
Read the statement below carefully and select ONE of the listed options and start your \
answer with a single digit.
Statement: {{ item }}
Answer options:
{% for o in options %}{{ o.value }} {{ o.label }}
{% endfor %}Your answer{{ eos }}"""

_TRUE = {"1", "true", "yes", "y", "r", "reverse", "reversed"}
_FALSE = {"", "0", "false", "no", "n"}
_FLAGS = {"attention_check", "filler"}
_METHODS = {"mean", "sum"}
_REQUIRED_TOP = (
    "id",
    "name",
    "version",
    "citation",
    "license",
    "item_source",
    "forms",
    "response_scales",
    "scales",
    "prompt",
)


def find_spec_file(path: str | Path) -> Path:
    """Resolve ``path`` (a YAML file or a directory holding ``instrument.yaml``) to the file."""
    p = Path(path)
    if p.is_dir():
        p = p / "instrument.yaml"
    if not p.is_file():
        raise SpecError(p, "no such instrument spec (expected an instrument.yaml file)")
    return p


def load_instrument(path: str | Path) -> Instrument:
    """Load and validate the instrument spec at ``path``.

    A spec with ``item_texts: user`` ships its key (ids, scales, reverse keying) but not the item
    texts; ``psymetrics_core.item_texts.apply_item_texts`` adds them from a user's file.
    """
    spec_path = find_spec_file(path)
    raw = load_yaml(spec_path, what="instrument spec")
    if not isinstance(raw, dict):
        raise SpecError(spec_path, "expected a mapping at the top level")
    return _build(spec_path, raw)


def _req(
    path: Path, data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = ""
) -> Any:
    name = f"{where}{key}"
    if key not in data or data[key] is None:
        raise SpecError(path, "is required but missing", field=name)
    value = data[key]
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SpecError(path, f"expected {want}, got {type(value).__name__} {value!r}", field=name)
    return value


def _build(path: Path, raw: dict[str, Any]) -> Instrument:
    version = raw.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise SpecError(
            path,
            f"unsupported schema_version {version!r} (this psymetrics reads {SCHEMA_VERSION})",
            field="schema_version",
        )
    for key in _REQUIRED_TOP:
        if key not in raw:
            raise SpecError(path, "is required but missing", field=key)
    inst_id = str(_req(path, raw, "id", str))
    if not inst_id.replace("-", "").replace("_", "").isalnum():
        raise SpecError(
            path, f"task id {inst_id!r} may hold only letters, digits, '-' and '_'", field="id"
        )
    lic = _req(path, raw, "license", dict)
    license_status = str(_req(path, lic, "status", str, "license."))
    redistributable = lic.get("redistributable")
    if redistributable is not None and not isinstance(redistributable, bool):
        raise SpecError(path, "expected true, false or null", field="license.redistributable")

    rscales = _response_scales(path, _req(path, raw, "response_scales", dict))
    scales = _scales(path, _req(path, raw, "scales", dict))
    prompt = _req(path, raw, "prompt", dict)
    instruction = str(_req(path, prompt, "instruction", str, "prompt."))
    template = prompt.get("template")
    if template is not None and not isinstance(template, str):
        raise SpecError(
            path,
            f"expected a string (a Jinja template), got {type(template).__name__}",
            field="prompt.template",
        )
    template = template or DEFAULT_TEMPLATE
    _check_template(path, template)
    reverse_rule = raw.get("reverse", "min_plus_max")
    if reverse_rule != "min_plus_max":
        raise SpecError(
            path, "only 'min_plus_max' (x' = min + max - x) is supported", field="reverse"
        )

    forms_raw = _req(path, raw, "forms", dict)
    if "original" not in forms_raw:
        raise SpecError(path, "must define an 'original' form", field="forms")
    item_texts = raw.get("item_texts", "shipped")
    if item_texts not in ("shipped", "user"):
        raise SpecError(
            path, f"expected 'shipped' or 'user', got {item_texts!r}", field="item_texts"
        )
    forms: dict[str, list[Item]] = {}
    for form, rel in forms_raw.items():
        csv_path = path.parent / str(rel)
        forms[str(form)] = _items(csv_path, rscales, scales, item_texts == "shipped")
    _check_forms_agree(path, forms)
    scales = check_scale_rescales(path, scales, forms["original"], rscales)
    for sname, sdef in scales.items():
        if sdef.include_all:
            continue
        for need in sdef.of_scales or (sname,):
            if not any(need in it.scales for it in forms["original"]):
                raise SpecError(path, "no item belongs to this scale", field=f"scales.{need}")

    scoring_rule = raw.get("scoring_rule") or _describe_scoring(scales, forms["original"])
    return Instrument(
        id=inst_id,
        name=str(_req(path, raw, "name", str)),
        version=str(_req(path, raw, "version", (str, int, float))),
        citation=str(_req(path, raw, "citation", str)).strip(),
        license_status=license_status,
        redistributable=redistributable,
        item_source=str(_req(path, raw, "item_source", str)).strip(),
        scoring_rule=str(scoring_rule).strip(),
        response_scales=rscales,
        scales=scales,
        forms=forms,
        prompt_template=template,
        instruction=instruction.strip(),
        system_prompt=prompt.get("system"),
        eos=str(prompt.get("eos", ":")),
        parser=_parser_name(path, raw.get("parser", "first_valid_int")),
        notes=str(raw.get("notes", "")).strip(),
        texts_shipped=item_texts == "shipped",
        spec_path=path,
        extra={k: v for k, v in raw.items() if k not in _REQUIRED_TOP},
    )


def _response_scales(path: Path, raw: dict[str, Any]) -> dict[str, ResponseScale]:
    out: dict[str, ResponseScale] = {}
    if not raw:
        raise SpecError(path, "define at least one response scale", field="response_scales")
    for name, rs in raw.items():
        where = f"response_scales.{name}."
        if not isinstance(rs, dict):
            raise SpecError(path, "expected a mapping", field=where[:-1])
        lo = _req(path, rs, "min", int, where)
        hi = _req(path, rs, "max", int, where)
        if hi <= lo:
            raise SpecError(
                path, f"max ({hi}) must be greater than min ({lo})", field=where + "max"
            )
        labels = _req(path, rs, "labels", list, where)
        if len(labels) != hi - lo + 1:
            raise SpecError(
                path,
                f"expected {hi - lo + 1} labels (one per value {lo}..{hi}), got {len(labels)}",
                field=where + "labels",
            )
        options = tuple(Option(lo + i, str(lab)) for i, lab in enumerate(labels))
        out[str(name)] = ResponseScale(str(name), lo, hi, options, rs.get("instruction"))
    return out


def _scales(path: Path, raw: dict[str, Any]) -> dict[str, ScaleDef]:
    out: dict[str, ScaleDef] = {}
    if not raw:
        raise SpecError(path, "define at least one scale", field="scales")
    for name, sd in raw.items():
        sd = sd or {}
        if not isinstance(sd, dict):
            raise SpecError(path, "expected a mapping", field=f"scales.{name}")
        method = sd.get("method", "mean")
        if method not in _METHODS:
            raise SpecError(
                path,
                f"method must be one of {sorted(_METHODS)}, got {method!r}",
                field=f"scales.{name}.method",
            )
        items = sd.get("items")
        union: tuple[str, ...] = ()
        if isinstance(items, list) and items and all(isinstance(x, str) for x in items):
            union = tuple(items)
        elif items not in (None, "all"):
            raise SpecError(
                path,
                "expected 'all' or a list of scale names (membership is the CSV's 'scale' "
                f"column), got {items!r}",
                field=f"scales.{name}.items",
            )
        out[str(name)] = ScaleDef(
            str(name),
            method,
            str(sd.get("description", "")),
            include_all=items == "all",
            **scale_options(path, str(name), sd),
            of_scales=union,
            norms=parse_norms(path, str(name), sd.get("norms")),
        )
    for name, sdef in out.items():
        for other in sdef.of_scales:
            if other not in out or other == name:
                raise SpecError(
                    path,
                    f"unknown scale {other!r} (spec defines: {', '.join(out)})",
                    field=f"scales.{name}.items",
                )
    return out


def _items(
    csv_path: Path,
    rscales: dict[str, ResponseScale],
    scales: dict[str, ScaleDef],
    texts_required: bool,
) -> list[Item]:
    if not csv_path.is_file():
        raise SpecError(csv_path, "item file not found")
    table = read_csv(csv_path, what="item file")
    cols = table.columns
    for col in ("id", "text", "scale", "reverse") if texts_required else ("id", "scale", "reverse"):
        if col not in cols:
            raise SpecError(
                csv_path,
                f"missing column '{col}' (columns are: {', '.join(cols) or 'none'})",
                row=1,
            )
    items: list[Item] = []
    seen: set[str] = set()
    for lineno, row in table.rows:
        items.append(_item(csv_path, lineno, row, rscales, scales, seen, texts_required))
    if not items:
        raise SpecError(csv_path, "holds no items")
    return items


def _item(
    csv_path: Path,
    lineno: int,
    row: Mapping[str, str | None],
    rscales: dict[str, ResponseScale],
    scales: dict[str, ScaleDef],
    seen: set[str],
    texts_required: bool = True,
) -> Item:
    def cell(name: str) -> str:
        return (row.get(name) or "").strip()

    item_id = cell("id")
    if not item_id:
        raise SpecError(csv_path, "empty item id", row=lineno, field="id")
    if item_id in seen:
        raise SpecError(csv_path, f"duplicate item id {item_id!r}", row=lineno, field="id")
    seen.add(item_id)
    text = cell("text")
    if not text and texts_required:
        raise SpecError(csv_path, "empty item text", row=lineno, field="text")
    rev = cell("reverse").lower()
    if rev not in _TRUE | _FALSE:
        raise SpecError(
            csv_path,
            f"expected 1/0 (or true/false, R), got {cell('reverse')!r}",
            row=lineno,
            field="reverse",
        )
    flag = cell("flag") or None
    if flag is not None and flag not in _FLAGS:
        raise SpecError(
            csv_path,
            f"expected one of {sorted(_FLAGS)} or empty, got {flag!r}",
            row=lineno,
            field="flag",
        )
    member = tuple(s.strip() for s in cell("scale").split(";") if s.strip())
    for s in member:
        if s not in scales:
            raise SpecError(
                csv_path,
                f"unknown scale {s!r} (spec defines: {', '.join(scales)})",
                row=lineno,
                field="scale",
            )
    if not member and flag is None:
        raise SpecError(
            csv_path,
            "item belongs to no scale; give a scale or flag it attention_check/filler",
            row=lineno,
            field="scale",
        )
    rs = cell("response_scale") or "default"
    if rs not in rscales:
        raise SpecError(
            csv_path,
            f"unknown response scale {rs!r} (spec defines: {', '.join(rscales)})",
            row=lineno,
            field="response_scale",
        )
    rescale = item_rescale(csv_path, lineno, cell("rescale"), rscales[rs])
    return Item(item_id, text, member, rev in _TRUE, rs, flag, rescale)


def _check_forms_agree(path: Path, forms: dict[str, list[Item]]) -> None:
    ref = {it.id: it for it in forms["original"]}
    for form, items in forms.items():
        if form == "original":
            continue
        ids = {it.id for it in items}
        if ids != set(ref):
            diff = sorted(ids ^ set(ref))
            raise SpecError(
                path,
                f"form '{form}' must have the same item ids as 'original' "
                f"(differ: {', '.join(diff[:5])})",
                field=f"forms.{form}",
            )
        for it in items:
            o = ref[it.id]
            if (it.scales, it.reverse, it.flag, it.rescale) != (
                o.scales,
                o.reverse,
                o.flag,
                o.rescale,
            ):
                raise SpecError(
                    path,
                    f"item {it.id} of form '{form}' is keyed differently from the original",
                    field=f"forms.{form}",
                )


def _parser_name(path: Path, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(path, f"expected a parser name, got {value!r}", field="parser")
    return value.strip()


def _check_template(path: Path, template: str) -> None:
    import jinja2

    try:
        jinja2.Environment().parse(template)
    except jinja2.TemplateSyntaxError as exc:
        raise SpecError(
            path, f"line {exc.lineno} of the template: {exc.message}", field="prompt.template"
        ) from None


def _describe_scoring(scales: dict[str, ScaleDef], items: list[Item]) -> str:
    parts = []
    for name, sdef in scales.items():
        wanted = set(sdef.of_scales or (name,))
        members = [
            it for it in items if it.scored and (sdef.include_all or wanted & set(it.scales))
        ]
        ids = ", ".join(it.id + ("R" if it.reverse else "") for it in members)
        extra = " minus the mean of all scored items (MRAT)" if sdef.centre == "mrat" else ""
        extra += ", each item inverted (lo + hi - x)" if sdef.invert else ""
        parts.append(f"{name} = {sdef.method} of items {ids}{extra}")
    return "Reverse-keyed items (R) are recoded as min + max - x. " + "; ".join(parts) + "."
