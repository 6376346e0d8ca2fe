"""`import-goodai` reads the reference's Benchmark 1 and Benchmark 2 definitions as well as v3's.

The fixtures in tests/data/goodai-benchmark1 and tests/data/goodai-benchmark2 are small tests written for this file in
those formats (see tests/data/README.md): Benchmark 1 gives `time_jumps` and `token_spacings` after each line instead
of `waits`, and has no config.yml; Benchmark 2 words its prospective-memory requests differently and its config.yml
has no memory span.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ltm_harness._authoring.example import TestExample
from ltm_harness._cli.main import main
from ltm_harness._errors import LTMError
from ltm_harness._interop.goodai import import_goodai
from ltm_harness._runner.config import load_config

DATA = Path(__file__).resolve().parents[1] / "data"
B1, B2 = DATA / "goodai-benchmark1", DATA / "goodai-benchmark2"


def definition(run_dir: Path, dataset: str, example: str = "0") -> TestExample:
    return TestExample.model_validate_json((run_dir / "definitions" / dataset / f"{example}.def.json").read_text())


def run_baselines(config: Path, results: Path, run_dir: Path) -> dict[str, dict[str, float]]:
    assert main(["run", "-c", str(config), "--results", str(results), "-a", "oracle", "-a", "null", "--quiet"]) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    return {a["agent"]: {d["dataset"]: d["score"] for d in a["datasets"]} for a in summary["agents"]}


def test_benchmark_1_needs_a_span_it_has_no_config(tmp_path):
    with pytest.raises(LTMError, match="pass --span N"):
        import_goodai(B1, tmp_path / "r")


def test_benchmark_1_imports_and_runs_offline(tmp_path, capsys):
    results = tmp_path / "results"
    assert main(["import-goodai", str(B1), "--results", str(results), "--span", "6000", "--run-name", "b1"]) == 0
    assert "9 tests" in capsys.readouterr().out
    run_dir = results / "b1"
    cfg = load_config(run_dir / "config.yml")
    assert cfg.datasets.args.memory_span == 6000
    assert sorted(d.name for d in cfg.datasets.datasets) == sorted([
        "colours", "name_list", "shopping", "jokes", "sallyanne", "trigger_response", "prospective_memory",
        "locations_directions", "delayed_recall"])

    # time_jumps and token_spacings are the waits after each line
    colours = definition(run_dir, "colours")
    assert [(w.tokens, w.time) for w in colours.waits] == [(1000, 0.0)] * 4
    jokes = definition(run_dir, "jokes")
    assert [w.time for w in jokes.waits] == [2400.0, 5400.0, 10800.0, 0.0] and jokes.is_temporal
    assert jokes.script[-1].startswith("Which joke did I tell you about")
    # the older prospective-memory request: the quote after the next 2 statements is the 3rd reply
    pm = definition(run_dir, "prospective_memory")
    assert pm.expected_responses == [["Every map is a promise the road may break.", "Orla Penhallow", 3]]
    # "say: '<phrase>'" expects the phrase
    assert definition(run_dir, "trigger_response").expected_responses == ["Go and water the ferns"] * 2
    assert definition(run_dir, "locations_directions").extra["moves"] == [[3, "North"], [2, "East"], [1, "South"]]

    scores = run_baselines(run_dir / "config.yml", results, run_dir)
    assert scores["oracle"] == {d.name: 1.0 for d in cfg.datasets.datasets}, scores
    assert set(scores["null"].values()) == {0.0}, scores


def test_benchmark_2_imports_and_runs_offline(tmp_path, capsys):
    results = tmp_path / "results"
    with pytest.raises(LTMError, match="memory_span"):  # its config has filler settings, no memory span
        import_goodai(B2, results)
    assert main(["import-goodai", str(B2), "--results", str(results), "--span", "4000"]) == 0
    err = capsys.readouterr().err
    assert "datasets.args.filler_tokens" in err and "datasets.args.pre_question_filler" in err  # reported as unused
    run_dir = results / "goodai-benchmark-2-fixture"
    cfg = load_config(run_dir / "config.yml")
    assert [d.name for d in cfg.datasets.datasets] == ["colours", "shopping", "prospective_memory", "spy_meeting"]
    # "in the Nth new message after this one": the reply to the N-th message after the request
    assert definition(run_dir, "prospective_memory", "0").expected_responses == [
        ["A lantern is only brave in the dark.", "Tamsin Achterberg", 4]]
    assert definition(run_dir, "prospective_memory", "1").expected_responses[0][2] == 2
    spy = definition(run_dir, "spy_meeting")
    assert spy.extra["topics"] == ["place", "time", "thing"] and "dawn" in spy.extra["rivals"][1]
    assert [w.percentage_finished for w in spy.waits] == [10, 20, 30, 90, 0]

    scores = run_baselines(run_dir / "config.yml", results, run_dir)
    assert scores["oracle"] == {d.name: 1.0 for d in cfg.datasets.datasets}, scores
    assert set(scores["null"].values()) == {0.0}, scores


@pytest.mark.parametrize("change, message", [
    ({"waits": [{"tokens": 5}] * 4}, "has both waits .* and time_jumps/token_spacings"),
    ({"time_jumps": [0.0, -60.0, 0.0, 0.0]}, "time_jumps: Value error, must not hold negative values"),
    ({"token_spacings": "many"}, "token_spacings: Input should be a valid array"),
])
def test_broken_benchmark_1_definitions_say_file_and_field(tmp_path, change, message):
    source = tmp_path / "ref"
    shutil.copytree(B1 / "Colours", source / "Colours")
    path = source / "Colours" / "0.def.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(LTMError, match=f"Colours/0.def.json: .*{message}"):
        import_goodai(source, tmp_path / "r", span=2000)


@pytest.mark.parametrize("request_line, message", [
    ("Please recite the quote from Tamsin Achterberg whenever you like.", "does not say when to recite the quote"),
])
def test_an_older_prospective_memory_request_without_a_count_is_refused(tmp_path, request_line, message):
    source = tmp_path / "ref"
    shutil.copytree(B2 / "Prospective Memory", source / "Prospective Memory")
    path = source / "Prospective Memory" / "0.def.json"
    data = json.loads(path.read_text())
    data["script"][1] = request_line
    path.write_text(json.dumps(data))
    with pytest.raises(LTMError, match=message):
        import_goodai(source, tmp_path / "r", span=2000)
