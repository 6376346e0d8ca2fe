"""On-disk formats carry versions; files from newer versions are refused, older ones read or refused clearly."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ltm_harness import read_run
from ltm_harness._cli.main import main
from ltm_harness._store.formats import EVENT_FORMAT, RESULTS_FORMAT
import ltm_harness._agents.specs as specs
from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._agents.baselines import RetrievalAgent
from ltm_harness._store.eventlog import read_failed_tries
from ltm_harness._store.layout import wall_log
from ltm_harness.testing import make_config, run_config


@pytest.fixture
async def run_dir(tmp_path) -> Path:
    await run_config(make_config(["colours", "kv"], span=1000), tmp_path, ["retrieval"])
    return tmp_path / "t"


def set_event_format(log: Path, value: int) -> None:
    lines = log.read_text().splitlines(keepends=True)
    start = json.loads(lines[0])
    assert start["type"] == "session_start" and start["format"] == EVENT_FORMAT
    start["format"] = value
    lines[0] = json.dumps(start) + "\n"
    log.write_text("".join(lines))


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


def test_every_output_names_its_format(run_dir):
    assert json.loads((run_dir / "summary.json").read_text())["format"] == RESULTS_FORMAT
    assert json.loads((run_dir / "retrieval" / "summary.json").read_text())["format"] == RESULTS_FORMAT
    first = json.loads((run_dir / "retrieval" / "events.jsonl").read_text().splitlines()[0])
    assert first["type"] == "session_start" and first["format"] == EVENT_FORMAT == 5


def test_a_newer_event_log_is_refused_by_rescore_and_resume(run_dir, capsys):
    set_event_format(run_dir / "retrieval" / "events.jsonl", EVENT_FORMAT + 1)
    assert main(["rescore", str(run_dir)]) == 2
    err = one_error_line(capsys)
    assert f"events.jsonl: this event log was written by a newer ltm-harness (format {EVENT_FORMAT + 1}" in err and "upgrade" in err
    (run_dir / "retrieval" / "summary.json").unlink()
    code = main(["run", "-c", str(run_dir / "run_config.json"), "--results", str(run_dir.parent), "--resume",
                 "--quiet", "--no-report", "-a", "retrieval"])
    assert code == 1  # the agent's error, reported beside the others' results
    assert "written by a newer ltm-harness" in one_error_line(capsys)


def test_a_newer_summary_is_refused_by_report(run_dir, capsys):
    path = run_dir / "summary.json"
    data = json.loads(path.read_text())
    data["format"] = RESULTS_FORMAT + 1
    path.write_text(json.dumps(data))
    assert main(["report", str(run_dir)]) == 2
    err = one_error_line(capsys)
    assert f"summary.json: this summary was written by a newer ltm-harness (format {RESULTS_FORMAT + 1}" in err


def test_results_format_1_without_memory_distances_is_still_reported(run_dir, capsys):
    """Results written before memory distances (format 1: no `memory_distance` on gaps and curve points, no
    `ltm_score_memory_distance`) are read and reported; the missing distances are None."""
    for path in run_dir.rglob("summary.json"):
        data = json.loads(path.read_text())
        data["format"] = 1
        for agent in data.get("agents", [data]):
            agent["format"] = 1
            agent.pop("ltm_score_memory_distance", None)
            for d in agent["datasets"]:
                d.pop("memory_distance", None)
                for p in d["curve"]:
                    p.pop("memory_distance", None)
        path.write_text(json.dumps(data))
    for path in run_dir.rglob("results.json"):
        results = json.loads(path.read_text())
        for r in results:
            for g in r["gaps"]:
                del g["memory_distance"]
        path.write_text(json.dumps(results))
    assert main(["report", str(run_dir)]) == 0
    capsys.readouterr()
    run = read_run(run_dir)
    agent = run.summary.agents[0]
    assert agent.ltm_score_memory_distance is None and agent.ltm_score_on("memory_distance") is None
    results = run.results("retrieval")
    assert results and all(r.memory_distance is None for r in results) and any(r.gaps for r in results)


@pytest.mark.parametrize("older", [1, 2, 3, 4])
def test_an_older_event_log_is_read_but_not_resumed(run_dir, capsys, older):
    """Formats 1 (before turns recorded failures and judge calls their replies), 2 (before environment steps were
    events), 3 (before wall-clock and cache facts left the events) and 4 (before history that needs no reply,
    results per question, and failed tries out of the turns) are still re-scored and reported; resuming needs format
    5, and says so."""
    log = run_dir / "retrieval" / "events.jsonl"
    set_event_format(log, older)
    assert main(["rescore", str(run_dir)]) == 0
    capsys.readouterr()
    set_event_format(log, older)  # rescore rewrote the log in today's format
    (run_dir / "retrieval" / "summary.json").unlink()
    assert main(["run", "-c", str(run_dir / "run_config.json"), "--results", str(run_dir.parent), "--resume",
                 "--quiet", "--no-report", "-a", "retrieval"]) == 1
    err = capsys.readouterr().err
    assert f"written by an older ltm-harness (format {older}" in err and "run the benchmark again" in err


def test_a_format_0_run_is_refused_everywhere(run_dir, capsys):
    set_event_format(run_dir / "retrieval" / "events.jsonl", 0)
    assert main(["rescore", str(run_dir)]) == 2
    assert "written by an older ltm-harness (format 0; this version reads formats 1 to 5)" in one_error_line(capsys)


class Failing(Agent):
    """Retrieval, except that it fails every try at the colour question, and the first try at each of the others."""

    def __init__(self, spec: str) -> None:
        super().__init__(spec)
        self.inner, self.tried = RetrievalAgent(spec), set()

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        if "favourite colour?" in message.text:
            raise ConnectionError("the backend went away")
        if message.text.rstrip().endswith("?") and message.text not in self.tried:
            self.tried.add(message.text)
            raise TimeoutError("slow")
        return await self.inner.reply(message, oracle_hint)


async def test_a_format_4_log_with_failed_tries_is_rescored_as_format_5_records_them(tmp_path, monkeypatch, capsys):
    """Format 4 kept every failed try's error in its turn (and had no side-file lines for turns); re-scored, its turns
    are recorded as format 5 has them: an answered turn keeps only the harness's notes, a failed turn its number of
    tries and its last error, which its test's result names as the original run did."""
    monkeypatch.setattr(specs, "agent_factory", lambda spec, tok, options=None: lambda: Failing(spec))
    cfg = make_config(["colours", "kv"], span=1000, turns={"attempts": 3, "backoff": 0.0})
    await run_config(cfg, tmp_path, ["retrieval"])
    run_dir = tmp_path / "t"
    log = run_dir / "retrieval" / "events.jsonl"
    expected = (run_dir / "retrieval" / "results.json").read_bytes()
    format_5 = log.read_bytes()
    # the log as format 4 wrote it: every failed try's error in its turn, then the notes; no `tries`; no side file
    tries = read_failed_tries(log)
    events = [json.loads(line) for line in format_5.splitlines()]
    events[0]["format"] = 4
    for n, event in enumerate(events, 1):
        if event["type"] == "turn":
            notes = event["errors"][1:] if event.get("tries") else event["errors"]
            event.pop("tries", None)
            event["errors"] = [t.error for t in tries.get(n, [])] + notes
    answered = next(e for e in events if e["type"] == "turn" and e["errors"] and not e["failed"])
    answered["errors"].append("note: the reply held 1 lone surrogate (invalid Unicode), replaced by U+FFFD")
    (failed,) = [e for e in events if e["type"] == "turn" and e["failed"]]
    assert failed["errors"] == ["ConnectionError: the backend went away"] * 3
    log.write_text("".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in events))
    wall_log(log).unlink()
    assert await asyncio.to_thread(main, ["rescore", str(run_dir)]) == 0
    capsys.readouterr()
    rescored = [json.loads(line) for line in log.read_text().splitlines()]
    by_turn = {e["i"]: e for e in rescored if e["type"] == "turn"}
    assert by_turn[answered["i"]]["errors"] == answered["errors"][-1:] and "tries" not in by_turn[answered["i"]]
    assert by_turn[failed["i"]]["tries"] == 3 and by_turn[failed["i"]]["errors"] == ["ConnectionError: the backend went away"]
    assert (run_dir / "retrieval" / "results.json").read_bytes() == expected  # the same reasons as the original run
    result = next(r for r in json.loads(expected) if r["dataset"] == "colours")
    assert result["reasons"] == [f"the agent failed turn {failed['i']} after 3 attempts: ConnectionError: the backend "
                                 "went away"]
    written = [json.loads(line) for line in format_5.splitlines()]
    next(e for e in written if e["type"] == "turn" and e["i"] == answered["i"])["errors"] = answered["errors"][-1:]
    assert rescored == written  # otherwise the format 5 log the run wrote, event for event


async def test_a_dataset_with_nothing_scored_has_no_score_in_the_file_and_a_subset_says_what_it_covers(tmp_path):
    from ltm_harness._api import run_async
    from ltm_harness._results.models import DatasetSummary

    # in the default run, none of retrieval's colours answers can be scored: the headline says null
    out = await run_async("default", ["retrieval"], results=tmp_path)
    written = {d["dataset"]: d for d in json.loads((out.path / "retrieval" / "summary.json").read_text())["datasets"]}
    colours = written["colours"]
    assert colours["scored"] == 0 and colours["headline"]["values"][0]["value"] is None
    assert colours["score"] is None and colours["score_covers"] == "nothing scored of 2 tests"
    assert written["kv"]["score"] is not None and "score_covers" not in written["kv"]  # over every test: nothing said
    summary = json.loads((out.path / "summary.json").read_text())
    assert summary["format"] == RESULTS_FORMAT == 5
    assert summary["agents"][0]["benchmark_score"] == sum(d["score"] or 0.0 for d in written.values())
    assert out.agent_summary("retrieval").scored_datasets == len(written) - 1
    # a format 4 file's 0.0 over nothing scored is read as no score
    old = dict(colours, score=0.0)
    old.pop("score_covers")
    assert DatasetSummary.model_validate(old).score is None
