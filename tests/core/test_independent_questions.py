"""Independent questions (LoCoMo's reference protocol): each question is answered from the memory the history left,
and the agent goes back to that state once the reply is recorded, so no question sees another. Per agent kind: what
each question saw, calls per question, the fallback for an agent that cannot go back (asked in sequence, said in the
warnings), the event log (`went_back`), kill-and-resume in the middle of the questions, and the estimate."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._api import run_async
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._report.load import load_run
from ltm_harness._runner.estimate import estimate
from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness._store.events import TurnEvent, parse_event
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
HISTORY = {"locomo__synthetic-1": 6, "locomo__synthetic-2": 3}  # history turns of each conversation
QUESTIONS = 11


def config(**args):
    return make_config([{"name": "locomo", "args": {"data_file": str(DATA), **args}}], span=4000, examples=2)


def is_question(text: str) -> bool:
    return "?" in text and ":" not in text.split("?")[0][:12]  # history lines start with "Name: "


class Notebook(Agent):
    """Remembers every message it hears; each answer records what it held when asked (`seen`, per conversation).
    Goes back with a snapshot (the length of its notebook) and a rewind."""

    seen: list[list[str]] = []
    calls: int = 0
    restored: int = 0

    def __init__(self, spec: str | None = None) -> None:
        super().__init__(spec)
        self.heard: list[str] = []

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        type(self).calls += 1
        self.heard.append(message.text)
        type(self).seen.append(list(self.heard))
        return Reply(text="Not mentioned in the conversation.")

    async def observe(self, message: AgentMessage) -> None:
        self.heard.append(f"{message.role}|{message.text}")

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        type(self).restored += len(turns)
        for message, _ in turns:
            self.heard.append(f"{message.role}|{message.text}" if message.observe else message.text)

    def snapshot(self) -> int:
        return len(self.heard)

    def rewind(self, snapshot: int) -> None:
        del self.heard[snapshot:]


class Diary(Notebook):
    """The same memory with no way back."""

    snapshot = Agent.snapshot  # type: ignore[assignment]
    rewind = Agent.rewind  # type: ignore[assignment]


@pytest.fixture
async def mock_llm(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


@pytest.fixture(autouse=True)
def fresh_counts():
    for cls in (Notebook, Diary):
        cls.seen, cls.calls, cls.restored = [], 0, 0


def turns_of(out, agent: str) -> dict[str, list[TurnEvent]]:
    return {name: [e for e in events if isinstance(e, TurnEvent)] for name, events in out.events(agent).items()}


async def test_a_python_agent_that_can_go_back_answers_each_question_from_the_history_alone(tmp_path):
    out = await run_async(config(), [("notebook", Notebook)], results=tmp_path)
    assert Notebook.calls == QUESTIONS  # one call per question, none for the history
    for seen in Notebook.seen:  # what the agent held when asked: the history (in its speakers' roles) and the question
        assert sum(not line.partition("|")[0] in ("Ada", "Bruno", "Chen", "Dara") for line in seen) == 1
        assert len(seen) - 1 in HISTORY.values()
    assert Notebook.seen[0][0].startswith("Ada|Ada: Hi Bruno!")  # a named speaker, and its line as said
    summary = out.agent_summary("notebook")
    assert summary.questions is not None and (summary.questions.independent, summary.questions.in_sequence) == (11, 0)
    assert out.warnings == []
    for name, turns in turns_of(out, "notebook").items():
        asked = [t for t in turns if t.question]
        assert all(t.went_back is True for t in asked) and all(t.went_back is None for t in turns if not t.question)
        # memory distance and positions: every question starts where the history ended (none is in the memory)
        assert {t.pos for t in asked} == {turns[HISTORY[name] - 1].pos + turns[HISTORY[name] - 1].user_tokens}
        assert [t.role for t in turns if t.observed][:2] == (["Ada", "Bruno"] if name.endswith("1") else ["Chen", "Dara"])


async def test_a_python_agent_that_cannot_go_back_is_asked_in_sequence_and_the_run_says_so(tmp_path):
    out = await run_async(config(), [("diary", Diary)], results=tmp_path)
    assert Diary.calls == QUESTIONS
    assert sorted(sum(not line.partition("|")[0] in ("Ada", "Bruno", "Chen", "Dara") for line in seen)
                  for seen in Diary.seen) == sorted([*range(1, 10), *range(1, 3)])  # each sees the earlier ones
    summary = out.agent_summary("diary")
    assert summary.questions is not None and (summary.questions.independent, summary.questions.in_sequence) == (0, 11)
    [warning] = out.warnings
    assert "agent diary cannot go back" in warning and "11 questions" in warning and "in sequence" in warning
    assert warning in load_run(out.path).warnings  # the report shows it
    asked = [t for turns in turns_of(out, "diary").values() for t in turns if t.question]
    assert all(t.went_back is False for t in asked)
    assert len({t.pos for t in asked}) == len(asked)  # the conversation grows with each question


async def test_sequential_keeps_the_old_protocol_and_interleaved_cannot_be_independent(tmp_path):
    out = await run_async(config(questions="sequential"), [("notebook", Notebook)], results=tmp_path)
    assert out.agent_summary("notebook").questions is None and out.warnings == []
    assert all(t.went_back is None for turns in turns_of(out, "notebook").values() for t in turns)
    from ltm_harness._errors import LTMError

    with pytest.raises(LTMError, match="args.questions: independent questions are the reference mode's protocol"):
        await run_async(config(mode="interleaved", questions="independent"), ["null"], results=tmp_path / "b")


async def test_openai_agent_sends_the_history_and_one_question_per_call(tmp_path, mock_llm):
    out = await run_async(config(), ["openai:mock", "openai:mock@120"], results=tmp_path)
    requests = mock_llm.requests
    assert len(requests) == 2 * QUESTIONS  # one call per question, nothing to go back (its own context)
    for body in requests:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert sum(is_question(u.partition("] ")[2]) for u in users) == 1 and is_question(users[-1].partition("] ")[2])
        assert not any(m["role"] == "assistant" for m in body["messages"])  # no earlier answer either
    sizes = sorted(len(b["messages"]) - 2 for b in requests)  # the history each question came with
    assert sizes[-9:] == [HISTORY["locomo__synthetic-1"]] * 9  # the full agent's: all of it, and nothing else
    # the window is exact after going back: every prompt of the @120 agent within its budget
    window = out.agent_summary("openai:mock@120")
    assert window.questions is not None and window.questions.independent == QUESTIONS
    for turns in turns_of(out, "openai:mock@120").values():
        assert all(t.prompt_tokens is not None and t.prompt_tokens <= 120 for t in turns if t.question)


async def test_retrieval_does_not_parrot_an_earlier_question(tmp_path):
    """The retrieval baseline remembers what it is told: asked in sequence, a question's "Not mentioned" hint is
    there for the next; asked independently, never."""
    independent = await run_async(config(), ["retrieval"], results=tmp_path / "a")
    sequential = await run_async(config(questions="sequential"), ["retrieval"], results=tmp_path / "b")

    def replies(out) -> list[str]:
        return [t.reply for turns in turns_of(out, "retrieval").values() for t in turns if t.question]

    hint = "not mentioned in the conversation"
    assert not any(hint in r.lower() for r in replies(independent))
    assert any(hint in r.lower() for r in replies(sequential))


def _cut(log: Path, k: int) -> None:
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:k]) + lines[k][: len(lines[k]) // 2])


@pytest.mark.parametrize("agent", ["notebook", "retrieval", "openai:mock"])
async def test_killed_in_the_middle_of_the_questions_the_resumed_run_equals_the_uninterrupted_one(tmp_path, agent,
                                                                                                   mock_llm):
    cfg = config()
    agents = [("notebook", Notebook)] if agent == "notebook" else [agent]
    await run_all(prepare(cfg, tmp_path / "ref"), agents)
    folder = agent.replace(":", "_")
    ref = tmp_path / "ref" / "t" / folder
    log = ref / "events" / "locomo__synthetic-1.jsonl"
    lines = log.read_bytes().splitlines()
    asked = [i for i, line in enumerate(lines) if isinstance(e := parse_event(line), TurnEvent) and e.question]
    k = asked[3] + 1  # the fourth question recorded (and gone back from), the fifth torn
    work = tmp_path / "work"
    shutil.copytree(tmp_path / "ref", work)
    _cut(work / "t" / folder / "events" / "locomo__synthetic-1.jsonl", k)
    (work / "t" / folder / "events" / "locomo__synthetic-2.jsonl").unlink()
    for name in ("results.json", "summary.json"):
        (work / "t" / folder / name).unlink()
    (work / "t" / "summary.json").unlink()
    Notebook.seen, Notebook.calls, Notebook.restored = [], 0, 0
    calls_before = len(mock_llm.requests)
    await run_all(prepare(cfg, work, resume=True), agents, mode=Resume())
    if agent == "openai:mock":  # only the questions not recorded were asked; each with the history alone
        resumed = mock_llm.requests[calls_before:]
        assert len(resumed) == 9 - 4 + 2
        assert all(len(body["messages"]) - 2 in HISTORY.values() for body in resumed)
    if agent == "notebook":
        assert Notebook.restored == HISTORY["locomo__synthetic-1"]  # rebuilt to the end of the history: no question
        assert Notebook.calls == 9 - 4 + 2  # the questions not recorded, and the other conversation's
        assert all(len(seen) - 1 in HISTORY.values() for seen in Notebook.seen)  # the history and one question
    for rel in ("results.json", "events/locomo__synthetic-1.jsonl", "events/locomo__synthetic-2.jsonl"):
        assert (work / "t" / folder / rel).read_bytes() == (ref / rel).read_bytes(), rel
    a, b = (json.loads((d / "summary.json").read_text()) for d in (ref, work / "t" / folder))
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert a == b and a["questions"] == {"independent": 11, "in_sequence": 0}


async def test_rescoring_keeps_the_protocol(tmp_path):
    from ltm_harness._api import rescore_async

    out = await run_async(config(), ["retrieval"], results=tmp_path)
    again = await rescore_async(out.path)
    assert again.agent_summary("retrieval").questions == out.agent_summary("retrieval").questions
    assert again.results("retrieval") == out.results("retrieval")


async def test_the_estimate_pays_the_history_once_per_question_not_the_earlier_questions(tmp_path, mock_llm):
    out = await run_async(config(), ["openai:mock", "openai:mock@120"], results=tmp_path)
    for agent in ("openai:mock", "openai:mock@120"):
        real = out.agent_summary(agent)
        est = (await estimate(config(), agent))[-1]
        assert est.agent_calls == real.turns - real.observed_turns == QUESTIONS
        # the simulated replies differ from the mock's, but no reply is in any later prompt: exact, window or not
        assert est.prompt_tokens == real.agent_prompt_tokens, agent
    [full] = await estimate(config(), "openai:mock")
    sequential = await estimate(config(questions="sequential"), "openai:mock")
    assert sequential[0].prompt_tokens > full.prompt_tokens


@pytest.mark.parametrize("fields, says", [
    ({"roles": ["user", "assistant"]}, "roles has 2 entries but script has 3 lines"),
    ({"roles": ["user", " ", "user"]}, "roles[1] is empty"),
    ({"roles": ["assistant", "user", "user"], "observe": [False, False, False]},
     "line 0 is said by 'assistant' but is not history"),
])
def test_roles_in_a_definition_are_checked(fields, says):
    from pydantic import ValidationError

    from ltm_harness import TestExample

    base = {"dataset_name": "d", "example_id": "0", "script": ["a", "b", "c?"], "is_question": [False, False, True],
            "observe": [True, True, False]}
    with pytest.raises(ValidationError, match=re.escape(says)):
        TestExample(**{**base, **fields})
    ok = TestExample(**base, roles=["user", "assistant", "user"], independent_questions=True)
    assert ok.role(1) == "assistant" and TestExample(**base).role(1) == "user"
    # left out of the definition file unless given: definitions written before stay byte for byte
    assert "roles" not in TestExample(**base).model_dump_json() and '"roles"' in ok.model_dump_json()


@pytest.mark.parametrize("hangs", ["snapshot", "rewind"])
async def test_a_snapshot_or_rewind_that_never_answers_waits_for_the_turn_timeout_not_the_http_one(tmp_path, monkeypatch,
                                                                                                  hangs):
    import asyncio

    from aiohttp import web

    from ltm_harness.testing import serve_local

    monkeypatch.setenv("LTM_HTTP_TIMEOUT", "60")  # the HTTP agent's own timeout: far longer than the turn's
    released = asyncio.Event()  # set once the run is over, so the server can stop

    async def handle(request: web.Request) -> web.Response:
        data = await request.json()
        if hangs in data:
            await released.wait()  # no answer while the run goes on
        if "snapshot" in data:
            return web.json_response({"snapshot": 1})
        return web.json_response({} if "rewind" in data or data.get("observe") else {"reply": "Not mentioned."})

    app = web.Application()
    app.router.add_post("/chat", handle)
    cfg = config()
    cfg.config.turns.timeout = 0.5
    async with serve_local(app) as url:
        try:
            out = await run_async(cfg, [f"{url}/chat"], results=tmp_path)
        finally:
            released.set()
    [error] = out.summary.errors.values()
    assert "no answer within 0.5 s (config.turns.timeout)" in error
    assert ("take a snapshot" if hangs == "snapshot" else "go back to its state") in error
