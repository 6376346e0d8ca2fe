"""The event log on disk, with events alone: what is written, what a resume keeps and replays, where it goes live,
where the wall-clock facts go, and what is left open or behind (no agent, no session)."""

from __future__ import annotations

import errno
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import ltm_harness._store.eventlog as eventlog
from ltm_harness._errors import RunFolderError, RunFolderWriteError
from ltm_harness._store.eventlog import (EventLog, MemoryLog, ResumeMismatch, SessionRecord, read_events,
                                         read_wall_facts, retry_point)
from ltm_harness._store.events import SessionAborted, SessionEnd, SessionStart, TestEnd, TestStart, TurnEvent
from ltm_harness._store.layout import wall_log
from ltm_harness._store.records import LLMCall, Role

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def start() -> SessionStart:
    return SessionStart(agent="a", session="s", time=T0, tokenizer="t")


def turn(i: int, failed: bool = False, test: str | None = None) -> TurnEvent:
    return TurnEvent(i=i, time=T0, pos=10 * i, kind="test" if test else "filler", test=test, user=f"m{i}",
                     user_tokens=5, reply="" if failed else f"r{i}", reply_tokens=0 if failed else 5, failed=failed)


def call(role: Role = "agent", test: str | None = None, latency: float = 1.5, retries: int = 0,
         cached: bool = False) -> LLMCall:
    return LLMCall(role=role, model="m", endpoint="e", test=test, request_hash=f"{role}{test}{latency}",
                   prompt_tokens=1, completion_tokens=1, latency_ms=latency, retries=retries, cached=cached)


def failed_call(test: str, role: Role = "test") -> LLMCall:
    return LLMCall(role=role, model="m", endpoint="e", test=test, request_hash=f"failed{test}", prompt_tokens=0,
                   completion_tokens=0, cost_usd=0.0, error="e (model m) answered HTTP 503")


def began(test: str, i: int) -> TestStart:
    return TestStart(test=test, turn=i, pos=0, time=T0, span=100)


def ended(test: str, i: int, status: Literal["ok", "unscored", "errored"] = "ok") -> TestEnd:
    return TestEnd(test=test, turn=i, pos=0, time=T0, score=1.0, max_score=1.0, status=status, reasons=[])


def write(path: Path, events: list) -> None:
    log = EventLog(path)
    for e in events:
        log.write(e)
    log.close()


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# -- writing ------------------------------------------------------------------------------------------------------


def test_each_event_is_one_line_and_wall_facts_go_to_the_side_file_keyed_by_line(tmp_path):
    path = tmp_path / "events.jsonl"
    events = [start(), call(latency=12.5, retries=2), turn(0), call("judge", "t/0", latency=3.0, cached=True)]
    write(path, events)
    assert lines(path) == [e.model_dump_json() for e in events]
    assert "latency_ms" not in path.read_text()
    facts = read_wall_facts(path)
    assert sorted(facts) == [2, 4]  # the llm_call lines
    assert (facts[2].latency_ms, facts[2].retries, facts[2].cached, facts[2].role) == (12.5, 2, False, "agent")
    assert (facts[4].latency_ms, facts[4].cached, facts[4].role) == (3.0, True, "judge")
    read = read_events(path)  # read back, each call with its own line's facts
    assert (read[1].latency_ms, read[1].retries) == (12.5, 2) and (read[3].latency_ms, read[3].cached) == (3.0, True)


def test_a_log_without_llm_calls_has_no_side_file_and_a_new_log_removes_a_stale_one(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), call()])
    assert wall_log(path).exists()
    write(path, [start(), turn(0)])  # the same file written again from the start
    assert not wall_log(path).exists() and read_wall_facts(path) == {}
    assert lines(path) == [start().model_dump_json(), turn(0).model_dump_json()]


def test_the_log_closes_every_file_it_opened(tmp_path):
    before = open_fds()
    write(tmp_path / "events.jsonl", [start(), call(), turn(0), call()])
    assert open_fds() == before
    _, log = resumed(tmp_path / "events.jsonl")
    for e in [start(), call(), turn(0), call()]:
        log.write(e)
    log.write(call())
    log.close()
    assert open_fds() == before


def test_a_write_cut_short_is_finished_and_a_failed_one_leaves_no_half_line(tmp_path, monkeypatch):
    path = tmp_path / "events.jsonl"
    real = eventlog._write_at
    monkeypatch.setattr(eventlog, "_write_at", lambda fd, data, offset: real(fd, data[:7], offset))  # 7 bytes a call
    write(path, [start(), turn(0), turn(1)])
    assert lines(path) == [e.model_dump_json() for e in (start(), turn(0), turn(1))]

    log = EventLog(path)
    log.write(start())
    calls = 0

    def full_disk(fd: int, data: memoryview, offset: int) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real(fd, data[:10], offset)  # half the line made it to the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(eventlog, "_write_at", full_disk)
    with pytest.raises(RunFolderWriteError, match="events.jsonl: No space left on device"):
        log.write(turn(0))
    monkeypatch.setattr(eventlog, "_write_at", real)
    log.write(turn(1))  # the disk has room again: the log goes on from the last whole line
    log.close()
    assert lines(path) == [start().model_dump_json(), turn(1).model_dump_json()]


def test_the_side_file_tolerates_torn_and_repeated_entries(tmp_path):
    path = tmp_path / "events.jsonl"
    assert read_wall_facts(path) == {}  # none yet
    write(path, [start(), call(latency=1.0), call(latency=2.0)])
    side = wall_log(path)
    torn = '{"line": 3, "ro'
    side.write_text(side.read_text() + torn + '\n{"line": 3, "role": "agent", "latency_ms": 9.0}\n' + torn)
    facts = read_wall_facts(path)
    assert (facts[2].latency_ms, facts[3].latency_ms) == (1.0, 9.0)  # the last whole entry of a line wins


# -- reading --------------------------------------------------------------------------------------------------------


def test_a_damaged_log_is_one_line_naming_the_line(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0)])
    path.write_text(path.read_text() + "\n" + "{not json}\n" + turn(1).model_dump_json() + "\n")
    damaged = r"events.jsonl: line 3 is not a valid event; the run folder is damaged \(run it again with overwrite=True\)$"
    with pytest.raises(RunFolderError, match=damaged):
        read_events(path)  # blank lines are not counted
    with pytest.raises(RunFolderError, match=damaged):
        SessionRecord(path, resume=True)  # a whole line (not one torn by a crash): refused when resuming too
    path.write_bytes(path.read_bytes().replace(b"{not json}", b"{\xff\xfe}"))  # not even UTF-8
    with pytest.raises(RunFolderError, match=damaged):
        read_events(path)
    with pytest.raises(RunFolderError, match=r"missing.jsonl: cannot read the event log \(No such file or directory\); "
                                             r"the run folder is damaged$"):
        read_events(tmp_path / "missing.jsonl")
    path.write_text(turn(0).model_dump_json() + "\n")
    not_a_log = (r"events.jsonl: the event log does not start with a session_start event; it is not an ltm-harness "
                 r"event log, or it is damaged; run the benchmark again$")
    with pytest.raises(RunFolderError, match=not_a_log):
        read_events(path)


def test_a_torn_last_line_is_refused_when_reading_and_left_out_when_resuming(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0), turn(1)])
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 20])
    with pytest.raises(RunFolderError, match="line 3"):
        read_events(path)
    record = SessionRecord(path, resume=True)
    assert record.lines == lines(path)[:2] and record.keep_bytes == len("\n".join(record.lines)) + 1


# -- resuming -------------------------------------------------------------------------------------------------------


def resumed(path: Path, **kw) -> tuple[SessionRecord, EventLog]:
    record = SessionRecord(path, resume=True, **kw)
    return record, EventLog(path, record.lines, record.keep_bytes)


def test_a_resumed_log_replays_the_kept_events_then_appends_and_never_rewrites(tmp_path):
    path = tmp_path / "events.jsonl"
    first = [start(), call(latency=4.0), turn(0), call(latency=5.0), turn(1)]
    write(path, first)
    record, log = resumed(path)
    assert [e for e, _ in record.turns] == [first[2], first[4]] and record.turns[0][1][0].latency_ms == 4.0
    for e in first:
        assert log.replaying
        log.write(e)
    assert not log.replaying
    log.write(call(latency=6.0))  # new: appended, its facts on its own line (6)
    log.write(turn(2))
    log.close()
    assert lines(path) == [e.model_dump_json() for e in [*first, call(latency=6.0), turn(2)]]
    assert {n: f.latency_ms for n, f in read_wall_facts(path).items()} == {2: 4.0, 4: 5.0, 6: 6.0}


def test_a_resumed_log_refuses_an_event_that_differs_from_the_recorded_one(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0), turn(1)])
    _, log = resumed(path)
    log.write(start())
    mismatch = (r"events.jsonl: event 2 of the log differs from the one this harness makes now \(turn 0 recorded, "
                r"session_end now\); the config, the definitions or ltm-harness changed since the run, so it cannot be "
                r"resumed; run it again with overwrite=True$")
    with pytest.raises(ResumeMismatch, match=mismatch):
        log.write(SessionEnd(turns=1, pos=0, time=T0))
    log.close()


def test_resuming_goes_live_after_the_agents_calls_of_an_unrecorded_reply_and_keeps_only_their_lines_facts(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), call(latency=1.0), turn(0), call(latency=2.0), call(latency=3.0)])  # killed before turn 1
    record, log = resumed(path)
    assert len(record.lines) == 3 and record.keep_bytes == len("\n".join(lines(path)[:3])) + 1
    for line in record.lines:
        log.write(next(e for e in [start(), call(latency=1.0), turn(0)] if e.model_dump_json() == line))
    log.write(call(latency=7.0))  # turn 1's call, made again
    log.close()
    assert len(lines(path)) == 4  # the file was cut to the kept events, then grew
    assert {n: f.latency_ms for n, f in read_wall_facts(path).items()} == {2: 1.0, 4: 7.0}


def test_resuming_with_no_llm_call_kept_empties_the_side_file_and_does_not_make_one(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0), call(latency=2.0)])
    resumed(path)[1].close()
    assert wall_log(path).read_text() == ""  # the entry of the cut call is gone
    write(path, [start(), turn(0)])
    resumed(path)[1].close()
    assert not wall_log(path).exists()


def test_resuming_goes_live_from_where_a_session_was_stopped(tmp_path):
    path = tmp_path / "events.jsonl"
    kept = [start(), began("t/0", 0), turn(0, test="t/0")]
    write(path, [*kept, SessionAborted(turn=1, pos=10, time=T0, reason="watchdog"), ended("t/0", 1, "errored"),
                 SessionEnd(turns=1, pos=10, time=T0)])
    assert SessionRecord(path, resume=True).lines == [e.model_dump_json() for e in kept]
    assert len(SessionRecord(path).lines) == 6  # read as it is when not resuming


@pytest.mark.parametrize("events, kept", [
    # turn 3 is asked again, live, with its agent call (turn 1, with an answered turn after it, is not)
    ([start(), turn(0), turn(1, failed=True), turn(2), call(), turn(3, failed=True), call(), turn(4, failed=True)], 4),
    ([start(), turn(0), turn(1, failed=True)], 2),
    ([start(), turn(0), turn(1, failed=True), turn(2, failed=True)], 2),
    ([start(), turn(0, failed=True), turn(1, failed=True)], 1),
])
def test_resuming_after_an_outage_goes_live_from_the_first_of_the_failed_turns_it_ends_with(tmp_path, events, kept):
    path = tmp_path / "events.jsonl"
    write(path, events)
    assert SessionRecord(path, resume=True).lines == [e.model_dump_json() for e in events[:kept]]


@pytest.mark.parametrize("events, live_from", [
    ([start(), turn(0), ended("t/0", 1, "errored"), turn(1, failed=True), turn(2)], 2),  # an errored test first
    ([start(), turn(0), turn(1, failed=True), turn(2), ended("t/0", 3, "errored")], 2),  # a failed turn first
    ([start(), turn(0), ended("t/0", 1, "unscored"), turn(1), SessionEnd(turns=2, pos=0, time=T0)], 5),
    # a test-program LLM call that failed: its test errored (or did not end yet), so the call is made again...
    ([start(), turn(0), call("test", "t/0"), failed_call("t/0"), turn(1), ended("t/0", 2, "errored")], 3),
    ([start(), turn(0), failed_call("t/0"), turn(1)], 2),
    # ...unless its test caught the failure and ended well: then it is replayed (and so are the judge's failures)
    ([start(), turn(0), failed_call("t/0"), turn(1), ended("t/0", 2), failed_call("t/1", "judge"), turn(2)], 7),
])
def test_retry_errored_goes_live_from_the_first_failed_turn_errored_test_or_failed_test_llm_call(tmp_path, events, live_from):
    path = tmp_path / "events.jsonl"
    write(path, events)
    assert retry_point(read_events(path)) == live_from
    record = SessionRecord(path, resume=True, retry_errored=True)
    assert record.lines == lines(path)[:live_from]
    assert record.keep_bytes == sum(len(line) + 1 for line in record.lines)


def test_a_record_groups_each_turns_agent_calls_and_each_tests_own_calls(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), call(latency=1.0), call(latency=2.0), turn(0), turn(1), call("test", "t/0"),
                 call("judge", "t/0"), call("judge", "t/1", latency=3.0), call("generation"), call("test")])
    record = SessionRecord(path)
    assert [[c.latency_ms for c in calls] for _, calls in record.turns] == [[1.0, 2.0], []]
    assert list(record.test_calls) == ["t/0"] and len(record.test_calls["t/0"]) == 1
    assert {t: [c.latency_ms for c in cs] for t, cs in record.judge_calls.items()} == {"t/0": [1.5], "t/1": [3.0]}


def test_every_event_is_seen_as_it_is_written_replayed_or_new(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0)])
    seen: list = []
    record = SessionRecord(path, resume=True)
    log = EventLog(path, record.lines, record.keep_bytes, on_event=seen.append)
    for e in (start(), turn(0), turn(1)):
        log.write(e)
    log.close()
    assert seen == [start(), turn(0), turn(1)]
    memory = MemoryLog(on_event=seen.append)
    memory.write(turn(2))
    memory.close()
    assert memory.events == [turn(2)] and seen[-1] == turn(2) and not memory.replaying


def test_without_pwrite_the_log_is_written_the_same(tmp_path, monkeypatch):
    write(tmp_path / "a.jsonl", [start(), call(), turn(0)])
    monkeypatch.delattr(os, "pwrite")
    write(tmp_path / "b.jsonl", [start(), call(), turn(0)])
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert wall_log(tmp_path / "a.jsonl").read_bytes() == wall_log(tmp_path / "b.jsonl").read_bytes()


def test_a_resume_keeps_the_facts_of_a_call_on_the_last_kept_line(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0), call("judge", "t/0", latency=8.0)])
    resumed(path)[1].close()
    assert {n: f.latency_ms for n, f in read_wall_facts(path).items()} == {3: 8.0}


def test_an_event_this_version_cannot_read_is_named_so_in_a_mismatch(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start(), turn(0)])
    _, log = resumed(path)
    log.write(start())
    with pytest.raises(ResumeMismatch, match=r"\(turn 0 recorded, an unreadable event now\)"):
        log.write(Unknown())
    log.close()


class Unknown(BaseModel):
    """An event of a kind this version does not know."""

    type: str = "observed"


def test_a_log_of_a_newer_format_is_refused_and_an_older_one_is_read_but_not_resumed(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start().model_copy(update={"format": 99}), turn(0)])
    with pytest.raises(RunFolderError, match=r"events.jsonl: this event log was written by a newer ltm-harness"):
        read_events(path)
    write(path, [start().model_copy(update={"format": 3}), turn(0)])
    assert len(read_events(path)) == 2
    with pytest.raises(RunFolderError, match=r"events.jsonl: this event log \(to resume\) was written by an older"):
        SessionRecord(path, resume=True)


def test_an_empty_log_resumes_from_nothing(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"")
    record = SessionRecord(path, resume=True)
    assert (record.lines, record.keep_bytes, record.turns) == ([], 0, [])


def test_the_log_makes_its_folders_and_its_files_are_not_executable(tmp_path):
    path = tmp_path / "a" / "b" / "events.jsonl"
    write(path, [start(), turn(0)])
    _, log = resumed(path)
    log.write(start())
    log.write(turn(0))
    log.write(call())  # the side file is made now
    log.close()
    for made in (path, wall_log(path)):
        assert made.stat().st_mode & 0o111 == 0, made


def test_a_log_that_cannot_be_made_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "taken").write_text("a file where the folder should be")
    with pytest.raises(RunFolderWriteError, match=r"cannot write .*taken/events.jsonl: "):
        EventLog(tmp_path / "taken" / "events.jsonl")
    wall_log(tmp_path / "events.jsonl").mkdir()  # a stale side file that cannot be removed
    with pytest.raises(RunFolderWriteError, match=r"cannot write .*events.wall: "):
        EventLog(tmp_path / "events.jsonl")


def test_an_oserror_without_a_reason_is_still_one_line(tmp_path, monkeypatch):
    def unreadable(path: Path, max_bytes: int | None = None) -> Any:
        raise OSError()

    monkeypatch.setattr(eventlog, "open_regular", unreadable)  # the one way a log is opened
    with pytest.raises(RunFolderError, match=r"cannot read the event log \(OSError\)"):
        read_events(tmp_path / "events.jsonl")


def test_a_record_knows_its_file(tmp_path):
    path = tmp_path / "events.jsonl"
    write(path, [start()])
    assert SessionRecord(path).path == path
