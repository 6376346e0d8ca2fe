"""OpenAIChatAgent against a local OpenAI-compatible mock server, through the real openai client."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import pytest
from aiohttp import web

from ltm_harness._agents.specs import agent_factory
from ltm_harness.testing import serve_local
from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.lexical import terms
from ltm_harness._agents.openai_chat import (
    CUT_MARKER,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    OpenAIChatAgent,
    parse_spec,
)
from ltm_harness._errors import LTMError
from ltm_harness._tokens import get_tokenizer

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)
SECRET = "sk-test-SECRET123"
ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
       "OPENAI_CUSTOM_HEADERS", "OPENAI_WEBHOOK_SECRET",
       # the openai client honours proxy variables; the mock is on 127.0.0.1 and must be reached directly
       "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_PREFIX = re.compile(r"^\[[^\]]*\] ")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


class MockOpenAI:
    """POST /v1/chat/completions: records each request; answers questions from the user's statements.

    A user message ending in "?" is answered with the newest earlier user statement that shares a word
    with it (or "I don't know."); anything else gets "OK.". `fail_with` makes the next replies an error.
    """

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.fail_with: tuple[int, object] | None = None

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.fail_with is not None:
            status, payload = self.fail_with
            if isinstance(payload, str):
                return web.Response(status=status, text=payload)
            return web.json_response(payload, status=status)
        users = [_PREFIX.sub("", m["content"]) for m in body["messages"] if m["role"] == "user"]
        question = users[-1] if users else ""
        answer = "OK."
        if question.rstrip().endswith("?"):
            words = set(terms(question))
            answer = next((s for s in reversed(users[:-1]) if words & set(terms(s))), "I don't know.")
        prompt = sum(len(m["content"].split()) for m in body["messages"])
        completion = len(answer.split())
        return web.json_response({
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })


@pytest.fixture
async def mock():
    server = MockOpenAI()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.handle)
    async with serve_local(app) as url:
        server.base_url = f"{url}/v1"
        yield server


def msg(text: str, minutes: int = 0) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=minutes), tokens=get_tokenizer().count(text))


def agent_for(mock: MockOpenAI, spec: str = "openai:mock-model", **kwargs) -> OpenAIChatAgent:
    kwargs.setdefault("max_retries", 0)
    return OpenAIChatAgent(spec, base_url=mock.base_url, **kwargs)


def counted(content: str) -> int:
    """The documented count of one message: its content tokens plus the per-message overhead."""
    return get_tokenizer().count(content) + MESSAGE_OVERHEAD


# -- spec ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, model, ctx", [
    ("openai:m", "m", None),
    ("openai:m@8000", "m", 8000),
    ("openai:m@8k", "m", 8000),
    ("openai:m@8K", "m", 8000),
    ("openai:gpt-4o-mini@128_000", "gpt-4o-mini", 128000),
    ("openai:llama3:8b@4k", "llama3:8b", 4000),
])
def test_spec_accepted(spec, model, ctx):
    assert parse_spec(spec) == (model, ctx)
    agent = OpenAIChatAgent(spec)
    assert (agent.model, agent.max_context) == (model, ctx)


@pytest.mark.parametrize("spec", ["openai:", "openai: ", "openai:m@abc", "openai:m@", "openai:m@0", "openai:@8k", "openai:m@-5"])
def test_spec_rejected(spec):
    with pytest.raises(LTMError):
        OpenAIChatAgent(spec)


def test_factory_builds_without_network_or_key():
    make = agent_factory("openai:gpt-4o-mini@8k")
    agent = make()
    assert isinstance(agent, OpenAIChatAgent)
    assert agent._client is None


def test_tiny_max_context_rejected():
    with pytest.raises(LTMError, match="too small"):
        OpenAIChatAgent("openai:m@20")


# -- talking ---------------------------------------------------------------------------------------
async def test_round_trip_and_usage(mock):
    agent = agent_for(mock, temperature=0.5, max_tokens=50, system_prompt="Be brief.")
    reply = await agent.reply(msg("Hello there."))
    await agent.close()
    assert reply.text == "OK."
    body = mock.requests[0]
    assert body["model"] == "mock-model"
    assert body["temperature"] == 0.5 and body["max_tokens"] == 50
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "[2024-01-01 09:00 UTC] Hello there."},
    ]
    # usage from the response lands in the Reply
    assert reply.prompt_tokens == 2 + 5 and reply.completion_tokens == 1
    # a local base_url needs no key: a dummy one is sent
    assert mock.headers[0]["Authorization"] == "Bearer not-needed"


async def test_history_grows_and_is_sent_with_timestamps(mock):
    agent = agent_for(mock)
    await agent.reply(msg("My favourite colour is Teal.", 0))
    await agent.reply(msg("I live in Lisbon.", 5))
    reply = await agent.reply(msg("What is my favourite colour?", 90))
    await agent.close()
    assert reply.text == "My favourite colour is Teal."
    assert [len(r["messages"]) for r in mock.requests] == [2, 4, 6]  # system + history
    last = mock.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[1]["content"] == "[2024-01-01 09:00 UTC] My favourite colour is Teal."
    assert last[3]["content"] == "[2024-01-01 09:05 UTC] I live in Lisbon."
    assert last[5]["content"] == "[2024-01-01 10:30 UTC] What is my favourite colour?"
    assert last[2] == {"role": "assistant", "content": "OK."}
    # each message was counted once, prefix included
    assert agent.counts == [counted(m["content"]) for m in agent.history]


async def test_timestamp_converted_to_utc(mock):
    agent = agent_for(mock)
    cet = timezone(timedelta(hours=1))
    await agent.reply(AgentMessage(text="Hi.", timestamp=datetime(2024, 3, 1, 10, 15, tzinfo=cet), tokens=2))
    await agent.close()
    assert mock.requests[0]["messages"][-1]["content"] == "[2024-03-01 09:15 UTC] Hi."


async def test_reset_clears_history(mock):
    agent = agent_for(mock)
    await agent.reply(msg("One."))
    await agent.reset()
    await agent.reply(msg("Two.", 1))
    await agent.close()
    assert [m["role"] for m in mock.requests[-1]["messages"]] == ["system", "user"]


# -- the context window ------------------------------------------------------------------------------
STATEMENTS = [f"Statement number {i} is about the {w} that I keep in my garden shed." for i, w in
              enumerate(["rake", "spade", "hose", "wheelbarrow", "lawnmower", "trowel"])]


async def _play(agent: OpenAIChatAgent, lines: list[str]) -> None:
    for i, line in enumerate(lines):
        await agent.reply(msg(line, i))


def _suffix_sum(contents: list[str], k: int) -> int:
    return sum(counted(c) for c in contents[-k:])


async def test_window_at_exact_boundary(mock):
    """A budget of exactly the sum of the newest messages fits them; one token less drops the oldest."""
    system = "Be brief."
    # what the full history looks like when the 4th user message is sent (3 pairs + 1 user)
    full = agent_for(mock, system_prompt=system)
    await _play(full, STATEMENTS[:4])
    await full.close()
    sent_full = mock.requests[-1]["messages"][1:]
    contents = [m["content"] for m in sent_full]
    assert len(contents) == 7
    fixed = counted(system) + REPLY_PRIMING

    # keep the newest 5 messages (user, assistant, user, assistant, user): exactly their sum fits
    exact = fixed + _suffix_sum(contents, 5)
    mock.requests.clear()
    agent = agent_for(mock, f"openai:mock-model@{exact}", system_prompt=system)
    await _play(agent, STATEMENTS[:4])
    await agent.close()
    sent = mock.requests[-1]["messages"]
    assert sent[0] == {"role": "system", "content": system}
    assert sent[1:] == sent_full[-5:]

    # one token less: the oldest of those (a user message) goes, and the assistant reply it leaves
    # at the front goes too, so the window starts with a user message
    mock.requests.clear()
    agent = agent_for(mock, f"openai:mock-model@{exact - 1}", system_prompt=system)
    await _play(agent, STATEMENTS[:4])
    await agent.close()
    assert mock.requests[-1]["messages"][1:] == sent_full[-3:]


async def test_window_boundary_without_system_prompt(mock):
    full = agent_for(mock, system_prompt=None)
    await _play(full, STATEMENTS[:3])
    await full.close()
    contents = [m["content"] for m in mock.requests[-1]["messages"]]
    assert len(contents) == 5
    exact = REPLY_PRIMING + _suffix_sum(contents, 3)
    for budget, keep in ((exact, 3), (exact - 1, 1)):
        mock.requests.clear()
        agent = agent_for(mock, f"openai:mock-model@{budget}", system_prompt=None)
        await _play(agent, STATEMENTS[:3])
        await agent.close()
        assert [m["content"] for m in mock.requests[-1]["messages"]] == contents[-keep:]


async def test_every_request_sends_exactly_the_newest_messages_that_fit(mock):
    """Over a longer conversation, each request is the longest fitting suffix (starting with a user message)."""
    budget = 140
    agent = agent_for(mock, f"openai:mock-model@{budget}", system_prompt="Be brief.")
    lines = STATEMENTS * 3
    history: list[dict] = []
    for i, line in enumerate(lines):
        reply = await agent.reply(msg(line, i))
        content = f"[{(T0 + timedelta(minutes=i)):%Y-%m-%d %H:%M} UTC] {line}"
        history.append({"role": "user", "content": content})
        room = budget - counted("Be brief.") - REPLY_PRIMING
        start = len(history) - 1
        while start > 0 and sum(counted(m["content"]) for m in history[start - 1:]) <= room:
            start -= 1
        while history[start]["role"] != "user":
            start += 1
        assert mock.requests[-1]["messages"][1:] == history[start:], f"turn {i}"
        history.append({"role": "assistant", "content": reply.text})
    await agent.close()
    assert agent._start > 0
    assert agent._window_tokens == sum(agent.counts[agent._start:])


async def test_newest_message_too_long_is_cut_from_the_front(mock):
    budget = 120
    agent = agent_for(mock, f"openai:mock-model@{budget}", system_prompt="Be brief.")
    await agent.reply(msg("A short first line."))
    long_text = " ".join(f"word{i}" for i in range(300)) + " What is the last word?"
    await agent.reply(msg(long_text, 1))
    sent = mock.requests[-1]["messages"]
    await agent.close()
    assert [m["role"] for m in sent] == ["system", "user"]
    content = sent[1]["content"]
    assert content.startswith("[2024-01-01 09:01 UTC] " + CUT_MARKER)
    assert content.endswith("word299 What is the last word?")
    room = budget - counted("Be brief.") - REPLY_PRIMING
    assert room - 3 <= counted(content) <= room  # fills the room, never more
    # the stored history keeps the full message
    assert agent.history[2]["content"].endswith(long_text) and CUT_MARKER not in agent.history[2]["content"]


# -- errors -------------------------------------------------------------------------------------------
async def test_status_error_becomes_user_error(mock):
    mock.fail_with = (400, {"error": {"message": "bad model name", "type": "invalid_request_error"}})
    agent = agent_for(mock)
    with pytest.raises(LTMError) as info:
        await agent.reply(msg("Hello."))
    await agent.close()
    text = str(info.value)
    assert "400" in text and mock.base_url in text and "bad model name" in text
    assert agent.history == [] and agent.counts == []  # the failed turn is not kept


async def test_api_key_never_in_errors(mock):
    # a server that echoes the key back in its error
    mock.fail_with = (401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    agent = agent_for(mock, api_key=SECRET)
    with pytest.raises(LTMError) as info:
        await agent.reply(msg("Hello."))
    await agent.close()
    assert mock.headers[0]["Authorization"] == f"Bearer {SECRET}"  # the key was used
    assert "401" in str(info.value)
    assert SECRET not in str(info.value) and "SECRET123" not in str(info.value)
    assert SECRET not in repr(vars(agent))


async def test_api_key_from_env_never_in_errors(mock, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    mock.fail_with = (500, f"internal error while checking {SECRET}")
    agent = agent_for(mock)
    with pytest.raises(LTMError) as info:
        await agent.reply(msg("Hello."))
    await agent.close()
    assert mock.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert "500" in str(info.value) and SECRET not in str(info.value)


async def test_missing_key_for_remote_endpoint():
    agent = OpenAIChatAgent("openai:gpt-4o-mini", base_url="https://api.example.invalid/v1")
    with pytest.raises(LTMError, match="OPENAI_API_KEY") as info:
        await agent.reply(msg("Hello."))
    assert "api.example.invalid" in str(info.value)
    assert agent._client is None and agent.history == []  # nothing was sent
    await agent.close()


async def test_unreachable_endpoint(unused_tcp_port):
    agent = OpenAIChatAgent("openai:m", base_url=f"http://127.0.0.1:{unused_tcp_port}/v1", max_retries=0)
    with pytest.raises(LTMError, match="cannot be reached"):
        await agent.reply(msg("Hello."))
    await agent.close()


# -- a whole run --------------------------------------------------------------------------------------
async def test_end_to_end_run(mock, tmp_path, monkeypatch):
    from ltm_harness._runner.config import RunConfig
    from ltm_harness._runner.prepare import prepare
    from ltm_harness._runner.run import run_all

    monkeypatch.setenv("OPENAI_BASE_URL", mock.base_url)
    cfg = RunConfig.model_validate({"config": {"run_name": "t"}, "datasets": {
        "args": {"memory_span": 2000, "dataset_examples": 2}, "datasets": [{"name": "colours"}]}})
    # the same mock with the whole history, and with a window too small to hold the statements
    summary = await run_all(prepare(cfg, tmp_path), ["openai:mock-model", "openai:mock-model@300"])
    full, small = summary.agents
    assert (full.agent, small.agent) == ("openai:mock-model", "openai:mock-model@300")
    for agent in (full, small):
        assert sum(d.tests for d in agent.datasets) == 2
        assert all(d.errored == 0 and d.scored == 2 for d in agent.datasets)
        assert agent.agent_prompt_tokens > 0 and agent.agent_completion_tokens > 0
    results = (tmp_path / "t" / "openai_mock-model" / "results.json").read_text()
    assert results.count('"example_id"') == 2
    assert len(mock.requests) == full.turns + small.turns
    # the mock echoes the last matching statement: right when the statement is still in the window
    assert full.benchmark_score > 0
    assert full.agent_prompt_tokens > small.agent_prompt_tokens


def test_the_run_s_tokenizer_reaches_the_chat_agent():
    from ltm_harness._agents.specs import agent_factory

    agent = agent_factory("openai:m@8k", tokenizer="o200k_base")()
    assert agent._tokenizer.encoding_name == "o200k_base"


async def test_base_url_key_and_settings_from_the_config(mock, tmp_path, monkeypatch):
    """The config's `openai:` section reaches the agent; the key comes from the variable it names."""
    from ltm_harness.testing import make_config, run_config

    monkeypatch.setenv("MY_LAB_KEY", "sk-from-config-SECRET42")
    cfg = make_config(["colours"], span=1000, openai={"base_url": mock.base_url, "api_key_env": "MY_LAB_KEY",
                                                      "system_prompt": "Lab prompt.", "max_tokens": 50})
    summary = await run_config(cfg, tmp_path, ["openai:lab-model"])
    assert not summary.errors and summary.agents[0].turns == len(mock.requests) > 0
    assert all(h["Authorization"] == "Bearer sk-from-config-SECRET42" for h in mock.headers)
    first = mock.requests[0]
    assert first["model"] == "lab-model" and first["max_tokens"] == 50
    assert first["messages"][0] == {"role": "system", "content": "Lab prompt."}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "SECRET42" not in path.read_text(errors="replace"), path


def test_a_missing_key_variable_is_named(tmp_path, monkeypatch):
    from ltm_harness._runner.config import OpenAIOptions
    from ltm_harness._errors import LTMError

    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(LTMError, match="config.openai.api_key_env: the environment variable NO_SUCH_KEY_VAR is not set"):
        OpenAIOptions(api_key_env="NO_SUCH_KEY_VAR").agent_kwargs()
    assert "sk-literal" not in repr(OpenAIOptions(api_key="sk-literal"))
