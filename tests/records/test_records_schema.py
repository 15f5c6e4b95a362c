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
            lp = tuple(
                math.log(0.7 if o.value == v else 0.3 / (len(p.options) - 1)) for o in p.options
            )
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
    evaluate(
        ["bfi", "asi"],
        backend=_Backend(),
        mode="logprob",
        limit=6,
        repeats=2,
        conditions=grid,
        output=base / "grid",
        session=session,
    )
    # a free-text task scored from its text and a judged task (judge.jsonl)
    letter = "He is a brilliant, exceptional leader and a warm, caring person."
    evaluate(
        ["refletter"],
        backend=ScriptedBackend(lambda t: letter),
        limit=4,
        output=base / "letters",
        session=session,
    )

    def advice(text: str) -> str:
        if text.startswith("You are an expert judge"):
            return '{"explanation": "takes it", "option": "yes"}'
        return "You should do it."

    evaluate(
        ["moral-advice"], backend=ScriptedBackend(advice), output=base / "advice", session=session
    )


def test_every_record_validates_against_the_printed_schema(runs, capsys):
    # one validator per schema (jsonschema.validate would check the schema again per record)
    results, samples, judge = (
        jsonschema.Draft202012Validator(_schema(n, capsys)) for n in ("results", "samples", "judge")
    )
    n_samples = n_judge = 0
    for run in runs:
        res = json.loads((run / "results.json").read_text())
        results.validate(res)
        assert res["schema_version"] == 1
        for line in _lines(run / "samples.jsonl"):
            samples.validate(line)
            n_samples += 1
        if (run / "judge.jsonl").is_file():
            for line in _lines(run / "judge.jsonl"):
                judge.validate(line)
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
    good = json.loads((Path(__file__).parents[1] / "data" / "results_minimal.json").read_text())
    write_results(tmp_path / "ok" / "results.json", good)
    with pytest.raises(RecordError, match="field 'surprise'"):
        write_results(tmp_path / "bad" / "results.json", {**good, "surprise": 1})
    assert not (tmp_path / "bad" / "results.json").exists()
    task = good["tasks"]["toy"]
    # a task entry whose typed fields drift is refused (extra fields are allowed: the aggregate
    # hook is a plugin extension point, e.g. the 16-type test adds its type and role)
    with pytest.raises(RecordError, match="tasks.toy"):
        write_results(
            tmp_path / "bad" / "results.json",
            {**good, "tasks": {"toy": {**task, "n_items": "many"}}},
        )
    write_results(
        tmp_path / "extra" / "results.json", {**good, "tasks": {"toy": {**task, "type": "INTJ-A"}}}
    )
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


def test_every_written_record_validates_to_itself(runs):
    """Each record of the representative runs, validated again by the writers' check, is
    what was written: same keys, same order, same values."""
    from psymetrics_core.records.writer import checked

    seen = {"results": 0, "samples": 0, "judge": 0}
    for run in runs:
        records = [("results", json.loads((run / "results.json").read_text()))]
        records += [("samples", x) for x in _lines(run / "samples.jsonl")]
        if (run / "judge.jsonl").is_file():
            records += [("judge", x) for x in _lines(run / "judge.jsonl")]
        for name, rec in records:
            assert json.dumps(checked(rec, name, name)) == json.dumps(rec)
            seen[name] += 1
    assert seen["results"] == 4 and seen["samples"] > 50 and seen["judge"] == 5
