"""`estimate` against a real run on the mock server: calls and tokens sent within 2%."""

from __future__ import annotations

import asyncio
import json

from ltm_harness._cli.main import main as cli
from ltm_harness._runner.estimate import estimate
from ltm_harness.testing import make_config, run_config

DATASETS = ["colours", "shopping", "name_list", "jokes", "sallyanne", "prospective_memory", "trigger_response"]


async def test_the_estimate_matches_a_real_run_within_two_percent(tmp_path, mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    cfg = make_config(DATASETS, span=16000, examples=1, llm={"prices": {"mock": {"prompt": 1.0, "completion": 4.0}}})
    summary = await run_config(cfg, tmp_path / "results", ["openai:mock", "openai:mock@4000"])
    real = {a.agent: a for a in summary.agents}
    full, window = await estimate(cfg, "openai:mock@4000")
    assert window.max_context == 4000 and full.max_context is None
    for est, agent in ((full, "openai:mock"), (window, "openai:mock@4000")):
        got = real[agent]
        assert abs(est.agent_calls - got.turns) <= 0.02 * got.turns, (agent, est.agent_calls, got.turns)
        assert abs(est.prompt_tokens - got.agent_prompt_tokens) <= 0.02 * got.agent_prompt_tokens, (
            agent, est.prompt_tokens, got.agent_prompt_tokens)
        assert est.cost_usd is not None and abs(est.cost_usd - got.cost_usd) <= 0.02 * got.cost_usd
    assert window.prompt_tokens < full.prompt_tokens / 2


async def test_the_estimate_command_calls_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = await asyncio.to_thread(cli, ["estimate", "-a", "openai:gpt-4o-mini@2k", "--span", "2000", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["max_context"] for r in rows] == [None, 2000]
    assert rows[0]["prompt_tokens"] > rows[1]["prompt_tokens"] > 0 and rows[0]["cost_usd"] > 0
    assert not (tmp_path / "results").exists()  # a dry run leaves nothing behind


async def test_a_named_agent_is_estimated_by_its_spec(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = await asyncio.to_thread(cli, ["estimate", "-a", "mini=openai:gpt-4o-mini@2k", "-a", "openai:gpt-4o-mini@2k",
                                         "--span", "2000", "--json"])
    rows = json.loads(capsys.readouterr().out)[1::2]  # each agent's row for its 2k window
    assert code == 0 and [r["agent"] for r in rows] == ["mini", "openai:gpt-4o-mini@2k"]
    assert all(r["model"] == "gpt-4o-mini" and r["max_context"] == 2000 and r["cost_usd"] > 0 for r in rows)
    assert rows[0]["prompt_tokens"] == rows[1]["prompt_tokens"]


# -- speed without approximation, cached input, context warnings -------------------------------------------------

import random  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

from ltm_harness._agents.base import AgentMessage  # noqa: E402
from ltm_harness._agents.openai_chat import OpenAIChatAgent, timestamp_prefix  # noqa: E402
from ltm_harness._llm.client import MESSAGE_OVERHEAD, REPLY_PRIMING  # noqa: E402
from ltm_harness._llm.contexts import ContextTable  # noqa: E402
from ltm_harness._llm.pricing import PriceTable  # noqa: E402
from ltm_harness._runner.estimate import PrefixedCount, SimulatedChatAgent, estimate_many  # noqa: E402
from ltm_harness._tokens import get_tokenizer  # noqa: E402

PIECES = [" ", "  ", "\n", "\n\n", " \n", "\t", "a", "Hello", "'s", "'ll", "123", "4567", "...", "(", "]", "é", "日本",
          "😀", ",", "don't", "\r\n", "—", "$5", '{"answer": 42}', "x" * 300]


def test_a_prefixed_message_is_counted_exactly_from_its_known_count():
    count, prefixed, rng = get_tokenizer().count, PrefixedCount("cl100k_base"), random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
        prefix = timestamp_prefix(datetime(2024, 1, rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)))
        assert prefixed.count(prefix, text, count(text)) == count(prefix + text), repr(text)


async def test_the_simulated_prompts_are_the_ones_the_adapter_builds():
    """Every window's prompt, from running counts, equals the count of what the `openai:` adapter would send."""
    count, rng = get_tokenizer().count, random.Random(5)
    sim = SimulatedChatAgent("estimate", [None, 300, 2000])
    real = {w: OpenAIChatAgent(f"openai:x@{w}" if w else "openai:x", base_url="http://127.0.0.1:9/v1") for w in sim.windows}
    for i in range(120):
        words = rng.randint(1, 400 if i % 10 else 1500)  # now and then a message larger than the small window
        text = " ".join(rng.choice(["tell", "me", "about", "it", "42", "again."]) for _ in range(words))
        text += "?" if i % 3 == 0 else ""
        message = AgentMessage(text=text, timestamp=datetime(2024, 1, 1, 9, i % 60, tzinfo=timezone.utc),
                               tokens=count(text))
        reply = await sim.reply(message)
        for w, agent in real.items():
            agent._add("user", timestamp_prefix(message.timestamp) + text)
            sent = sum(count(m["content"]) + MESSAGE_OVERHEAD for m in agent.window()) + REPLY_PRIMING
            assert sim.counters[w]._last_prompt in (0, sent)  # 0: the newest was cut, nothing cached after it
            assert sim.counters[w].largest >= sent
            if w is None:
                assert reply.prompt_tokens == sim.counters[w]._last_prompt == sent
            agent._add("assistant", reply.text)
    assert sim.counters[None].largest > 2000 >= sim.counters[2000].largest


async def test_cached_input_and_its_price(tmp_path):
    cfg = make_config(["colours", "kv"], span=4000, examples=1)
    rows = await estimate_many(cfg, ["openai:gpt-4o-mini", "openai:gpt-4"])
    mini, old = rows
    # full context: every prompt but the first few (under 1024 tokens) repeats the one before it as its prefix
    assert 0.5 * mini.prompt_tokens < mini.cached_prompt_tokens < mini.prompt_tokens
    assert mini.cost_cached_usd is not None and mini.cost_usd is not None and mini.cost_cached_usd < mini.cost_usd
    prices = PriceTable()
    assert mini.cost_cached_usd == prices.cost_cached("gpt-4o-mini", mini.prompt_tokens, mini.cached_prompt_tokens,
                                                      mini.completion_tokens)
    assert old.cached_prompt_tokens == mini.cached_prompt_tokens and old.cost_cached_usd is None  # no discount
    assert prices.cost_cached("unknown-model", 10, 5, 1) is None


async def test_a_model_whose_context_is_exceeded_is_warned_about_and_the_table_is_overridable():
    cfg = make_config(["colours", "kv"], span=4000, examples=1, llm={"contexts": {"gpt-4o-mini": 2000}})
    assert ContextTable({"x": 5}).context("gpt-4o-2024-08-06") == 128_000 and ContextTable().context("mock") is None
    rows = await estimate_many(cfg, ["openai:gpt-4o-mini@1500", "openai:gpt-4o", "openai:mock"])
    by = {(r.agent, r.max_context): r for r in rows}
    full = by[("openai:gpt-4o-mini@1500", None)]
    assert full.model_context == 2000 and full.largest_prompt > 2000
    assert full.warning == (f"openai:gpt-4o-mini@1500: prompts reach {full.largest_prompt:,} tokens, beyond "
                            "gpt-4o-mini's context of 2,000 tokens; give it a window, e.g. openai:gpt-4o-mini@2k")
    assert by[("openai:gpt-4o-mini@1500", 1500)].warning is None  # the window fits
    assert by[("openai:gpt-4o", None)].warning is None and by[("openai:mock", None)].model_context is None
    assert "contexts" not in json.loads(make_config(["kv"]).model_dump_json())["config"]["llm"]  # saved only when set


async def test_every_agent_and_window_comes_from_one_played_conversation(monkeypatch):
    import ltm_harness._runner.estimate as est

    played = []
    original = est.run_agent

    async def counting(prepared, spec, make, on_turn=None, llm=None):
        played.append(spec)
        return await original(prepared, spec, make, on_turn, llm)

    monkeypatch.setattr(est, "run_agent", counting)
    cfg = make_config(["kv"], span=2000, examples=1)
    rows = await estimate_many(cfg, ["openai:gpt-4o", "openai:gpt-4o-mini@1k", "b=openai:gpt-4.1@1k"])
    assert played == [est.SIMULATION]
    assert [(r.agent, r.max_context) for r in rows] == [("openai:gpt-4o", None), ("openai:gpt-4o-mini@1k", None),
                                                        ("openai:gpt-4o-mini@1k", 1000), ("b", None), ("b", 1000)]
    assert rows[2].prompt_tokens == rows[4].prompt_tokens < rows[0].prompt_tokens == rows[1].prompt_tokens


async def test_the_estimate_command_shows_cached_prices_and_warnings(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = await asyncio.to_thread(cli, ["estimate", "-a", "openai:gpt-4", "-a", "openai:gpt-4o-mini", "--span", "12000",
                                         "--datasets", "colours,kv,jokes"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "cached" in out and "$" in out and "!" in out and "llm.contexts" in out
    assert err.count("warning: openai:gpt-4: prompts reach") == 1 and "beyond gpt-4's context of 8,192 tokens" in err
