"""The study file: validated like configs (one line naming the file, field and fix), crossed into cells whose run
configs are the base config with the cell's agent, span, seed, dataset or config; the t interval; the report."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from ltm_harness._cli.main import main
from ltm_harness._cli.progress import StudyProgress
from ltm_harness._errors import ConfigError, speaking_to
from ltm_harness._grid.cell import CellOutcome
from ltm_harness._grid.ticks import CellTick
from ltm_harness._grid.results import t_interval, t_quantile
from ltm_harness._grid.study import load_study

from .grid_fixture import BASE, write_study


def study_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_study(write_study(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message
    return message


def test_cells_cross_agents_spans_and_seeds_in_a_fixed_order(tmp_path: Path):
    study = load_study(write_study(tmp_path, "agents: [retrieval, r=recent:500]\nspans: [1000, 4000]\nseeds: [0, 7]\n"
                                              "base: base.yml\n"))
    assert study.name == "study"
    assert [c.id for c in study.cells] == [
        "retrieval__span1000__seed0", "retrieval__span1000__seed7", "retrieval__span4000__seed0",
        "retrieval__span4000__seed7", "r__span1000__seed0", "r__span1000__seed7", "r__span4000__seed0",
        "r__span4000__seed7"]
    cfg, source = study.cell_config(study.cells[6])
    assert (cfg.config.run_name, cfg.config.seed, cfg.datasets.args.memory_span) == ("r__span4000__seed0", 0, 4000)
    assert source == str((tmp_path / "base.yml").resolve())
    assert study.cells[6].spec == "r=recent:500" and study.cells[6].agent == "r"


def test_datasets_and_configs_axes_make_cells_of_their_own(tmp_path: Path):
    (tmp_path / "other.yml").write_text(BASE.replace("memory_span: 1000", "memory_span: 3000"))
    study = load_study(write_study(tmp_path, """
base: base.yml
agents: [oracle]
datasets: [names, {name: kv, args: {memory_span: 2000}}]
configs:
  - other=other.yml
  - {name: iso, override: {config: {isolated: true}}}
"""))
    assert [c.id for c in study.cells] == ["oracle__other__names__seed0", "oracle__other__kv__seed0",
                                           "oracle__iso__names__seed0", "oracle__iso__kv__seed0"]
    cfg, _ = study.cell_config(study.cells[1])
    assert [(e.name, e.args) for e in cfg.datasets.datasets] == [("kv", {"memory_span": 2000})]
    assert cfg.datasets.args.memory_span == 3000 and not cfg.config.isolated
    cfg, _ = study.cell_config(study.cells[2])
    assert cfg.config.isolated and [e.name for e in cfg.datasets.datasets] == ["names"]
    assert cfg.datasets.args.memory_span == 1000  # the variant keeps base's settings


def test_resources_per_agent_override_the_study_s(tmp_path: Path):
    study = load_study(write_study(tmp_path, """
base: base.yml
num_cpus: 2
resources: {big_disk: 1}
agents:
  - retrieval
  - {agent: "gpu=recent:500", num_gpus: 1, num_cpus: 0.5, resources: {a100: 1}}
"""))
    plain, gpu = (c.resources for c in study.cells)
    assert (plain.num_cpus, plain.num_gpus, plain.resources) == (2, None, {"big_disk": 1})
    assert (gpu.num_cpus, gpu.num_gpus, gpu.resources) == (0.5, 1, {"big_disk": 1, "a100": 1})


@pytest.mark.parametrize("text, expected", [
    ("agents: []\n", "study.yml: agents: List should have at least 1 item"),
    ("agents: [retrieval]\nspans: [100]\n", "study.yml: spans: every span must be at least 500 tokens (got 100)"),
    ("agents: [retrieval]\nsedes: [1]\n", "study.yml: sedes: unknown field; remove it or fix its spelling"),
    ("agents: [retrieval, retrieval]\n", "agent 'retrieval' is listed twice"),
    ("agents: [nosuchagent]\n", "nosuchagent"),
    ("agents: [retrieval]\nbase: missing.yml\n", "config 'missing.yml' not found"),
    ("agents: [retrieval, null]\n", "study.yml: agents[1]: an empty agent (YAML reads null, ~ and nothing as no value); "
                                    "quote the spec, e.g. 'null'"),
    ("agents: [retrieval]\nconcurrency: 0\n", "study.yml: concurrency: Input should be greater than or equal to 1"),
    ("- retrieval\n", "study.yml: the study must be a mapping, not a list"),
    ("agents: [retrieval]\nconfigs: [{name: x}]\n", "give the config as `path` or as `override`"),
    ("agents: [retrieval]\nconfigs: [{name: x, override: {config: {seed: nope}}}]\n",
     "configs[0].override: config.seed: Input should be a valid integer"),
])
def test_a_wrong_study_file_is_one_line_naming_the_field(tmp_path: Path, text: str, expected: str):
    assert expected in study_error(tmp_path, text)


def test_student_t_quantiles_match_the_tables():
    for df, value in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423), (1000, 1.9623)):
        assert t_quantile(0.975, df) == pytest.approx(value, abs=1e-4)
    assert t_quantile(0.025, 5) == pytest.approx(-2.5706, abs=1e-4)
    assert t_quantile(0.95, 3) == pytest.approx(2.3534, abs=1e-4)


def test_the_interval_is_mean_plus_minus_t_s_over_root_n_clipped_to_scores():
    values = [0.5, 0.6, 0.7]
    mean, lo, hi = t_interval(values)
    half = 4.3027 * statistics.stdev(values) / math.sqrt(3)
    assert mean == pytest.approx(0.6)
    assert (lo, hi) == (pytest.approx(0.6 - half, abs=1e-4), pytest.approx(0.6 + half, abs=1e-4))
    assert t_interval([0.9, 1.0])[1:] == (pytest.approx(0.3147, abs=1e-3), 1.0)  # clipped above
    assert t_interval([0.4]) == (0.4, None, None)


def test_the_study_report_has_span_curves_with_intervals_and_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    study = write_study(tmp_path, "name: small\nbase: base.yml\nagents: [oracle, \"null\"]\nspans: [1000, 2000]\n"
                                  "seeds: [0, 1, 2]\n")
    assert main(["grid", str(study), "--results", str(tmp_path / "out"), "--quiet", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["report", "small", "--results", str(tmp_path / "out")]) == 0
    assert "report in" in capsys.readouterr().out
    folder = tmp_path / "out" / "small"
    page = (folder / "report.html").read_text()
    assert "score against span, all datasets" in page and "memory span (tokens, log scale)" in page
    assert "pooled over the study" in page and "Student t interval" in page
    rows = json.loads((folder / "report.scores.json").read_text())
    overall = [r for r in rows if r["dataset"] == "all datasets"]
    assert sorted((r["agent"], r["span"]) for r in overall) == [("null", 1000), ("null", 2000), ("oracle", 1000),
                                                               ("oracle", 2000)]
    oracle = next(r for r in overall if r["agent"] == "oracle" and r["span"] == 1000)
    assert (oracle["mean"], oracle["seeds"], oracle["ci_low"], oracle["ci_high"]) == (1.0, 3, 1.0, 1.0)
    assert oracle["seed_list"] == [0, 1, 2]
    per_dataset = {(r["agent"], r["dataset"], r["span"]) for r in rows if r["dataset"] != "all datasets"}
    assert ("null", "colours", 2000) in per_dataset and ("oracle", "names", 1000) in per_dataset
    cells = (folder / "report.cells.csv").read_text().splitlines()
    assert len(cells) == 13 and cells[0].startswith("cell,agent,config,dataset,span,seed,state")
    points = json.loads((folder / "report.points.json").read_text())
    assert points and all(p["quantity"] in ("gap", "memory_distance") and p["x"] > 0 and 0 <= p["score"] <= 1
                          for p in points)
    # Every scored test with a gap has a memory distance too, at least as long as the gap (it reaches further back).
    by_test = {(p["cell"], p["dataset"], p["example_id"], p["quantity"]): p["x"] for p in points}
    gaps = {k[:3]: x for k, x in by_test.items() if k[3] == "gap"}
    assert gaps and all(by_test[(*k, "memory_distance")] >= x for k, x in gaps.items())
    assert "score against memory distance, pooled over the study" in page


def test_a_pooled_quantity_added_to_the_table_gets_its_chart_and_points(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    from ltm_harness._grid.report import write_study_report
    from ltm_harness._grid.results import POOLED_X, PooledX
    from ltm_harness._store.layout import StudyFolder

    study = write_study(tmp_path, "name: q\nbase: base.yml\nagents: [oracle]\nseeds: [0, 1]\n")
    assert main(["grid", str(study), "--results", str(tmp_path / "out"), "--quiet", "--no-report"]) == 0
    monkeypatch.setitem(POOLED_X, "tokens", PooledX("tokens", "test length (tokens, log scale)",
                                                    lambda r: float(r.tokens)))
    files = write_study_report(StudyFolder(tmp_path / "out" / "q"))
    page = files.html.read_text()
    assert "score against achieved information gap, pooled" in page
    assert "score against test length, pooled over the study" in page
    points = json.loads((files.html.parent / "report.points.json").read_text())
    assert {p["quantity"] for p in points} == {"gap", "memory_distance", "tokens"}
    only = write_study_report(StudyFolder(tmp_path / "out" / "q"), quantities=["tokens"])
    assert "score against achieved information gap" not in only.html.read_text()
    with pytest.raises(ConfigError, match="pooled quantity 'nope' is not known; give one of gap, memory_distance, tokens"):
        write_study_report(StudyFolder(tmp_path / "out" / "q"), quantities=["nope"])


def test_ray_missing_is_one_line_saying_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as when it is not installed
    study = write_study(tmp_path, "agents: [oracle]\nbase: base.yml\n")
    assert main(["grid", str(study), "--ray", "--results", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == "error: --ray needs Ray, which is not installed; install it with: pip install 'ltm-harness[ray]'\n"
    assert not (tmp_path / "out").exists()


def test_progress_off_a_terminal_is_plain_lines(tmp_path: Path):
    console = Console(file=(buffer := __import__("io").StringIO()), width=200, force_terminal=False)
    clock = iter(range(0, 1000, 10))
    with StudyProgress(console, 3, skipped=1, clock=lambda: float(next(clock))) as progress:
        progress.started("a__seed0", "host pid 1")
        progress.tick("a__seed0", CellTick(tests_done=1, turns=12, tokens=3400, scored=1, score_sum=0.5))
        progress.finished(CellOutcome(cell_id="a__seed0", state="finished", where="host pid 1", wall_seconds=2.0,
                                      score=0.75))
        progress.started("b__seed0", "host pid 1")
        progress.finished(CellOutcome(cell_id="b__seed0", state="failed", where="host pid 1", wall_seconds=0.1,
                                      error="agent b: down"))
    lines = buffer.getvalue().splitlines()
    assert lines[0].endswith("started a__seed0 (host pid 1)")
    assert "1/3 cells done, 1 running, 0 failed, 1 waiting; a__seed0: 1 test done, 12 turns, 3.4k tokens, score 0.50" \
        in lines[1]
    assert lines[2].endswith("finished a__seed0: score 0.75 (2.0 s)")
    assert lines[-1].endswith("failed b__seed0: agent b: down")
    assert progress.counts() == "2/3 cells done, 0 running, 1 failed, 0 waiting"


def test_the_docs_first_study_is_a_valid_study_of_27_cells(tmp_path: Path):
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "grid.md").read_text()
    section = page[page.index("## A first study"):]
    text = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    path = tmp_path / "study.yml"
    path.write_text(text)
    study = load_study(path)
    assert study.name == "span-curve" and len(study.cells) == 27
    assert {c.agent for c in study.cells} == {"retrieval", "recent4k", "big"}
    assert next(c for c in study.cells if c.agent == "big").resources.num_gpus == 1


@pytest.mark.parametrize("address, expected", [
    ("nonsense", "Ray address 'nonsense': give HOST:PORT of the cluster's head (e.g. 10.0.0.1:6379), as `ray start "
                 "--head` prints it"),
    ("127.0.0.1:{port}", "Ray address 127.0.0.1:{port}: nothing answers there (Connection refused); start the cluster "
                         "with `ray start --head` on that machine, or give its address"),
])
def test_a_ray_address_nothing_answers_at_is_one_line_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               address: str, expected: str):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    study = write_study(tmp_path, "agents: [oracle]\nbase: base.yml\n")
    started = __import__("time").monotonic()
    assert main(["grid", str(study), "--ray-address", address.format(port=port),
                 "--results", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {expected.format(port=port)}\n"
    assert __import__("time").monotonic() - started < 10
    assert not (tmp_path / "out").exists()


def test_a_failing_cell_fails_alone_and_is_tried_again_on_the_next_start(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]):
    import socket

    from ltm_harness._grid.index import read_index
    from ltm_harness._store.layout import StudyFolder

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = BASE.replace("  run_name: base\n", "  run_name: base\n  turns: {attempts: 1, backoff: 0, give_up_after: 1}\n")
    study = write_study(tmp_path, f'agents: [oracle, "down=http://127.0.0.1:{port}/chat"]\nbase: base.yml\n', base)
    for attempt in (1, 2):
        assert main(["grid", str(study), "--results", str(tmp_path / "out"), "--quiet", "--no-report"]) == 1
        err = capsys.readouterr().err
        assert f"error: cell down__seed0: agent http://127.0.0.1:{port}/chat: cannot be reached" in err
        index = read_index(StudyFolder(tmp_path / "out" / "study"))
        oracle, down = index.cells
        assert (oracle.state, oracle.runs) == ("finished", 1)  # finished cells are not run again
        assert (down.state, down.runs) == ("failed", attempt) and "cannot be reached" in (down.error or "")


def test_datasets_exclude_and_limit_apply_to_every_cell_as_in_run(tmp_path: Path):
    from ltm_harness._runner.config import Selection

    base = BASE.replace("dataset_examples: 1", "dataset_examples: 3").replace(
        "    - {name: names}\n", "    - {name: names}\n    - {name: kv}\n")
    path = write_study(tmp_path, "base: base.yml\nagents: [oracle]\nspans: [1000]\n", base)
    study = load_study(path, Selection(exclude=["names"], limit=2))
    cfg, _ = study.cell_config(study.cells[0])
    assert [e.name for e in cfg.datasets.datasets] == ["colours", "kv"]
    assert cfg.config.selection == Selection(exclude=["names"], limit=2)  # saved with the cell, as by `run`
    with speaking_to("command line"), pytest.raises(ConfigError, match=r"--datasets nope: not a dataset of .*base.yml, "
                                                                      "which lists colours, names, kv"):
        load_study(path, Selection(datasets=["nope"]))
    # A study crossing datasets: --datasets/--exclude choose among the crossed ones, --limit reaches every cell.
    crossed = write_study(tmp_path / "x", "base: base.yml\nagents: [oracle]\ndatasets: [colours, names, kv]\n", base)
    study = load_study(crossed, Selection(exclude=["kv"], limit=1))
    assert [c.dataset for c in study.cells] == ["colours", "names"]
    cfg, _ = study.cell_config(study.cells[1])
    assert [e.name for e in cfg.datasets.datasets] == ["names"] and cfg.config.selection == Selection(limit=1)
    with speaking_to("command line"), pytest.raises(ConfigError, match=r"--exclude jokes: not crossed by .*study.yml, "
                                                                      "which crosses colours, names, kv"):
        load_study(crossed, Selection(exclude=["jokes"]))


def test_grid_command_takes_the_selection_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = write_study(tmp_path, "name: sel\nbase: base.yml\nagents: [oracle]\nspans: [1000]\n")
    assert main(["grid", str(path), "--results", str(tmp_path / "out"), "--quiet", "--no-report",
                 "--datasets", "names"]) == 0
    saved = json.loads((tmp_path / "out" / "sel" / "cells" / "oracle__span1000__seed0" / "run_config.json").read_text())
    assert [d["name"] for d in saved["datasets"]["datasets"]] == ["names"]
    assert saved["config"]["selection"]["datasets"] == ["names"]
