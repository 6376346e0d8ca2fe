"""The run folder and the errors around it: reuse, replacement, safe names, clear messages."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._runner.config import load_config
from ltm_harness._errors import LTMError
from ltm_harness._runner.prepare import prepare
from ltm_harness._store.layout import slug
from ltm_harness.testing import make_config, run_config

DATASET = textwrap.dedent('''
    from ltm_harness import DatasetInterface

    class Capitals(DatasetInterface):
        name = "capitals_of_fiction"
        description = "Recall an invented capital."

        def generate_examples(self, n):
            return [self.make_example(i, ["The capital of Zembla is CITY.", "What is the capital of Zembla?"],
                                      [False, True], ["CITY"], oracle_answers=["CITY"]) for i in range(n)]

        def evaluate_correct(self, questions, responses, expected):
            ok = expected[0].lower() in responses[0].lower()
            return float(ok), 1.0, ["right" if ok else "wrong"]
''')


def user_dataset(folder: Path, city: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "capitals.py").write_text(DATASET.replace("CITY", city))


def config_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "run.yml"
    path.write_text(textwrap.dedent(body))
    return path


USER_CONFIG = """
config: {run_name: mine, dataset_dirs: [my_datasets]}
datasets:
  args: {memory_span: 1000, dataset_examples: 1}
  datasets: [{name: capitals_of_fiction}]
"""


def test_dataset_dirs_are_relative_to_the_config_and_code_changes_regenerate(tmp_path, capsys):
    user_dataset(tmp_path / "my_datasets", "Quorn")
    cfg_path = config_file(tmp_path, USER_CONFIG)
    results = tmp_path / "results"
    assert main(["run", "-c", str(cfg_path), "-a", "oracle", "--results", str(results)]) == 0
    assert "generated in" in capsys.readouterr().out
    definition = results / "mine" / "definitions" / "capitals_of_fiction" / "0.def.json"
    assert "Quorn" in definition.read_text()
    assert main(["run", "-c", str(cfg_path), "-a", "oracle", "--results", str(results), "--overwrite"]) == 0
    assert "reused from" in capsys.readouterr().out
    user_dataset(tmp_path / "my_datasets", "Vellis")  # the dataset's code changed
    assert main(["run", "-c", str(cfg_path), "-a", "oracle", "--results", str(results), "--overwrite"]) == 0
    assert "generated in" in capsys.readouterr().out
    assert "Vellis" in definition.read_text()


def test_missing_dataset_dir_names_the_field(tmp_path):
    cfg_path = config_file(tmp_path, USER_CONFIG)
    with pytest.raises(LTMError, match=r"run.yml: config.dataset_dirs\[0\]: folder .*my_datasets does not exist"):
        prepare(load_config(cfg_path), tmp_path / "results", str(cfg_path))


def test_unknown_dataset_names_file_and_field(tmp_path):
    cfg_path = config_file(tmp_path, USER_CONFIG.replace("dataset_dirs: [my_datasets]", "seed: 1"))
    with pytest.raises(LTMError, match=r"run.yml: datasets.datasets\[0\].name: unknown dataset 'capitals_of_fiction'"):
        prepare(load_config(cfg_path), tmp_path / "results", str(cfg_path))


def test_bad_tokenizer_is_a_config_error(tmp_path):
    cfg_path = config_file(tmp_path, USER_CONFIG.replace("dataset_dirs: [my_datasets]", "tokenizer: nonsense"))
    with pytest.raises(LTMError, match=r"config.tokenizer: .*cl100k_base"):
        load_config(cfg_path)


async def test_other_configs_outputs_are_cleared_and_an_agent_s_folder_is_replaced(tmp_path):
    await run_config(make_config(["colours"], span=1000), tmp_path, ["oracle", "null"])
    run_dir = tmp_path / "t"
    assert (run_dir / "null" / "events.jsonl").is_file()
    # Same config, another agent set: the null results stay (same definitions), oracle is replaced.
    (run_dir / "oracle" / "stale.txt").write_text("old")
    await run_config(make_config(["colours"], span=1000), tmp_path, ["oracle"])
    assert (run_dir / "null" / "results.json").is_file() and not (run_dir / "oracle" / "stale.txt").exists()
    # Another config: earlier agents' outputs no longer belong here.
    summary = await run_config(make_config(["colours"], span=1000, isolated=True, seed=5), tmp_path, ["oracle"])
    assert not (run_dir / "null").exists() and not (run_dir / "oracle" / "events.jsonl").exists()
    assert (run_dir / "oracle" / "events").is_dir() and [a.agent for a in summary.agents] == ["oracle"]


def test_run_names_stay_inside_the_results_folder(tmp_path):
    assert slug("..") == "run" and slug("../../etc") == "etc" and slug(".hidden") == "hidden"
    assert main(["run", "-c", "default", "-a", "null", "--examples", "1", "--run-name", "..", "--results", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "run" / "summary.json").is_file()
    assert not (tmp_path / "summary.json").exists()


def test_unwritable_results_folder_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["run", "-a", "null", "--results", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write results under") and "Traceback" not in err


async def test_a_definition_whose_ids_do_not_match_its_file_is_refused(tmp_path):
    cfg = make_config(["kv"], span=1000)
    await run_config(cfg, tmp_path, ["null"])
    path = tmp_path / "t" / "definitions" / "kv" / "0.def.json"
    data = json.loads(path.read_text())
    data["dataset_name"] = "colours"
    path.write_text(json.dumps(data))
    with pytest.raises(LTMError, match=r"0.def.json: dataset_name/example_id say 'colours/0' but the file is 'kv/0'"):
        prepare(cfg, tmp_path)


def test_one_failing_agent_keeps_the_others_results(tmp_path, capsys, unused_tcp_port):
    # the checks before the run would stop it at once (tests/core/test_preflight.py): off, the agent fails in the run
    code = main(["run", "-c", "default", "--examples", "1", "-a", "oracle", "-a", f"http://127.0.0.1:{unused_tcp_port}/x",
                 "--results", str(tmp_path), "--set", "config.preflight=false"])
    out, err = capsys.readouterr()
    assert code == 1
    n = len(load_config("default").datasets.datasets)
    assert "agent oracle" in out and f"benchmark score {n}.00/{n}" in out
    assert err.count("error: agent http://127.0.0.1") == 1 and "agent http" in err and "Traceback" not in err
    summary = json.loads((tmp_path / "default" / "summary.json").read_text())
    assert [a["agent"] for a in summary["agents"]] == ["oracle", f"http://127.0.0.1:{unused_tcp_port}/x"]
    assert list(summary["errors"]) == [f"http://127.0.0.1:{unused_tcp_port}/x"]
    assert "failed its first turn" in summary["errors"][f"http://127.0.0.1:{unused_tcp_port}/x"]
    # the unreachable agent's tests are all there, errored with the reason; it was tried 3 times, once
    results = json.loads((tmp_path / "default" / f"http_127.0.0.1_{unused_tcp_port}_x" / "results.json").read_text())
    assert len(results) == n and {r["status"] for r in results} == {"errored"}
    assert all("cannot be reached" in r["reasons"][0] for r in results)


def test_agents_that_would_share_a_folder_are_refused(tmp_path, capsys):
    assert main(["run", "-a", "recent:500", "-a", "recent: 500", "--results", str(tmp_path)]) == 2
    assert "would write to the same folder" in capsys.readouterr().err


def test_debug_before_the_command_shows_the_traceback(tmp_path):
    with pytest.raises(LTMError):
        main(["--debug", "run", "-a", "nobody", "--results", str(tmp_path)])


def test_warnings_for_unknown_incompatibilities_and_small_spans(tmp_path, capsys):
    cfg_path = config_file(tmp_path, """
        config: {run_name: w, incompatibilities: [[colourz, kv]]}
        datasets:
          args: {memory_span: 600, dataset_examples: 1}
          datasets: [{name: colours}]
    """)
    assert main(["run", "-c", str(cfg_path), "-a", "null", "--results", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "config.incompatibilities[0]: 'colourz' is not a known dataset" in err
    assert "below 1000" in err


@pytest.mark.parametrize("name", ["definitions", "Definitions", "summary.json", "run_config.json", "imported",
                                  "report.html", "report.x", "aiq.json", "config.yml", "a.rescoring", "mine.json"])
def test_agent_names_that_are_the_run_folder_s_own_entries_are_refused_and_nothing_is_lost(tmp_path, capsys, name):
    base = ["run", "-c", "default", "--examples", "1", "--run-name", "t", "--results", str(tmp_path)]
    assert main([*base, "-a", "null"]) == 0
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "report" not in p.name)
    capsys.readouterr()
    assert main([*base, "--overwrite", "-a", f"{name}=oracle"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"agent {name!r} would write its outputs to" in err and "Traceback" not in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "report" not in p.name) == before


def test_import_answers_named_like_the_definitions_is_refused_before_any_folder(tmp_path, capsys):
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"question_id": "a", "hypothesis": "b"}))
    assert main(["import-answers", "longmemeval", str(answers), "--name", "definitions", "--results",
                 str(tmp_path / "r")]) == 2
    assert "agent 'definitions' would write its outputs to the run folder's own 'definitions'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", ["index.html", "suites", "compare_a.html", "compare_a.parts"])
def test_run_names_that_are_the_results_folder_s_own_entries_are_refused(tmp_path, capsys, name):
    assert main(["run", "-c", "default", "--examples", "1", "-a", "null", "--run-name", name, "--results",
                 str(tmp_path)]) == 2
    assert f"run name {name!r} would write the run to" in capsys.readouterr().err
    assert not (tmp_path / name).exists()


def test_a_folder_s_agent_that_is_one_of_its_entries_is_one_run_folder_error(tmp_path):
    from ltm_harness._errors import RunFolderError
    from ltm_harness._store.layout import RunFolder

    with pytest.raises(RunFolderError, match="agent 'definitions' would have its outputs in the run folder's own"):
        RunFolder(tmp_path).agent("definitions")
