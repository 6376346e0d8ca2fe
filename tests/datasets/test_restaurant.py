"""restaurant: a dynamic role-play whose script follows the agent's replies; test-LLM calls are recorded and replayed."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_agent
from ltm_harness.testing import make_config, run_config

MENU = {"drinks": ["ginger beer", "mint tea", "mango lassi"],
        "mains": ["lamb tagine", "duck confit", "prawn linguine", "pumpkin gnocchi"],
        "desserts": ["lemon posset", "apple crumble", "mango sorbet"]}


def dataset():
    return known_datasets()["restaurant"](memory_span=4000, seed=3)


def example_with_menu():
    ex = dataset().generate_examples(1)[0]
    ex.extra["menu"] = MENU
    return ex


@pytest.mark.parametrize("replies, points, why", [
    (["Ginger beer, please.", "The duck confit.", "Then the pumpkin gnocchi.",
      "I had the ginger beer and the pumpkin gnocchi.", "Lemon posset!"], 5, "all right"),
    (["Water.", "Something warm.", "Anything.", "I don't remember.", "Tiramisu."], 0, "nothing from the menu"),
    (["Mint tea.", "The duck confit.", "Oh, then the duck confit anyway.", "Mint tea and duck confit.", "No thanks."],
     2, "re-ordering the dish that ran out earns no change point, and recall must name the dish served"),
    (["Mint tea.", "The duck confit.", "The lamb tagine then.", "I had mint tea and the duck confit.",
      "Apple crumble"], 4, "recalling the dish that ran out instead of the one served"),
])
def test_scoring(replies, points, why):
    ex = example_with_menu()
    score, max_score, reasons = dataset().evaluate_example(ex, ["q"] * 5, replies)
    assert (score, max_score) == (points, 5.0), (why, reasons)


class Customer(Agent):
    """Orders the last drink, the second main, then the third, and remembers what was served."""

    def __init__(self) -> None:
        super().__init__("customer")
        self.menu: dict[str, list[str]] = {}
        self.served: list[str] = []

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        text = message.text
        if "Here is our menu." in text:
            for part, items in re.findall(r"(drinks|mains|desserts): ([^;]+?)(?:;|\.$)", text):
                self.menu[part] = [i.strip() for i in items.split(",")]
            return Reply(text="Thank you.")
        if "to drink?" in text and "remind" not in text:
            self.served.append(self.menu["drinks"][-1])
            return Reply(text=f"I'd like the {self.menu['drinks'][-1]}.")
        if "like to eat?" in text:
            return Reply(text=f"The {self.menu['mains'][1]}, please.")
        if "instead?" in text:
            self.served.append(self.menu["mains"][2])
            return Reply(text=f"Then the {self.menu['mains'][2]}.")
        if "remind me" in text:
            return Reply(text=" and ".join(self.served))
        if "dessert" in text:
            return Reply(text=f"The {self.menu['desserts'][-1]}.")
        return Reply(text="OK.")


async def test_the_script_follows_the_agents_replies(tmp_path):
    cfg = make_config(["restaurant"], span=3000, examples=2)
    prepared = prepare(cfg, tmp_path)
    run = await run_agent(prepared, "customer", Customer)
    assert [r.score for r in run.results] == [5.0, 5.0]
    said = [json.loads(line) for line in (tmp_path / "t" / "customer" / "events.jsonl").open()]
    said = [e["user"] for e in said if e["type"] == "turn" and e["kind"] == "test"]
    menus = [e for e in said if "Here is our menu." in e]
    menu = dict(re.findall(r"(mains): ([^;]+?);", menus[0]))["mains"].split(", ")
    assert any(f"run out of the {menu[1]}" in e for e in said)  # the dish this agent ordered ran out
    assert any(f"Here is your {menu[2]}." in e for e in said)



async def test_waiter_llm_calls_are_recorded_and_replayed(tmp_path, monkeypatch):
    async with MockLLMServer() as mock:
        monkeypatch.setenv("OPENAI_BASE_URL", mock.url)
        cfg = make_config(["restaurant"], span=3000, examples=1,
                          test_llm={"model": "mock-fixed:What a lovely evening to dine with us."})
        summary = await run_config(cfg, tmp_path / "results", ["oracle"])
        assert summary.agents[0].benchmark_score == 1.0
        run_dir = tmp_path / "results" / "t"
        events = [json.loads(line) for line in (run_dir / "oracle" / "events.jsonl").open()]
        calls = [e for e in events if e["type"] == "llm_call"]
        assert len(calls) == 3 and {c["role"] for c in calls} == {"test"}
        assert all(c["response"] == "What a lovely evening to dine with us." for c in calls)
        assert sum("What a lovely evening" in e.get("user", "") for e in events if e["type"] == "turn") == 3
        assert summary.agents[0].usage.calls["test"] == 3
        requests = mock.stats["requests"]
        before = (run_dir / "oracle" / "results.json").read_text()
        assert await asyncio.to_thread(cli, ["rescore", str(run_dir)]) == 0
        assert mock.stats["requests"] == requests  # replayed from the log, not asked again
        assert (run_dir / "oracle" / "results.json").read_text() == before
        assert [json.loads(line) for line in (run_dir / "oracle" / "events.jsonl").open()] == events


async def test_without_a_test_llm_the_waiter_has_no_small_talk(tmp_path):
    cfg = make_config(["restaurant"], span=3000, examples=1)
    await run_config(cfg, tmp_path, ["oracle"])
    events = [json.loads(line) for line in (tmp_path / "t" / "oracle" / "events.jsonl").open()]
    assert not [e for e in events if e["type"] == "llm_call"]
