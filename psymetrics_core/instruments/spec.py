"""Load and validate instrument specs: an ``instrument.yaml`` plus item CSV file(s).

Every error is a ``SpecError`` naming the file, the CSV line and the field at fault. The spec
and each CSV row are validated by the typed models of ``records.instrument`` (``psym schema
instrument`` prints their JSON Schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.reading import InputError, load_yaml, read_csv, regular_file
from psymetrics_core.base.types import Instrument, Item, Option, ResponseScale, ScaleDef
from psymetrics_core.base.versions import SPEC_SCHEMA_VERSION
from psymetrics_core.instruments.loadings import parse_human_loadings
from psymetrics_core.instruments.norms import parse_norms
from psymetrics_core.instruments.schema import validate_row, validate_spec
from psymetrics_core.instruments.scoring import check_scale_rescales, item_rescale
from psymetrics_core.instruments.template import compiled_template

__all__ = ["load_instrument", "DEFAULT_TEMPLATE", "SCHEMA_VERSION", "find_spec_file"]

SCHEMA_VERSION = SPEC_SCHEMA_VERSION

DEFAULT_TEMPLATE = """{{ instruction }}
Read the statement below carefully and select ONE of the listed options and start your \
answer with a single digit.
Statement: {{ item }}
Answer options:
{% for o in options %}{{ o.value }} {{ o.label }}
{% endfor %}Your answer{{ eos }}"""

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


def load_instrument(path: str | Path, reuse: bool = False) -> Instrument:
    """Load and validate the instrument spec at ``path``.

    A spec with ``item_texts: user`` ships its key (ids, scales, reverse keying) but not the item
    texts; ``psymetrics_core.instruments.item_texts.apply_item_texts`` adds them from a user's file.

    ``reuse`` is accepted for compatibility and has no effect: every spec is read and validated.
    """
    spec_path = find_spec_file(path)
    raw = load_yaml(spec_path, what="instrument spec")
    if not isinstance(raw, dict):
        raise SpecError(spec_path, "expected a mapping at the top level")
    return _build(spec_path, raw)


def _build(path: Path, raw: dict[str, Any]) -> Instrument:
    """The Instrument of a parsed spec, validated by ``records.instrument.InstrumentSpec``."""

    spec = validate_spec(path, raw)
    rscales = {
        name: ResponseScale(
            name,
            rs.min,
            rs.max,
            tuple(Option(rs.min + i, lab) for i, lab in enumerate(rs.labels)),
            rs.instruction,
            rs.agree,
        )
        for name, rs in spec.response_scales.items()
    }
    scales = {
        name: ScaleDef(
            name,
            sd.method,
            sd.description,
            include_all=sd.items == "all",
            of_scales=tuple(sd.items) if isinstance(sd.items, list) else (),
            centre=sd.centre,
            invert=sd.invert,
            higher_is=sd.higher_is,
            rescale=tuple(sd.rescale.items()),
            norms=parse_norms(path, name, sd.norms),
            adjectives=tuple(sd.adjectives),
        )
        for name, sd in spec.scales.items()
    }
    template = spec.prompt.template or DEFAULT_TEMPLATE
    _check_template(path, template)
    forms: dict[str, list[Item]] = {}
    for form, rel in spec.forms.items():
        csv_path = _form_file(path, form, rel)
        forms[form] = _items(csv_path, rscales, scales, spec.item_texts == "shipped")
    _check_forms_agree(path, forms)
    scales = check_scale_rescales(path, scales, forms["original"], rscales)
    for sname, sdef in scales.items():
        if sdef.include_all:
            continue
        for need in sdef.of_scales or (sname,):
            if not any(need in it.scales for it in forms["original"]):
                raise SpecError(path, "no item belongs to this scale", field=f"scales.{need}")

    scoring_rule = spec.scoring_rule or _describe_scoring(scales, forms["original"])
    human = spec.human_loadings
    loadings = None if human is None else parse_human_loadings(path, human, forms["original"])
    return Instrument(
        id=spec.id,
        name=spec.name,
        version=spec.version,
        citation=spec.citation.strip(),
        license_status=spec.license.status,
        redistributable=spec.license.redistributable,
        item_source=spec.item_source.strip(),
        scoring_rule=str(scoring_rule).strip(),
        response_scales=rscales,
        scales=scales,
        forms=forms,
        prompt_template=template,
        instruction=spec.prompt.instruction.strip(),
        system_prompt=spec.prompt.system,
        eos=spec.prompt.eos,
        parser=spec.parser,
        notes=spec.notes.strip(),
        texts_shipped=spec.item_texts == "shipped",
        spec_path=path,
        form_files={form: str(rel) for form, rel in spec.forms.items()},
        extra={k: v for k, v in raw.items() if k not in _REQUIRED_TOP},
        human_loadings=loadings,
    )


def _form_file(path: Path, form: str, rel: str) -> Path:
    """The item CSV of ``form``: a regular file (not a directory, device, FIFO or /proc
    entry); otherwise one error naming the spec and its ``forms.FORM`` field."""
    csv_path = path.parent / rel
    try:
        regular_file(csv_path, "CSV file of items")
    except FileNotFoundError:
        raise SpecError(path, f"item file {rel!r} not found", field=f"forms.{form}") from None
    except OSError as exc:
        why = f"cannot read {rel!r} ({exc.strerror or exc})"
        raise SpecError(path, why, field=f"forms.{form}") from None
    except InputError as exc:
        why = str(exc).removeprefix(f"{csv_path}: ")
        raise SpecError(path, f"{rel!r}: {why}", field=f"forms.{form}") from None
    return csv_path


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
    """One CSV row, typed by ``records.instrument.ItemRow``, checked against the spec."""

    r = validate_row(csv_path, lineno, row)
    if r.id in seen:
        raise SpecError(csv_path, f"duplicate item id {r.id!r}", row=lineno, field="id")
    seen.add(r.id)
    if not r.text and texts_required:
        raise SpecError(csv_path, "empty item text", row=lineno, field="text")
    for s in r.scales:
        if s not in scales:
            raise SpecError(
                csv_path,
                f"unknown scale {s!r} (spec defines: {', '.join(scales)})",
                row=lineno,
                field="scale",
            )
    if not r.scales and r.flag is None:
        raise SpecError(
            csv_path,
            "item belongs to no scale; give a scale or flag it attention_check/filler",
            row=lineno,
            field="scale",
        )
    if r.response_scale not in rscales:
        raise SpecError(
            csv_path,
            f"unknown response scale {r.response_scale!r} (spec defines: {', '.join(rscales)})",
            row=lineno,
            field="response_scale",
        )
    rescale = item_rescale(csv_path, lineno, r.rescale, rscales[r.response_scale])
    return Item(
        r.id,
        r.text,
        r.scales,
        r.reverse,
        r.response_scale,
        r.flag,
        rescale,
        question=r.question or None,
    )


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


def _check_template(path: Path, template: str) -> None:

    try:
        compiled_template(template)  # compiled once: rendering the prompts reuses it
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
