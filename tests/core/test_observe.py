"""History that needs no reply (`observe`), dated sessions, conversations of their own and results per question:
what the LoCoMo and LongMemEval readers are built on, tested on a small benchmark of the same shape."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from aiohttp import web

import ltm_harness
from ltm_harness import Agent, DatasetInterface
from ltm_harness._api import run_async
from ltm_harness._authoring.catalog import DATASETS
from ltm_harness._authoring.dataset import ResultPart
from ltm_harness._engine.program import TestOutcome
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.events import TurnEvent
from ltm_harness._tokens import get_tokenizer
from ltm_harness.testing import make_config, serve_local

DAY1 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
SESSIONS = [
    (DAY1, ["Alice: I adopted a cat last week, her name is Miso.", "Bob: That is lovely, what colour is she?",
            "Alice: She is ginger with white paws."]),
    (DAY1 + timedelta(days=3), ["Bob: I started learning the cello on Monday.", "Alice: How is it going so far?",
                                "Bob: Slowly, my teacher is called Ingrid."]),
    (DAY1 + timedelta(days=10), ["Alice: We moved to Lisbon yesterday.", "Bob: Wow, Lisbon is beautiful.",
                                 "Alice: The flat is near the river."]),
]
QUESTIONS = [  # question, expected, needed turn ids, kind
    ("What is the name of Alice's cat?", "Miso", ("s0:0",), "single"),
    ("Who teaches Bob the cello?", "Ingrid", ("s1:2",), "single"),
    ("Which city did Alice move to?", "Lisbon", ("s2:0",), "recent"),
    ("What colour is Miso, and where does Alice live now?", "ginger, Lisbon", ("s0:2", "s2:0"), "multi"),
]


class Diary(DatasetInterface):
    """Two friends' dated chat as history, then questions, each its own result (labelled by kind)."""

    name = "diary_observe"
    description = "a small dated conversation benchmark (tests)"
    conversation_per_example = True

    def __init__(self, memory_span: int = 4000, seed: int = 0, mode: str = "reference", distance: int = 0) -> None:
        super().__init__(memory_span, seed)
        self.mode, self.distance = mode, distance

    def turns(self) -> list[HistoryTurn]:
        return [HistoryTurn(f"s{s}:{t}", text, when if t == 0 else None)
                for s, (when, lines) in enumerate(SESSIONS) for t, text in enumerate(lines)]

    def generate_examples(self, n: int):
        out = []
        for i in range(n):
            plan = plan_conversation(self.turns(), [Question(q, needs) for q, _, needs, _ in QUESTIONS],
                                     get_tokenizer().count, self.mode, self.distance)  # type: ignore[arg-type]
            asked = [QUESTIONS[k] for k in plan.asked]
            out.append(self.make_example(f"chat-{i}", plan.script, plan.is_question, [a for _, a, _, _ in asked],
                                         waits=plan.waits, needs=plan.needs, observe=plan.observe,
                                         oracle_answers=[a for _, a, _, _ in asked],
                                         extra={"kinds": [k for *_, k in asked],
                                                "anchors": {str(q): list(a) for q, a in plan.answer_statements().items()}}))
        return out

    def conversation_start(self, example):
        return DAY1

    def result_parts(self, example):
        return [ResultPart(f"q{k}", k, {"kind": kind}) for k, kind in enumerate(example.extra["kinds"])]

    def answer_statements(self, example):
        return {int(q): (a[0], a[1]) for q, a in example.extra["anchors"].items()}

    async def evaluate_with_judge(self, example, questions, responses, judge):
        parts = [TestOutcome(float(all(w.strip().lower() in r.lower() for w in e.split(","))), 1.0, [])
                 for r, e in zip(responses, example.expected_responses)]
        return TestOutcome(sum(p.score for p in parts), float(len(parts)), [], parts=parts)

    def summary_metrics(self, examples, results):
        return {"answered": float(sum(r.status == "ok" and r.score >= 1 for r in results))}


@pytest.fixture(autouse=True)
def diary():
    ltm_harness.register_dataset(Diary)
    yield
    DATASETS.unregister("diary_observe")


def config(examples: int = 1, span: int = 4000, **args):
    return make_config([{"name": "diary_observe", "args": args}], span=span, examples=examples)


class Listener(Agent):
    """Remembers the history it hears; answers a question by saying all of it back."""

    def __init__(self, spec: str | None = None) -> None:
        super().__init__(spec)
        self.heard: list[str] = []
        self.observed = 0

    async def observe(self, message):
        self.observed += 1
        self.heard.append(message.text)

    async def reply(self, message, oracle_hint=None):
        return " ".join(self.heard) or "I don't know."


class Talker(Agent):
    """An agent written before `observe` existed: it answers every message."""

    async def reply(self, message, oracle_hint=None):
        return f"Heard: {message.text[:20]}"


def history(events) -> list[TurnEvent]:
    return [e for e in events if isinstance(e, TurnEvent) and e.observed]


async def test_history_is_heard_without_a_reply_and_each_question_is_a_result(tmp_path):
    out = await run_async(config(examples=2), [("listener", Listener)], results=tmp_path)
    logs = out.events("listener")
    assert sorted(logs) == ["diary_observe__chat-0", "diary_observe__chat-1"]  # a conversation each, no main one
    events = logs["diary_observe__chat-0"]
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert turns[0].user == SESSIONS[0][1][0]  # no opening message: the benchmark's own turns only
    heard = history(events)
    assert [t.user for t in heard] == [line for _, lines in SESSIONS for line in lines]
    assert all(t.reply == "" and t.reply_tokens == 0 for t in heard)
    # each session at its date (the clock then moves 10 s a turn)
    assert heard[0].time == DAY1 and heard[3].time == SESSIONS[1][0] and heard[6].time == SESSIONS[2][0]
    results = out.results("listener")
    assert [r.example_id for r in results[:4]] == ["chat-0.q0", "chat-0.q1", "chat-0.q2", "chat-0.q3"]
    assert [r.labels for r in results[:4]] == [{"kind": "single"}, {"kind": "single"}, {"kind": "recent"},
                                              {"kind": "multi"}]
    assert all(r.status == "ok" and r.score == 1.0 for r in results)  # the history was remembered
    assert results[0].questions == [QUESTIONS[0][0]] and "Miso" in results[0].responses[0]
    summary = out.agent_summary("listener")
    assert summary.observed_turns == 18 and summary.turns == 18 + 8
    data = summary.datasets[0]
    assert [(b.label, b.value, b.tests) for b in data.breakdown or []] == [("kind", "single", 4), ("kind", "recent", 2),
                                                                          ("kind", "multi", 2)]
    assert data.metrics == {"answered": 8.0}
    # memory distance: from the start of the earliest needed turn to the question, exactly
    q3 = [e for e in turns if e.user == QUESTIONS[3][0]][0]
    assert results[3].gaps[0].memory_distance == q3.pos - heard[2].pos
    assert results[3].gaps[0].achieved_tokens == q3.pos - heard[6].pos - heard[6].user_tokens


async def test_an_agent_without_observe_answers_history_and_that_reply_is_never_scored(tmp_path):
    out = await run_async(config(), [("talker", Talker)], results=tmp_path)
    events = out.events("talker")["diary_observe__chat-0"]
    heard = history(events)
    assert len(heard) == 9 and all(t.reply.startswith("Heard: ") for t in heard)
    results = out.results("talker")
    assert [r.responses for r in results] == [[f"Heard: {q[:20]}"] for q, *_ in QUESTIONS]
    assert all(r.score == 0.0 for r in results)
    summary = out.agent_summary("talker")
    assert summary.observed_turns == 9 and summary.datasets[0].metrics == {"answered": 0.0}


async def test_baselines_take_history_as_heard(tmp_path):
    out = await run_async(config(), ["oracle", "retrieval", "null"], results=tmp_path)
    by_agent = {s.agent: s for s in out.summary.agents}
    assert by_agent["oracle"].datasets[0].score == 1.0
    assert by_agent["null"].datasets[0].score == 0.0
    assert by_agent["retrieval"].datasets[0].score >= 0.5  # it answers from the history it only heard
    for agent in ("oracle", "retrieval", "null"):
        heard = history(out.events(agent)["diary_observe__chat-0"])
        assert len(heard) == 9 and all(t.reply == "" for t in heard)


async def test_an_openai_agent_sends_history_with_the_next_question_one_call_each(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], results=tmp_path)
        assert len(server.requests) == len(QUESTIONS)  # no call for the 9 history turns
        first = server.requests[0]["messages"]
        users = [m["content"] for m in first if m["role"] == "user"]
        assert len(users) == 10 and users[0].endswith(SESSIONS[0][1][0]) and users[-1].endswith(QUESTIONS[0][0])
        assert users[0].startswith("[2023-05-08 13:56 UTC] ")  # each message at its session's date
        assert [m["role"] for m in first[1:]] == ["user"] * 10  # history as user messages in a row
        second = server.requests[1]["messages"]
        assert [m["role"] for m in second[-2:]] == ["assistant", "user"]
    summary = out.agent_summary("openai:mock")
    assert summary.usage.calls["agent"] == len(QUESTIONS) and summary.observed_turns == 9
    assert summary.datasets[0].score > 0


async def test_estimate_counts_history_as_tokens_sent_later_not_calls():
    from ltm_harness._runner.estimate import estimate

    rows = await estimate(config(), "openai:gpt-4o-mini")
    assert rows[0].agent_calls == len(QUESTIONS)
    history_tokens = sum(get_tokenizer().count(line) for _, lines in SESSIONS for line in lines)
    assert rows[0].prompt_tokens > len(QUESTIONS) * history_tokens  # every call carries the whole history


async def test_an_http_agent_gets_the_observe_flag_and_may_answer_with_an_empty_body(tmp_path):
    seen: list[dict] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if body.get("observe"):
            return web.Response(status=204)
        return web.json_response({"reply": "Miso, Ingrid, Lisbon, ginger"})

    app = web.Application()
    app.router.add_post("/chat", chat)
    async with serve_local(app) as url:
        out = await run_async(config(), [f"{url}/chat"], results=tmp_path)
    observed = [b for b in seen if b.get("observe")]
    assert len(observed) == 9 and observed[0]["message"] == SESSIONS[0][1][0]
    assert observed[0]["timestamp"] == "2023-05-08T13:56:00+00:00"
    assert all("observe" not in b for b in seen if b not in observed)
    assert out.summary.agents[0].datasets[0].score == 1.0


async def test_resuming_mid_history_rebuilds_the_chat_history_and_gives_the_same_run(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        whole = await run_async(config(), ["openai:mock"], results=tmp_path / "whole")
        asked_whole = [r["messages"] for r in server.requests]
        log = whole.folder.agent("openai:mock").session_log("diary_observe__chat-0")
        lines = log.read_bytes().splitlines(keepends=True)
        first_question = next(i for i, line in enumerate(lines) if QUESTIONS[0][0].encode() in line)
        # the same run, stopped after the fifth history turn: its folder with the log cut there
        cut = tmp_path / "cut"
        await run_async(config(), ["openai:mock"], results=cut)
        stopped = cut / "t" / "openai_mock"
        (stopped / "results.json").unlink()
        (stopped / "summary.json").unlink()
        cut_log = stopped / "events" / "diary_observe__chat-0.jsonl"
        cut_log.write_bytes(b"".join(lines[:6]))
        assert first_question > 6
        server.requests.clear()
        resumed = await run_async(config(), ["openai:mock"], results=cut, resume=True)
        # the first live call carries the replayed history (user messages only), as the uninterrupted run's did
        assert [r["messages"] for r in server.requests] == asked_whole
    assert cut_log.read_bytes() == log.read_bytes()
    assert resumed.results("openai:mock") == whole.results("openai:mock")


async def test_rescoring_keeps_every_part(tmp_path):
    out = await run_async(config(), [("listener", Listener)], results=tmp_path)
    again = await ltm_harness.rescore_async(out.path)
    assert again.results("listener") == out.results("listener")


async def test_an_agent_that_fails_history_errors_every_part(tmp_path):
    class Deaf(Listener):
        async def observe(self, message):
            raise RuntimeError("cannot hear")

    cfg = config()
    cfg.config.turns.attempts = 1
    out = await run_async(cfg, [("deaf", Deaf)], results=tmp_path)
    results = out.results("deaf")
    assert len(results) == 4 and all(r.status == "errored" for r in results)
    assert "cannot hear" in results[0].reasons[0]


@pytest.mark.parametrize("distance", [40, 120])
async def test_interleaved_questions_come_at_least_the_distance_after_their_evidence(tmp_path, distance):
    out = await run_async(config(mode="interleaved", distance=distance), ["oracle", f"oracle@{distance - 1}"],
                          results=tmp_path)
    results = out.results("oracle")
    distances = [r.gaps[0].memory_distance for r in results]
    assert all(d is not None and d >= distance for d in distances)
    # one turn of evidence: said at the first turn boundary past the distance (a multi-session question's distance
    # runs from its earliest evidence, and it waits for the last)
    single = [d for r, d in zip(results, distances) if r.labels != {"kind": "multi"}]
    assert len(single) == 3 and all(d is not None and d < distance + 40 for d in single)
    assert all(r.score == 1.0 for r in results)
    turns = [e for e in out.events("oracle")["diary_observe__chat-0"] if isinstance(e, TurnEvent)]
    first_q = next(i for i, t in enumerate(turns) if t.question)
    if distance == 40:  # within the history's reach: asked in the middle of it, no filler
        assert any(t.observed for t in turns[first_q:]) and not any(t.kind == "filler" for t in turns)
    else:  # beyond it: asked after the history, filler making up the distance
        assert not any(t.observed for t in turns[first_q:]) and any(t.kind == "filler" for t in turns)
    # oracle@N knows only its last N tokens: every question is beyond N, so it answers none; at the longest
    # distance it answers all
    assert all(r.score == 0.0 for r in out.results(f"oracle@{distance - 1}"))
    wide = await run_async(config(mode="interleaved", distance=distance), [f"oracle@{max(distances)}"],  # type: ignore
                           results=tmp_path / "wide")
    assert all(r.score == 1.0 for r in wide.results(f"oracle@{max(distances)}"))


def test_the_plan_puts_history_in_order_and_waits_for_tail_questions():
    count = get_tokenizer().count
    turns = [HistoryTurn(f"t{i}", f"Line number {i} of the history, with some words.", None) for i in range(10)]
    per_line = count(turns[0].text)
    qs = [Question("Q early?", ("t0",)), Question("Q late?", ("t8",)), Question("Q none?", ())]
    ref = plan_conversation(turns, qs, count, "reference")
    assert ref.script[:10] == [t.text for t in turns] and ref.is_question[10:] == [True] * 3
    assert ref.asked == [0, 1, 2] and ref.needs == [[0], [8], []]
    inter = plan_conversation(turns, qs, count, "interleaved", distance=3 * per_line)
    early = inter.question_lines[0]
    assert inter.asked[0] == 0 and inter.script[early] == "Q early?" and early == 3  # after t0, t1, t2
    late = inter.script.index("Q late?")
    assert late > inter.history_lines["t9"]
    previous = late - 1
    assert inter.waits[previous].tokens >= 3 * per_line - 2 * per_line  # the history runs out: the rest is waited
