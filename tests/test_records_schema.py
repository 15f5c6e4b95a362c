"""One schema for run records: ``psym schema`` prints it, every writer validates against it,
and representative runs (questionnaire generate and logprob, a condition grid, free-text and
judged tasks) validate against the printed JSON Schema (checked with ``jsonschema``)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import jsonschema
import pytest
from behaviour_fakes import ScriptedBackend

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.base.types import Completion
from psymetrics_core.cli import main
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.writer import RecordError, SampleWriter, write_results


def _schema(name: str, capsys) -> dict:
    main(["schema", name])
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


class _Backend:
    """Unit-test backend: a value fixed by (prompt text, seed); logprobs favour that value."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted"}

    def _value(self, p, settings) -> int:
        stmt = re.search(r"Statement: (.*)", p.text)
        key = f"{stmt.group(1) if stmt else p.text}:{settings.seed}".encode()
        return sorted(o.value for o in p.options)[hashlib.sha256(key).digest()[0] % len(p.options)]

    def generate(self, prompts, settings, progress=None):
        return [Completion(text=str(self._value(p, settings))) for p in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        out = []
        for p in prompts:
            v = self._value(p, settings)
            lp = tuple(math.log(0.7 if o.value == v else 0.3 / (len(p.options) - 1))
                       for o in p.options)  # fmt: skip
            out.append(Completion(option_logprobs=lp))
        return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("records")
    _record_runs(base, Session())
    return [base / n for n in ("gen", "grid", "letters", "advice")]


def _record_runs(base: Path, session: Session) -> None:
    # questionnaire, generate, with an SR2K rescaled item and inverted scales
    evaluate(["sr2k"], backend=_Backend(), output=base / "gen", session=session)
    # logprob mode, a 2 x 2 condition grid with repeats, two instruments
    grid = ["original", "reversed-options", "changed-eos"]
    evaluate(["bfi", "asi"], backend=_Backend(), mode="logprob", limit=6, repeats=2,
             conditions=grid, output=base / "grid", session=session)  # fmt: skip
    # a free-text task scored from its text and a judged task (judge.jsonl)
    letter = "He is a brilliant, exceptional leader and a warm, caring person."
    evaluate(["refletter"], backend=ScriptedBackend(lambda t: letter), limit=4,
             output=base / "letters", session=session)  # fmt: skip

    def advice(text: str) -> str:
        if text.startswith("You are an expert judge"):
            return '{"explanation": "takes it", "option": "yes"}'
        return "You should do it."

    evaluate(
        ["moral-advice"], backend=ScriptedBackend(advice), output=base / "advice", session=session
    )


def test_every_record_validates_against_the_printed_schema(runs, capsys):
    results, samples, judge = (_schema(n, capsys) for n in ("results", "samples", "judge"))
    n_samples = n_judge = 0
    for run in runs:
        res = json.loads((run / "results.json").read_text())
        jsonschema.validate(res, results)
        assert res["schema_version"] == 1
        for line in _lines(run / "samples.jsonl"):
            jsonschema.validate(line, samples)
            n_samples += 1
        if (run / "judge.jsonl").is_file():
            for line in _lines(run / "judge.jsonl"):
                jsonschema.validate(line, judge)
                n_judge += 1
    assert n_samples > 50 and n_judge == 5


def test_questionnaire_samples_carry_keyed_values_as_scored(runs, fresh_plugins):
    from psymetrics_core.instruments.scoring import keyed_values

    inst = fresh_plugins.get_instrument("sr2k")
    items = {it.id: it for it in inst.items}
    lines = _lines(runs[0] / "samples.jsonl")
    res = json.loads((runs[0] / "results.json").read_text())
    for line in lines:
        assert line["keyed"] == keyed_values(inst, "original", items[line["item"]], line["answer"])
    # every scale score of results.json is the mean of the recorded keyed values
    for scale, entry in res["tasks"]["sr2k"]["scales"].items():
        vals = [x["keyed"][scale] for x in lines if scale in x["keyed"]]
        assert entry["score"] == pytest.approx(sum(vals) / len(vals)), scale
    # free-text samples carry no keyed values
    assert all(x.get("keyed") is None for x in _lines(runs[2] / "samples.jsonl"))


def test_writers_refuse_records_that_drift(runs, tmp_path):
    good = json.loads((Path(__file__).parent / "data" / "results_minimal.json").read_text())
    write_results(tmp_path / "ok" / "results.json", good)
    with pytest.raises(RecordError, match="field 'surprise'"):
        write_results(tmp_path / "bad" / "results.json", {**good, "surprise": 1})
    assert not (tmp_path / "bad" / "results.json").exists()
    task = good["tasks"]["toy"]
    # a task entry whose typed fields drift is refused (extra fields are allowed: the aggregate
    # hook is a plugin extension point, e.g. the 16-type test adds its type and role)
    with pytest.raises(RecordError, match="tasks.toy"):
        write_results(tmp_path / "bad" / "results.json",
                      {**good, "tasks": {"toy": {**task, "n_items": "many"}}})  # fmt: skip
    write_results(tmp_path / "extra" / "results.json",
                  {**good, "tasks": {"toy": {**task, "type": "INTJ-A"}}})  # fmt: skip
    sample = _lines(runs[0] / "samples.jsonl")[0]
    w = SampleWriter(tmp_path / "samples.jsonl")
    w.write(sample)
    with pytest.raises(RecordError, match="field 'keyed"):
        w.write({**sample, "keyed": "high"})
    with pytest.raises(RecordError, match="field 'answered'"):
        w.write({**sample, "answered": True})
    w.close()
    assert len(_lines(tmp_path / "samples.jsonl")) == 1


def test_schema_command(capsys):
    inst = _schema("instrument", capsys)
    assert {"id", "scales", "response_scales", "forms"} <= set(inst["properties"])
    samples = _schema("samples", capsys)
    assert "keyed" in samples["properties"] and "schema_version" in samples["properties"]
    with pytest.raises(SystemExit):
        main(["schema", "nope"])
    assert "nope" in capsys.readouterr().err


# --- records.core_check: the writers validate with pydantic-core alone ----------------------


def _by_models(name: str, record: dict) -> str:
    """The record as the pydantic models validate and dump it (what core_check must equal)."""
    from psymetrics_core.records import JudgeRecord, ResultsRecord, SampleRecord

    model = {"results": ResultsRecord, "samples": SampleRecord, "judge": JudgeRecord}[name]
    return json.dumps(model.model_validate(record).model_dump(mode="json", exclude_unset=True))


def test_core_schemas_file_is_current(monkeypatch):
    """core_schemas.json is what the generator makes from the models today, byte for byte
    (regenerate: python -m psymetrics_core.records.core_check); under another pydantic-core
    version than the file names, the writers compile the models in the process instead."""
    import pydantic_core

    from psymetrics_core.records import core_check

    text = core_check.CORE_SCHEMA_FILE.read_text(encoding="utf-8")
    made = core_check.compile_core_schemas()
    if json.loads(text)["pydantic_core"] == pydantic_core.__version__:
        assert text == json.dumps(made, indent=1) + "\n", (
            "stale: run `python -m psymetrics_core.records.core_check`"
        )
    core_check._core_schemas.cache_clear()
    monkeypatch.setattr(pydantic_core, "__version__", "0.0.0-another")
    try:
        assert core_check._core_schemas() == {**made, "pydantic_core": "0.0.0-another"}
    finally:
        core_check._core_schemas.cache_clear()


def test_core_check_equals_the_models_on_every_record(runs):
    """Every record of the representative runs, checked by core_check, is the models' dump
    of it: same keys, same order, same values."""
    from psymetrics_core.records import core_check

    seen = {"results": 0, "samples": 0, "judge": 0}
    for run in runs:
        records = [("results", json.loads((run / "results.json").read_text()))]
        records += [("samples", x) for x in _lines(run / "samples.jsonl")]
        if (run / "judge.jsonl").is_file():
            records += [("judge", x) for x in _lines(run / "judge.jsonl")]
        for name, rec in records:
            assert json.dumps(core_check.check(name, rec)) == _by_models(name, rec)
            seen[name] += 1
    assert seen["results"] == 4 and seen["samples"] > 50 and seen["judge"] == 5


def _errors(call) -> list[tuple]:
    from pydantic_core import ValidationError

    with pytest.raises(ValidationError) as info:
        call()
    return [(e["type"], e["loc"], e["msg"]) for e in info.value.errors()]


def test_core_check_refuses_what_the_models_refuse(runs):
    """Drifted records fail in core_check with the models' errors (type, location, message);
    what the models accept (an Open entry's extra field, an int where a float goes) passes."""
    from psymetrics_core.records import JudgeRecord, ResultsRecord, SampleRecord, core_check

    sample = _lines(runs[1] / "samples.jsonl")[0]
    results = json.loads((runs[1] / "results.json").read_text())
    judge = _lines(runs[3] / "judge.jsonl")[0]
    task = next(iter(results["tasks"]))
    entry = results["tasks"][task]
    opt = sample["prompt"]["options"]
    bad = [
        ("samples", SampleRecord, {k: v for k, v in sample.items() if k != "task"}),
        ("samples", SampleRecord, {**sample, "answer": "three"}),
        ("samples", SampleRecord, {**sample, "keyed": "high"}),
        ("samples", SampleRecord, {**sample, "answered": True}),
        ("samples", SampleRecord, {**sample, "parse_status": "maybe"}),
        ("samples", SampleRecord, {**sample, "schema_version": 2}),
        ("samples", SampleRecord, {**sample, "option_logprobs": {"1": "x"}}),
        ("samples", SampleRecord,
         {**sample, "prompt": {**sample["prompt"], "options": [{**opt[0], "value": "one"}]}}),
        ("samples", SampleRecord, {**sample, "item_meta": {**sample["item_meta"], "scales": 5}}),
        ("results", ResultsRecord, {**results, "surprise": 1}),
        ("results", ResultsRecord, {**results, "tasks": {task: {**entry, "n_items": "many"}}}),
        ("results", ResultsRecord, {**results, "tasks": {task: {
            **entry, "instrument": {**entry["instrument"], "item_texts": "some"}}}}),
        ("judge", JudgeRecord, {**judge, "verdict": {"status": "ok", "extra": 1}}),
    ]  # fmt: skip
    for name, model, rec in bad:
        ours = _errors(lambda n=name, r=rec: core_check.check(n, r))
        assert ours == _errors(lambda m=model, r=rec: m.model_validate(r)), rec
    ok = [
        ("results", {**results, "tasks": {task: {**entry, "type": "INTJ-A"}}}),
        ("samples", {**sample, "mrat_term": 3}),
        ("samples", {**sample, "option_logprobs": {"1": -0.5, "two": -1}}),
    ]
    for name, rec in ok:
        assert json.dumps(core_check.check(name, rec)) == _by_models(name, rec)


def test_writing_records_imports_no_pydantic(runs, tmp_path):
    """The writers of `psym eval` validate without importing pydantic (a tenth of a second
    of every process): checked in a fresh interpreter."""
    import subprocess
    import sys

    code = f"""
import json, sys
from pathlib import Path
from psymetrics_core.records.writer import SampleWriter, write_results
run = Path({str(runs[1])!r})
w = SampleWriter(Path({str(tmp_path)!r}) / "samples.jsonl")
for line in (run / "samples.jsonl").read_text().splitlines():
    w.write(json.loads(line))
w.close()
res = json.loads((run / "results.json").read_text())
write_results(Path({str(tmp_path)!r}) / "results.json", res)
assert "pydantic_core" in sys.modules
print(sorted(m for m in sys.modules if m.split(".")[0] == "pydantic"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    assert _lines(tmp_path / "samples.jsonl") == _lines(runs[1] / "samples.jsonl")


def test_generator_refuses_model_features_it_does_not_handle():
    """A record model with a validator or an alias would be validated differently by the
    compiled schema: the generator refuses it, naming the field."""
    from pydantic import BaseModel, Field, field_validator

    from psymetrics_core.records.core_check import _typed

    class WithAlias(BaseModel):
        name: str = Field(alias="n")

    class WithValidator(BaseModel):
        size: int

        @field_validator("size")
        @classmethod
        def _positive(cls, v: int) -> int:
            return abs(v)

    with pytest.raises(ValueError, match="WithAlias.name: field options"):
        _typed(WithAlias.__pydantic_core_schema__, "WithAlias")
    with pytest.raises(ValueError, match="'function-after' is not handled"):
        _typed(WithValidator.__pydantic_core_schema__, "WithValidator")
