"""--datasets, --exclude and --limit (one function for run, estimate and studies), and Ctrl-C with its resume hint."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._errors import ConfigError, speaking_to
from ltm_harness._runner.config import RunConfig, Selection, load_config, select_datasets, split_names

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
config: {run_name: sel}
datasets:
  args: {memory_span: 1500, dataset_examples: 3}
  datasets:
    - name: colours
      args: {colour_changes: 2}
    - name: jokes
      args: {dataset_examples: 1}
    - name: kv
"""


def config(tmp_path: Path) -> Path:
    path = tmp_path / "sel.yml"
    path.write_text(CONFIG)
    return path


def test_split_names_takes_commas_and_repeats_in_order_once():
    assert split_names(["a,b", " c ,a", ""]) == ["a", "b", "c"]
    assert split_names("x") == ["x"]
    assert split_names(None) == []


def test_select_keeps_named_drops_excluded_and_caps_examples(tmp_path):
    cfg = select_datasets(load_config(config(tmp_path)), Selection(datasets=["colours", "jokes", "kv"],
                                                                   exclude=["kv"], limit=2))
    assert [e.name for e in cfg.datasets.datasets] == ["colours", "jokes"]
    assert [e.common(cfg.datasets.args).dataset_examples for e in cfg.datasets.datasets] == [2, 1]  # 1 stays 1
    assert cfg.config.selection == Selection(datasets=["colours", "jokes", "kv"], exclude=["kv"], limit=2)
    saved = json.loads(cfg.model_dump_json())
    assert saved["config"]["selection"] == {"datasets": ["colours", "jokes", "kv"], "exclude": ["kv"], "limit": 2}


def test_no_selection_leaves_the_config_and_its_saved_form_unchanged(tmp_path):
    before = load_config(config(tmp_path))
    after = select_datasets(before.model_copy(deep=True), Selection())
    assert after.model_dump_json() == before.model_dump_json()
    assert "selection" not in json.loads(after.model_dump_json())["config"]
    assert RunConfig.model_validate_json(after.model_dump_json()) == after


@pytest.mark.parametrize("selection, cli, library", [
    (Selection(exclude=["chapterbrake"]), "--exclude chapterbrake: not a dataset of c, which lists colours, jokes, kv;",
     "exclude=['chapterbrake']: not a dataset of c, which lists colours, jokes, kv;"),
    (Selection(datasets=["colours", "nope", "nada"]), "--datasets nope,nada: not datasets of c, which lists colours, jokes, kv;",
     "datasets=['nope', 'nada']: not datasets of c"),
    (Selection(exclude=["colours", "jokes", "kv"]), "--exclude colours,jokes,kv: leaves none of the datasets of c",
     "exclude=['colours', 'jokes', 'kv']: leaves none of the datasets of c"),
])
def test_bad_selections_are_one_line_naming_the_known_datasets(tmp_path, selection, cli, library):
    """Said with the command line's flags to its users, with `run`'s arguments to the library's callers."""
    for audience, message in (("command line", cli), ("library", library)):
        with speaking_to(audience), pytest.raises(ConfigError) as err:
            select_datasets(load_config(config(tmp_path)), selection, "c")
        assert message in str(err.value)
        assert "\n" not in str(err.value)


def test_cli_refuses_an_unknown_name_before_any_folder_is_made(tmp_path, capsys):
    code = main(["run", "-c", str(config(tmp_path)), "-a", "null", "--exclude", "colors", "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "--exclude colors: not a dataset of" in err and "colours, jokes, kv" in err
    assert not (tmp_path / "r").exists()
    assert main(["run", "-c", str(config(tmp_path)), "-a", "null", "--limit", "0"]) == 2
    assert "--limit 0: there must be at least 1 example" in capsys.readouterr().err


def test_run_plays_the_selection_records_it_and_resume_and_rescore_agree(tmp_path, capsys):
    results = tmp_path / "r"
    args = ["run", "-c", str(config(tmp_path)), "-a", "null", "--quiet", "--no-report", "--results", str(results)]
    assert main([*args, "--datasets", "colours,kv", "--limit", "1"]) == 0
    folder = results / "sel"
    saved = json.loads((folder / "run_config.json").read_text())
    assert saved["config"]["selection"] == {"datasets": ["colours", "kv"], "exclude": [], "limit": 1}
    assert sorted(p.name for p in (folder / "definitions").iterdir() if p.is_dir()) == ["colours", "kv"]
    summary = json.loads((folder / "null" / "summary.json").read_text())
    assert {d["dataset"]: d["tests"] for d in summary["datasets"]} == {"colours": 1, "kv": 1}
    # a resume with other options is refused, naming those the run was started with
    capsys.readouterr()
    assert main([*args, "--run-name", "sel", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "was started with --datasets colours,kv --limit 1 but is resumed with none of them" in err
    assert main([*args, "--datasets", "colours,kv", "--limit", "1", "--run-name", "sel", "--resume"]) == 0
    # rescore reads the saved config: the same two datasets, one test each
    assert main(["rescore", str(folder)]) == 0
    summary = json.loads((folder / "null" / "summary.json").read_text())
    assert {d["dataset"]: d["tests"] for d in summary["datasets"]} == {"colours": 1, "kv": 1}


def test_estimate_takes_the_selection(tmp_path, capsys):
    assert main(["estimate", "-c", str(config(tmp_path)), "-a", "openai:gpt-4o-mini", "--datasets", "kv",
                 "--json"]) == 0
    only_kv = json.loads(capsys.readouterr().out)[0]
    assert main(["estimate", "-c", str(config(tmp_path)), "-a", "openai:gpt-4o-mini", "--json"]) == 0
    everything = json.loads(capsys.readouterr().out)[0]
    assert 0 < only_kv["conversation_tokens"] < everything["conversation_tokens"]


SLOW_AGENT = """
import asyncio
from ltm_harness import Agent, Reply

class Slow(Agent):
    async def reply(self, message, oracle_hint=None):
        await asyncio.sleep(0.02)
        return Reply(text="ok")

    async def restore(self, turns):
        pass
"""


def ignore_sigint() -> None:
    """As `cmd &` in a script (or a nohup-style launcher) starts a process: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("stop, background", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)])
def test_ctrl_c_or_sigterm_stops_the_run_and_prints_the_command_that_resumes_it(tmp_path, stop, background):
    (tmp_path / "slow.py").write_text(textwrap.dedent(SLOW_AGENT))
    (tmp_path / "sel.yml").write_text(CONFIG.replace("memory_span: 1500", "memory_span: 20000"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("LTM_LAUNCHER", None)
    cmd = [sys.executable, "-m", "ltm_harness", "run", "-c", "sel.yml", "-a", "slow.py:Slow", "--exclude", "kv",
           "--results", "out", "--no-report"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ignore_sigint if background else None)
    log = tmp_path / "out" / "sel" / "slow.py_Slow" / "events.jsonl"
    deadline = time.monotonic() + 120
    while not (log.is_file() and log.read_text().count('"type":"turn"') >= 3):  # a few turns answered
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=60)
    print(err)  # the screen the note quotes
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    hint = shlex.split(err.strip().splitlines()[-1].strip())
    python = ["python"] if shutil.which("python") == sys.executable else [sys.executable]  # the one that ran it
    assert hint == [*python, *("-m ltm_harness run -c sel.yml -a slow.py:Slow --exclude kv --run-name sel "
                               "--results out --no-report --resume").split()]
    done = subprocess.run(hint, cwd=tmp_path, env=env,  # the lock was let go; the command works as printed
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "resuming: 0 agents finished (kept), 1 interrupted" in done.stdout
