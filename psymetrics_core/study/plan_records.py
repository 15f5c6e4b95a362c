"""The typed lines of a plan file and of a shard's ``shard.json``, and their bounded reading.

A plan (``psym plan``) is JSON lines: a header (``PlanHeader``: format, whole-plan hash,
settings, versions) and one ``UnitRecord`` per unit. Every field is typed and bounded; a line
with a field these records do not declare is refused (a unit's hash covers exactly the
declared fields, so an unknown field could only be an edit). ``shard.json`` is a
``ShardRecord``. Files are read through the bounded readers (``base.reading``) after
``base.regular`` refused devices, FIFOs, directories and procfs files, so every damaged
file ends in one ``PsymError`` line naming the file, the line and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, ValidationError, field_validator

from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.models import Strict
from psymetrics_core.base.reading import InputError, load_json, parse_json
from psymetrics_core.base.redaction import redact, url_secrets
from psymetrics_core.base.regular import require_regular_file

__all__ = [
    "PlanHeader",
    "SettingsRecord",
    "UnitRecord",
    "ShardRecord",
    "plan_error",
    "parse_line",
    "validated",
    "secret_args",
    "read_shard_file",
]

PLAN_FORMAT = 1
_BIG = 2**63 - 1  # integers beyond int64 are refused (a seed, an index, a count)
Hash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Name = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
Count = Annotated[int, Field(ge=0, le=_BIG)]
Positive = Annotated[int, Field(ge=1, le=_BIG)]
Seed = Annotated[int, Field(ge=-_BIG, le=_BIG)]
Args = dict[Name, Annotated[str, StringConstraints(max_length=100_000)]]


class _StrictTyped(Strict):
    """No type coercion: a string is not a number, a number not a string."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


class SettingsRecord(_StrictTyped):
    """The header's ``settings``: the ``psym eval`` arguments every unit runs with."""

    tasks: list[Name] = Field(min_length=1)
    model: Name
    model_args: Args
    mode: Name
    seed: Seed
    limit: Positive | None
    form: Name
    max_new_tokens: Positive | None
    temperature: float
    conditions: list[Name]
    design: Name
    repeats: Positive
    norm_group: Args
    task_options: dict[Name, Args]
    item_files: Args
    judge_model: Name | None
    judge_model_args: Args
    judge_max_new_tokens: Positive | None
    # an interview plan's --impute (absent unless given: other plans' hashes are unchanged)
    impute: Literal["midpoint"] | None = None
    # an interview plan's --judge-batch (absent unless given, as --impute)
    judge_batch: Positive | None = None
    # a population plan's (absent from the plans of other studies: their hashes are unchanged)
    population: Name | None = None
    persona_template: Name = "jung"
    sample: Positive | None = None


class VersionsRecord(_StrictTyped):
    """The header's ``versions``: what produced the plan (part of every unit's hash)."""

    psymetrics: Name
    instruments: dict[Name, Name]
    item_files: dict[Name, Hash]
    population: Hash | None = None  # sha256 of the population file (population plans only)
    persona_template: Hash | None = None  # sha256 of the persona template's text


class PlanHeader(_StrictTyped):
    """The first line of a plan."""

    psym_plan: Literal[1]
    hash: Hash
    settings: dict[str, Any]  # validated as ``SettingsRecord`` (its own field names)
    versions: VersionsRecord


class UnitRecord(_StrictTyped):
    """One unit line: exactly these fields (``Unit``)."""

    index: Count
    model: Name
    task: Name
    cell: Name
    repeat: Count
    seed: Seed
    hash: Hash


class ShardRecord(_StrictTyped):
    """``shard.json``: which plan, which shard (i of N), its units' hashes, complete or not."""

    plan: Hash
    shard: list[Positive] = Field(min_length=2, max_length=2)  # [i, N]
    units: list[Hash]
    complete: bool

    @field_validator("shard")
    @classmethod
    def _i_of_n(cls, value: list[int]) -> list[int]:
        if value[0] > value[1]:
            raise ValueError(f"expected [i, N] with i <= N, got {value}")
        n = bound("--shard N")
        if not n.holds(value[1]):
            raise ValueError(f"expected N in {n.span} (the bound of --shard i/N)")
        return value


def plan_error(where: str, exc: ValidationError, prefix: str = "") -> PsymError:
    """One line for the first error of ``exc``: ``where``, the field and what was expected
    (the offending value is never echoed: it may be huge or a secret)."""
    err = exc.errors()[0]
    field = ".".join([prefix, *(str(x) for x in err["loc"])] if prefix else map(str, err["loc"]))
    if err["type"] == "missing":
        msg = "missing (required)"
    elif err["type"] == "extra_forbidden":
        msg = "not a field of this line (an edited plan?)"
    else:
        msg = f"{err['msg']} (got {type(err.get('input')).__name__})".replace("\n", " ")
    return PsymError(f"{where}, field '{field or '(the line)'}': {msg}")


def parse_line(text: str, path: Path, line: int) -> dict[str, Any]:
    """One JSON object line of ``path`` (nesting, NaN and huge numbers refused)."""
    try:
        row = parse_json(text, path, line=line)
    except ValueError:  # an integer of more than 4,300 digits (PsymErrors pass through)
        raise InputError(f"{path}, line {line}: invalid JSON (a number too long)") from None
    if not isinstance(row, dict):
        raise PsymError(f"{path}, line {line}: expected a JSON object")
    return row


def validated(model: type[Any], data: Any, where: str, prefix: str = "") -> Any:
    """``data`` validated as ``model``; one ``plan_error`` line otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise plan_error(where, exc, prefix) from None


def secret_args(args: dict[str, str]) -> list[str]:
    """Keys of ``args`` that hold a secret: a secret-looking name (``api_key``, ``token``, ...)
    or a URL with credentials (``https://user:KEY@host``, ``?api_key=...``)."""
    named = {k for k, v in redact(args).items() if v == "***" and args[k] != "***"}
    in_url = {k for k, v in args.items() if "://" in v and url_secrets(v)}
    return sorted(named | in_url)


def read_shard_file(path: Path) -> ShardRecord:
    """``shard.json`` at ``path``, typed; one line naming the file and field otherwise."""
    require_regular_file(path, what="shard record (shard.json)")
    try:
        data = load_json(path, what="shard record")
    except ValueError:  # an integer of more than 4,300 digits
        raise InputError(f"{path}: invalid JSON (a number too long)") from None
    if not isinstance(data, dict):
        raise PsymError(f"{path}: expected a JSON object (a shard record)")
    return validated(ShardRecord, data, str(path))  # type: ignore[no-any-return]
