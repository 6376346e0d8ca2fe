"""What the command line can do, the library can do the same way: `run`/`run_async` take the dataset selection
(`datasets`, `exclude`, `limit`) through the same code as `--datasets`, `--exclude`, `--limit`; `on_turn` hears a
public `TurnProgress`; and an error names options as its reader gives them: arguments to a library caller
(`overwrite=True`), flags to a command-line user (`--overwrite`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import ltm_harness
from ltm_harness import ConfigError, RunFolderError, TurnProgress
from ltm_harness._cli.main import main
from ltm_harness.testing import make_config


def config(tmp_path: Path) -> Path:
    path = tmp_path / "sel.yml"
    path.write_text("config: {run_name: sel}\ndatasets:\n  args: {memory_span: 1000, dataset_examples: 2}\n"
                    "  datasets:\n    - {name: colours}\n    - {name: jokes}\n    - {name: kv}\n")
    return path


def test_run_takes_the_selection_as_the_command_line_does(tmp_path: Path) -> None:
    out = ltm_harness.run(str(config(tmp_path)), ["oracle"], results=tmp_path / "lib", datasets="colours,kv",
                          exclude=["kv"], limit=1)
    assert {d.dataset: d.tests for d in out.agent_summary("oracle").datasets} == {"colours": 1}
    assert main(["run", "-c", str(config(tmp_path)), "-a", "oracle", "--datasets", "colours,kv", "--exclude", "kv",
                 "--limit", "1", "--results", str(tmp_path / "cli"), "--quiet", "--no-report"]) == 0
    for name in ("run_config.json", "oracle/results.json", "oracle/events.jsonl"):  # the same run, byte for byte
        assert (tmp_path / "lib" / "sel" / name).read_bytes() == (tmp_path / "cli" / "sel" / name).read_bytes(), name
    saved = json.loads((tmp_path / "lib" / "sel" / "run_config.json").read_text())
    assert saved["config"]["selection"] == {"datasets": ["colours", "kv"], "exclude": ["kv"], "limit": 1}
    # resuming takes the selection the run was started with, said in the caller's words
    (tmp_path / "lib" / "sel" / "oracle" / "summary.json").unlink()
    with pytest.raises(ConfigError, match=r"was started with datasets=\['colours', 'kv'\] exclude=\['kv'\] limit=1 "
                                          r"but is resumed with none of them; .* overwrite=True"):
        ltm_harness.run(str(config(tmp_path)), ["oracle"], results=tmp_path / "lib", resume=True)
    again = ltm_harness.run(str(config(tmp_path)), ["oracle"], results=tmp_path / "lib", resume=True,
                            datasets=["colours", "kv"], exclude="kv", limit=1)
    assert again.path == out.path and again.agent_summary("oracle").datasets[0].tests == 1


@pytest.mark.parametrize("options, library, cli", [
    ({"exclude": ["colors"]}, "exclude=['colors']: not a dataset of config, which lists colours, jokes, kv",
     "--exclude colors: not a dataset of"),
    ({"datasets": ["kv", "nope"]}, "datasets=['nope']: not a dataset of config", "--datasets nope: not a dataset of"),
    ({"limit": 0}, "limit=0: there must be at least 1 example per dataset; give limit=1 or more",
     "--limit 0: there must be at least 1 example per dataset; give --limit 1 or more"),
    ({"limit": 10_001}, "limit=10001: at most 10,000 examples per dataset; give a smaller limit",
     "--limit 10001: at most 10,000 examples per dataset; give a smaller --limit"),
    ({"exclude": ["colours", "jokes", "kv"]}, "exclude=['colours', 'jokes', 'kv']: leaves none of the datasets",
     "--exclude colours,jokes,kv: leaves none of the datasets"),
    ({"resume": True, "overwrite": True}, "resume=True and overwrite=True exclude each other", None),  # (argparse's)
    ({"retry_errored": True, "overwrite": True}, "retry_errored=True and overwrite=True exclude each other "
     "(retry_errored=True keeps the run and does its errored tests again, overwrite=True discards it)",
     "--retry-errored and --overwrite exclude each other (--retry-errored keeps the run and does its errored "
     "tests again, --overwrite discards it)"),
])
def test_a_wrong_option_is_said_with_arguments_to_the_library_and_flags_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: dict, library: str, cli: str | None) -> None:
    cfg = make_config(["colours", "jokes", "kv"], span=1000)
    with pytest.raises(ConfigError) as err:
        ltm_harness.run(cfg, ["oracle"], results=tmp_path, **options)
    assert library in str(err.value) and "--" not in str(err.value)
    if cli is not None:
        flags = []
        for name, value in options.items():
            flag = "--" + name.replace("_", "-")
            flags += [flag] if value is True else [flag, ",".join(value) if isinstance(value, list) else str(value)]
        assert main(["run", "-c", str(config(tmp_path)), "-a", "oracle", "--results", str(tmp_path), *flags]) == 2
        assert cli in capsys.readouterr().err
    assert not list(tmp_path.glob("*/run_config.json"))  # refused before any run folder was made


def test_a_wrong_selection_type_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^datasets: give dataset names, as a list or as \"a,b\", not \[3\]$"):
        ltm_harness.run(make_config(["kv"]), ["oracle"], results=tmp_path, datasets=[3])
    with pytest.raises(ConfigError, match=r"^limit: give a whole number of examples, not '2'$"):
        ltm_harness.run(make_config(["kv"]), ["oracle"], results=tmp_path, limit="2")


def test_an_interrupted_run_says_how_to_go_on_in_the_callers_words(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_config(["kv"], span=1000)
    ltm_harness.run(cfg, ["oracle"], results=tmp_path)
    for summary in (tmp_path / "t" / "oracle" / "summary.json", tmp_path / "t" / "summary.json"):
        summary.unlink()  # as if it was stopped
    with pytest.raises(RunFolderError) as err:
        ltm_harness.run(cfg, ["oracle"], results=tmp_path)
    assert "pass resume=True to continue it, or overwrite=True to discard it" in str(err.value)
    cfg_file = tmp_path / "kv.yml"
    cfg_file.write_text(cfg.model_dump_json())  # the same config, for the command line
    assert main(["run", "-c", str(cfg_file), "-a", "oracle", "--results", str(tmp_path), "--quiet"]) == 2
    assert "pass --resume to continue it, or --overwrite to discard it" in capsys.readouterr().err
    with pytest.raises(RunFolderError, match=r"no summary\.json: the run did not finish; finish it by resuming it "
                                             r"\(resume=True\), or run it again \(overwrite=True"):
        ltm_harness.read_run(tmp_path / "t")


def test_on_turn_hears_a_frozen_turn_progress_that_adds_up_to_the_summary(tmp_path: Path) -> None:
    heard: list[TurnProgress] = []
    out = ltm_harness.run(make_config(["colours", "kv"], span=1000, examples=2, isolated=True), ["oracle", "null"],
                          results=tmp_path, on_turn=heard.append)
    assert heard and all(type(t) is TurnProgress for t in heard)
    with pytest.raises(dataclasses.FrozenInstanceError):
        heard[0].turn = 0  # type: ignore[misc]
    for agent in ("oracle", "null"):
        last = {t.session: t for t in heard if t.agent == agent}  # the latest of each of its conversations
        summary = out.agent_summary(agent)
        assert len(last) == 4 and all(t.ended and t.tests_done == t.tests_total == 1 and t.fraction == 1.0
                                      for t in last.values())  # isolated: one conversation per test
        assert sum(t.turn for t in last.values()) == summary.turns
        assert sum(t.tokens for t in last.values()) == summary.conversation_tokens
        scores = [t.score for t in last.values()]
        assert scores == [1.0] * 4 if agent == "oracle" else all(s is not None and s < 1.0 for s in scores)
    assert [t.ended for t in heard].count(True) == 8
