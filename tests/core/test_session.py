"""The scheduler: waits, interleaving rules, virtual clock, continual tests, errors, counting."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ltm_harness._agents.baselines import NullAgent, OracleAgent
from ltm_harness._authoring.dataset import DatasetInterface, as_program
from ltm_harness._results.derive import ResultsBuilder
from ltm_harness._store.eventlog import EventLog, read_events
from ltm_harness._store.events import TestEnd, TestStart, TurnEvent
from ltm_harness._authoring.example import TestExample, Wait
from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._engine.program import TestContext, TestOutcome
from ltm_harness._engine.session import Session, SessionSettings
from ltm_harness._tokens import get_tokenizer

tok = get_tokenizer()
T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


class Scripted(DatasetInterface):
    name = "scripted"
    description = "test dataset"

    def __init__(self, examples, span=1000, name="scripted", reset=""):
        super().__init__(memory_span=span)
        self._examples = examples
        self.name = name  # type: ignore[misc]
        self.reset_message = reset  # type: ignore[misc]

    def generate_examples(self, n):
        return self._examples[:n]

    def evaluate_correct(self, questions, responses, expected):
        ok = [e.lower() in r.lower() for r, e in zip(responses, expected)]
        return float(sum(ok)), float(len(expected)), [f"{o}" for o in ok]


def example(ds="scripted", eid="0", script=("Fact A is 1.", "What is fact A?"), waits=None, expected=("1",)):
    return TestExample(dataset_name=ds, example_id=eid, script=list(script),
                       is_question=[line.endswith("?") for line in script],
                       waits=waits or [Wait(percentage_finished=50), Wait()], expected_responses=list(expected),
                       oracle_answers=[f"It is {e}." for e in expected])


async def run_session(tmp_path, tests, agent=None, isolated=False, incompatible=None, **kw):
    """Run `tests` ((dataset, example) pairs) in one session; its results are derived from its events as it runs."""
    builder = ResultsBuilder({e.unique_id: e for _, e in tests}, {d.name: d for d, _ in tests})
    log = EventLog(tmp_path / "events.jsonl", on_event=builder.add)
    settings = SessionSettings(agent_name="a", session_id="s", start_time=T0, isolated=isolated,
                               **({"incompatible": incompatible} if incompatible else {}))
    session = Session(agent or NullAgent("null"), [as_program(d, e) for d, e in tests], tok,
                      None if isolated else FillerGenerator(tok, 0), log, settings, **kw)
    await session.run()
    log.close()
    return session, builder.results, read_events(tmp_path / "events.jsonl")


def turns_of(events, test=None):
    return [e for e in events if isinstance(e, TurnEvent) and (test is None or e.test == test)]


async def test_token_and_percentage_waits_are_respected(tmp_path):
    ex = example(script=("Fact A is 1.", "Filler-free line.", "What is fact A?"),
                 waits=[Wait(tokens=300), Wait(percentage_finished=80), Wait()])
    ds = Scripted([ex], span=1000)
    session, results, events = await run_session(tmp_path, [(ds, ex)], agent=OracleAgent("oracle"))
    mine = turns_of(events, "scripted/0")
    assert [t.user for t in mine] == list(ex.script)
    start = mine[0].pos
    assert mine[1].pos - mine[0].pos >= 300
    assert mine[2].pos - start >= 800
    # Filler brought it there, and not much further.
    assert mine[1].pos - mine[0].pos <= 300 + 40
    assert mine[2].pos - start <= 800 + 40
    assert results[0].score == 1.0 and results[0].status == "ok"
    assert any(t.kind == "filler" for t in turns_of(events))


async def test_time_waits_jump_the_virtual_clock(tmp_path):
    ex = example(waits=[Wait(time=3 * 3600), Wait()])
    ds = Scripted([ex])
    session, results, events = await run_session(tmp_path, [(ds, ex)])
    mine = turns_of(events, "scripted/0")
    assert mine[1].time - mine[0].time >= timedelta(hours=3)
    assert mine[1].time - mine[0].time < timedelta(hours=3, minutes=1)
    # Nothing but the clock was needed: no filler between the two lines.
    assert not any(t.kind == "filler" for t in turns_of(events))
    times = [t.time for t in turns_of(events)]
    assert times == sorted(times) and times[0] == T0


async def test_same_dataset_and_incompatible_datasets_never_overlap(tmp_path):
    a = [example("a", str(i)) for i in range(2)]
    b = [example("b", "0")]
    c = [example("c", "0")]
    da, db, dc = Scripted(a, name="a"), Scripted(b, name="b"), Scripted(c, name="c")
    tests = [(da, a[0]), (db, b[0]), (dc, c[0]), (da, a[1])]
    incompatible = lambda x, y: x == y or {x, y} == {"a", "b"}  # noqa: E731
    _, _, events = await run_session(tmp_path, tests, incompatible=incompatible)
    spans = {}
    for e in events:
        if isinstance(e, TestStart):
            spans[e.test] = [e.turn, None]
        elif isinstance(e, TestEnd):
            spans[e.test][1] = e.turn

    def overlap(x, y):
        return spans[x][0] < spans[y][1] and spans[y][0] < spans[x][1]

    assert not overlap("a/0", "a/1")
    assert not overlap("a/0", "b/0") and not overlap("a/1", "b/0")
    assert overlap("a/0", "c/0")  # compatible tests do interleave


async def test_reset_message_is_said_when_a_test_ends(tmp_path):
    ex = example()
    ds = Scripted([ex], reset="Forget fact A.")
    _, _, events = await run_session(tmp_path, [(ds, ex)])
    mine = turns_of(events, "scripted/0")
    assert mine[-1].user == "Forget fact A." and mine[-1].kind == "reset"
    end = next(e for e in events if isinstance(e, TestEnd))
    assert end.turn == mine[-1].i + 1


class Watching(DatasetInterface):
    """Asks for a word in the 3rd reply from now (the reply to the instruction counts as the 1st)."""

    name = "watching"
    description = "continual test"

    def generate_examples(self, n):
        return [TestExample(dataset_name=self.name, example_id="0", script=["Say 'zebra' in your 3rd reply from now."],
                            is_question=[True], expected_responses=["zebra", 3], uses_callback=True)]

    def continual_evaluation_callback(self, example, log):
        if len(log) < 3:
            return 0, 1, [], False
        ok = "zebra" in log[2].reply
        return float(ok), 1.0, [f"3rd reply has zebra: {ok}"], True

    def oracle_hint(self, example, log):
        return "zebra" if len(log) == 2 else None


async def test_continual_callback_sees_every_later_turn_and_guides_the_oracle(tmp_path):
    ds = Watching(memory_span=1000)
    ex = ds.generate_examples(1)[0]
    _, results, events = await run_session(tmp_path, [(ds, ex)], agent=OracleAgent("oracle"))
    assert results[0].score == 1.0, results[0].reasons
    turns = turns_of(events)
    q = next(t for t in turns if t.test == "watching/0")
    assert "zebra" in turns[q.i + 2].reply and "zebra" not in turns[q.i + 1].reply
    _, results, _ = await run_session(tmp_path, [(ds, ex)])
    assert results[0].score == 0.0


class Broken(DatasetInterface):
    name = "broken"
    description = "a test program that raises"

    def generate_examples(self, n):
        return [example("broken", "0")]

    async def run(self, example, ctx: TestContext) -> TestOutcome:
        await ctx.say("first line")
        raise ValueError("boom")


async def test_a_failing_test_program_errors_its_test_and_the_run_goes_on(tmp_path):
    bad = Broken(memory_span=1000)
    good_ex = example()
    good = Scripted([good_ex])
    _, results, _ = await run_session(tmp_path, [(bad, bad.generate_examples(1)[0]), (good, good_ex)], agent=OracleAgent("oracle"))
    by = {r.dataset: r for r in results}
    assert by["broken"].status == "errored" and "ValueError: boom" in by["broken"].reasons[0]
    assert by["scripted"].status == "ok" and by["scripted"].score == 1.0


async def test_isolated_session_sends_no_filler_and_ignores_token_waits(tmp_path):
    ex = example(waits=[Wait(tokens=5000, time=60), Wait()])
    ds = Scripted([ex])
    _, results, events = await run_session(tmp_path, [(ds, ex)], isolated=True)
    assert not any(t.kind == "filler" for t in turns_of(events))
    mine = turns_of(events, "scripted/0")
    assert mine[1].time - mine[0].time >= timedelta(seconds=60)
    assert results[0].gaps[0].target_tokens is None


async def test_every_message_is_counted_once(tmp_path, monkeypatch):
    """Filler is never re-counted; each test line and each reply is counted exactly once."""
    exs = [example("scripted", str(i), script=(f"Fact {i} is {i}.", f"What is fact {i}?"), expected=(str(i),)) for i in range(3)]
    ds = Scripted(exs, span=3000)
    counted: list[str] = []
    original = type(tok).count

    def spy(self, text):
        counted.append(text)
        return original(self, text)

    log = EventLog(tmp_path / "events.jsonl")
    settings = SessionSettings(agent_name="a", session_id="s", start_time=T0)
    filler = FillerGenerator(tok, 0)
    monkeypatch.setattr(type(tok), "count", spy)  # after the filler pool is built: its parts are counted once there
    session = Session(NullAgent("null"), [as_program(ds, e) for e in exs], tok, filler, log, settings)
    await session.run()
    log.close()
    events = read_events(tmp_path / "events.jsonl")
    turns = turns_of(events)
    fillers = {t.user for t in turns if t.kind == "filler"}
    assert fillers and not fillers & set(counted)
    # one count per distinct test line, the intro, and one per reply
    lines = {line for e in exs for line in e.script}
    assert len(counted) == len(lines) + 1 + len(turns)


async def test_agent_sees_only_text_timestamp_token_count_and_role(tmp_path):
    seen = []

    class Spy(NullAgent):
        async def reply(self, message, oracle_hint=None):
            seen.append((message, oracle_hint))
            return await super().reply(message)

    ex = example()
    _, _, _ = await run_session(tmp_path, [(Scripted([ex]), ex)], agent=Spy("spy"))
    assert seen and all(hint is None for _, hint in seen)
    assert all(set(m.model_dump()) == {"text", "timestamp", "tokens", "observe", "role"} for m, _ in seen)
    blob = json.dumps([m.model_dump(mode="json") for m, _ in seen])
    assert "It is 1." not in blob and "scripted/0" not in blob


class AwaitsOtherWork(DatasetInterface):
    """A dynamic test program that awaits ordinary asyncio work (as an LLM call inside a test would)."""

    name = "awaits"
    description = "awaits asyncio work between lines"

    def generate_examples(self, n):
        return [example("awaits", "0")]

    async def run(self, example, ctx: TestContext) -> TestOutcome:
        import asyncio

        await ctx.say("Fact A is 1.")
        await asyncio.sleep(0)  # a bare yield
        await asyncio.sleep(0.01)  # a timer future
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        loop.call_later(0.01, fut.set_result, "computed")
        value = await fut
        failing = loop.create_future()
        loop.call_soon(failing.set_exception, RuntimeError("remote error"))
        try:
            await failing
        except RuntimeError as exc:
            value += f" / {exc}"
        reply = await ctx.ask(f"What is fact A? ({value})", oracle="It is 1.")
        return TestOutcome(float("1" in reply), 1.0, [value])


async def test_programs_may_await_ordinary_asyncio_work(tmp_path):
    ds = AwaitsOtherWork(memory_span=1000)
    _, results, events = await run_session(tmp_path, [(ds, ds.generate_examples(1)[0])], agent=OracleAgent("oracle"))
    assert results[0].status == "ok" and results[0].score == 1.0
    assert results[0].reasons == ["computed / remote error"]
    assert turns_of(events, "awaits/0")[1].user == "What is fact A? (computed / remote error)"
