"""Validate run records with pydantic-core alone: the record models as typed-dict core schemas.

``psym eval`` validates every record it writes. Importing pydantic and building the models'
schemas costs about a tenth of a second per process, a fifth of a cached re-run, while the
validation itself is pydantic-core's. So the models of this package stay the definition, and
``core_schemas.json`` beside this module holds them compiled to pydantic-core *typed-dict*
schemas: the same validators, field by field, with each model a typed dict whose fields with a
default are optional. Validating a record with it and serializing the result in JSON mode gives
what ``Model.model_validate(record).model_dump(mode="json", exclude_unset=True)`` gives, and
the same errors (tests/test_records_schema.py compares both on every kind of record).

The file is generated: ``python -m psymetrics_core.records.core_check`` rewrites it from the
models, and a test fails while it is stale. It names the pydantic-core version it was made
with; under any other version the schemas are compiled from the models in the process instead
(pydantic is imported then), since another pydantic-core may read a schema differently.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["CORE_SCHEMA_FILE", "check", "compile_core_schemas", "main"]

CORE_SCHEMA_FILE = Path(__file__).with_name("core_schemas.json")

# core schema types copied as they are (their sub-schemas converted); anything else is refused
# at generation, so a model using a feature not handled here fails the generator, not a run
_PLAIN = {"any", "bool", "dict", "float", "int", "list", "literal", "nullable", "str", "tuple"}
_SCHEMA_KEYS = {"schema", "items_schema", "keys_schema", "values_schema", "extras_schema"}
_DROPPED = {"metadata", "ref"}  # JSON Schema hints and model references: no effect on values


def check(name: str, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` validated against the record ``name`` (results, samples or judge) and
    serialized as JSON-able values; raises ``pydantic_core.ValidationError``."""
    validator, serializer = _compiled(name)
    out: dict[str, Any] = serializer.to_python(validator.validate_python(record), mode="json")
    return out


@cache
def _compiled(name: str) -> tuple[Any, Any]:
    from pydantic_core import SchemaSerializer, SchemaValidator

    schema = _core_schemas()["records"][name]
    return SchemaValidator(schema), SchemaSerializer(schema)


@cache
def _core_schemas() -> dict[str, Any]:
    """The compiled schemas: from the file when this pydantic-core made it, else made now."""
    import pydantic_core

    kept: dict[str, Any] = json.loads(CORE_SCHEMA_FILE.read_text(encoding="utf-8"))
    if kept.get("pydantic_core") == pydantic_core.__version__:
        return kept
    return compile_core_schemas()


def compile_core_schemas() -> dict[str, Any]:
    """Every record model's core schema in typed-dict form, with the pydantic-core version
    (imports pydantic and the models)."""
    import pydantic_core

    from psymetrics_core.records import RECORD_MODELS, record_model

    records: dict[str, Any] = {}
    for name, (_, model) in RECORD_MODELS.items():
        cls = record_model(name)
        cls.model_rebuild()  # the models defer their schema build (records.base)
        records[name] = _typed(cls.__pydantic_core_schema__, model)
    return {"pydantic_core": pydantic_core.__version__, "records": records}


def _typed(schema: dict[str, Any], where: str) -> dict[str, Any]:
    kind = schema["type"]
    if kind == "model":
        return _typed_dict(schema, where)
    if kind == "union":
        return {"type": "union", "choices": [_choice(c, where) for c in schema["choices"]]}
    if kind not in _PLAIN:
        raise ValueError(f"{where}: core schema type {kind!r} is not handled by core_check")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key in _SCHEMA_KEYS and isinstance(value, list):  # a tuple's positional items
            out[key] = [_typed(v, where) for v in value]
        elif key in _SCHEMA_KEYS:
            out[key] = _typed(value, where)
        else:
            out[key] = value
    return out


def _choice(choice: Any, where: str) -> Any:
    if isinstance(choice, tuple):  # (schema, label)
        return [_typed(choice[0], where), choice[1]]
    return _typed(choice, where)


def _typed_dict(schema: dict[str, Any], where: str) -> dict[str, Any]:
    config = schema.get("config", {})
    unknown = set(config) - {"extra_fields_behavior", "title"}
    inner = schema["schema"]
    if unknown or inner["type"] != "model-fields" or inner.get("computed_fields"):
        raise ValueError(f"{where}: model options {sorted(unknown)} are not handled by core_check")
    fields: dict[str, Any] = {}
    for name, field in inner["fields"].items():
        if set(field) - {"type", "schema", "metadata"}:  # aliases, exclusions, ...
            raise ValueError(f"{where}.{name}: field options are not handled by core_check")
        value = field["schema"]
        # a field with a default is optional: left out, it stays out (exclude_unset)
        required = value["type"] != "default"
        fields[name] = {
            "type": "typed-dict-field",
            "schema": _typed(value if required else value["schema"], f"{where}.{name}"),
            "required": required,
        }
    out: dict[str, Any] = {"type": "typed-dict", "fields": fields}
    if "extra_fields_behavior" in config:
        out["extra_behavior"] = config["extra_fields_behavior"]
    return out


def main() -> None:
    """Rewrite ``core_schemas.json`` from the record models."""
    # not sorted: the order of a typed dict's fields is the order of a record's keys
    text = json.dumps(compile_core_schemas(), indent=1) + "\n"
    CORE_SCHEMA_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {CORE_SCHEMA_FILE}")


if __name__ == "__main__":
    main()
