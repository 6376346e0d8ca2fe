"""A storm of faults that the turn policy overcomes leaves no trace in what a run is: the same run with and without
the faults writes byte-identical `events.jsonl` and `results.json`, for every kind of agent. The failed tries are
wall-clock history: they are in the log's side file (`events.wall`), each with its error and times.

Agents: an HTTP agent (docs/http-agent.md) whose server fails half its requests (HTTP 500, 429 with Retry-After,
503, a dropped connection, a body that is not JSON, no answer within the request timeout), an `openai:` agent whose
mock endpoint does the same (with the LLM client's own retries off, so that every fault is a failed try of its turn),
and a Python agent that raises, stalls past the turn timeout or returns something that is not a reply, then answers.
Each agent remembers what it is told and answers from that, and fails before it reads a message, so the answers
depend only on the conversation.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from ltm_harness._agents.lexical import terms
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer
from ltm_harness._store.eventlog import read_failed_tries, read_wall_facts
from ltm_harness.testing import serve_local

RUN = "storm"
DATASETS = ["colours", "names", "kv", "delayed_recall"]
TIMEOUT = 0.3  # seconds: a try that stalls is cut after this (the HTTP request timeout, the turn timeout)
OUTPUTS = ("events.jsonl", "results.json")


def write_config(path: Path, agent: str, **config: Any) -> Path:
    path.write_text(yaml.safe_dump({
        "config": {"run_name": RUN, "agents": [agent], "turns": {"attempts": 12, "backoff": 0.0}, **config},
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1}, "datasets": [{"name": d} for d in DATASETS]},
    }))
    return path


async def run(config: Path, results: Path) -> None:
    code = await asyncio.to_thread(cli, ["run", "-c", str(config), "--results", str(results), "--quiet", "--no-report"])
    assert code == 0


def outputs(results: Path) -> tuple[Path, dict[str, bytes]]:
    (agent,) = [p for p in (results / RUN).iterdir() if (p / "events.jsonl").is_file()]
    return agent, {name: (agent / name).read_bytes() for name in OUTPUTS}


async def storm_changes_nothing(config: Path, tmp_path: Path, start_storm: Any) -> list[str]:
    """Run `config` calm, then in the storm `start_storm()` raises; the outputs must be byte-identical. Returns the
    errors of the failed tries, read from the stormy run's side file."""
    await run(config, tmp_path / "calm")
    calm_folder, calm = outputs(tmp_path / "calm")
    assert not read_failed_tries(calm_folder / "events.jsonl")  # no fault, no failed try
    start_storm()
    await run(config, tmp_path / "stormy")
    folder, stormy = outputs(tmp_path / "stormy")
    assert folder.name == calm_folder.name
    for name in OUTPUTS:
        assert stormy[name] == calm[name], f"{name} differs under the storm"
    tries = read_failed_tries(folder / "events.jsonl")
    lines = stormy["events.jsonl"].decode().splitlines()
    assert tries and all('"type":"turn"' in lines[n - 1] and '"failed":false' in lines[n - 1] for n in tries)
    failed = [t for turn in tries.values() for t in turn]
    assert all(t.started.tzinfo is not None and t.latency_ms >= 0 for t in failed)
    assert await asyncio.to_thread(cli, ["report", str(tmp_path / "stormy" / RUN)]) == 0  # the report counts them
    assert f"{len(failed):,} failed tries of turns" in (tmp_path / "stormy" / RUN / "report.html").read_text()
    return [t.error for t in failed]


# -- an HTTP agent --------------------------------------------------------------------------------------------------

HTTP_FAULTS = ("500", "429", "503", "drop", "not-json", "stall")


class StormyHTTPAgent:
    """Remembers per session what it was told; answers a question with the newest statement sharing a word. In a
    storm, each request fails with probability 1/2 (the first ones with each fault once), before it is read."""

    def __init__(self) -> None:
        self.memory: dict[str, list[str]] = {}
        self.rng: random.Random | None = None
        self.script: list[str] = []
        self.stats: Counter[str] = Counter()

    def storm(self) -> None:
        self.rng, self.script = random.Random(22), list(HTTP_FAULTS)

    def outcome(self) -> str:
        if self.script:
            return self.script.pop(0)
        if self.rng is None or self.rng.random() < 0.5:
            return "ok"
        return self.rng.choice(HTTP_FAULTS)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        outcome = self.outcome()
        self.stats[outcome] += 1
        if outcome in ("429", "503"):
            return web.Response(status=int(outcome), headers={"Retry-After": "0.01"})
        if outcome == "500":
            return web.Response(status=500, text="internal error")
        if outcome == "drop":
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)
        if outcome == "not-json":
            return web.Response(text="<html>busy</html>", content_type="text/html")
        if outcome == "stall":
            for _ in range(int(3 * TIMEOUT / 0.01)):  # until the client has given up (or long after it should have)
                if request.transport is None or request.transport.is_closing():
                    break
                await asyncio.sleep(0.01)
            return web.Response(status=499)
        data = await request.json()
        said = self.memory.setdefault(data["session"], [])
        text = data["message"]
        if text.rstrip().endswith("?"):
            words = set(terms(text))
            reply = next((s for s in reversed(said) if words & set(terms(s))), "I don't know.")
        else:
            said.append(text)
            reply = "OK."
        return web.json_response({"reply": reply, "prompt_tokens": 10 * len(said), "completion_tokens": len(reply.split()),
                                  "cost_usd": 0.001})


async def test_an_http_agent_in_a_storm_of_faults_writes_the_calm_run(tmp_path: Path) -> None:
    agent = StormyHTTPAgent()
    app = web.Application()
    app.router.add_post("/chat", agent.handle)
    async with serve_local(app) as url:
        config = write_config(tmp_path / "run.yml", f"{url}/chat", http={"timeout": TIMEOUT})
        errors = await storm_changes_nothing(config, tmp_path, agent.storm)
    faults = sum(n for kind, n in agent.stats.items() if kind != "ok")
    assert all(agent.stats[kind] > 0 for kind in HTTP_FAULTS) and len(errors) == faults  # one failed try per fault
    for words in ("HTTP status 500", "asking to retry after 0.01 s", "cannot be reached", "not JSON",
                  f"no answer within {TIMEOUT:g} s"):
        assert any(words in e for e in errors), words


# -- an OpenAI-compatible agent ---------------------------------------------------------------------------------------

async def test_an_openai_agent_in_a_storm_of_faults_writes_the_calm_run(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    async with MockLLMServer() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        # the client's own retries off: every fault but a 429 is a failed try of the turn, retried by the turn policy;
        # a 429 the client waits out itself (a rate limit is never a failure)
        config = write_config(tmp_path / "run.yml", "openai:mock", llm={"timeout": TIMEOUT, "max_attempts": 1})

        def storm() -> None:
            llm.set_faults(FaultSettings(rate_429=0.1, retry_after=0.01, rate_500=0.15, rate_drop=0.1,
                                         rate_malformed=0.1, rate_timeout=0.05, timeout_ms=3000, seed=22,
                                         script=["429", "500", "drop", "malformed", "timeout"]))
            llm.stats.clear()

        errors = await storm_changes_nothing(config, tmp_path, storm)
        faults = llm.stats["requests"] - llm.stats["ok"] - llm.stats["429"]
    assert all(llm.stats[kind] > 0 for kind in ("429", "500", "drop", "malformed", "timeout"))
    assert len(errors) == faults and not any("429" in e for e in errors)  # one failed try per faulty request
    folder, _ = outputs(tmp_path / "stormy")
    # the client retried nothing but 429s (those of a call that then met another fault are in no call's record)
    assert 0 < sum(f.retries for f in read_wall_facts(folder / "events.jsonl").values()) <= llm.stats["429"]


# -- a Python agent -------------------------------------------------------------------------------------------------

PYTHON_AGENT = '''
import asyncio, os, random
from ltm_harness import Agent

class Stormy(Agent):
    """Remembers what it was told and answers questions from it; with STORM_SEED set, a try fails with probability
    1/2: it raises, stalls, or returns something that is not a reply (an int), before it reads the message."""

    def __init__(self, spec=None):
        super().__init__(spec)
        seed = os.environ.get("STORM_SEED")
        self.rng = random.Random(int(seed)) if seed else None
        self.said = []
        self.faults = []

    async def reply(self, message, oracle_hint=None):
        if self.rng is not None and self.rng.random() < 0.5:
            fault = self.rng.choice(["raise", "raise", "stall", "int"])
            self.faults.append(fault)
            if fault == "raise":
                raise ConnectionError("the model server went away")
            if fault == "stall":
                await asyncio.sleep(30)
            return 5
        text = message.text
        if text.rstrip().endswith("?"):
            words = set(text.lower().split())
            return next((s for s in reversed(self.said) if words & set(s.lower().split())), "I don't know.")
        self.said.append(text)
        return "OK."

    async def restore(self, turns):
        self.said = [m.text for m, _ in turns if not m.text.rstrip().endswith("?")]
'''


async def test_a_python_agent_raising_then_answering_writes_the_calm_run(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "stormy.py"
    path.write_text(PYTHON_AGENT)
    monkeypatch.delenv("STORM_SEED", raising=False)
    config = write_config(tmp_path / "run.yml", f"{path}:Stormy", turns={"attempts": 12, "backoff": 0.0,
                                                                        "timeout": TIMEOUT})
    errors = await storm_changes_nothing(config, tmp_path, lambda: monkeypatch.setenv("STORM_SEED", "22"))
    kinds = Counter("raise" if "ConnectionError" in e else "stall" if "no reply within" in e else
                    "int" if "returned an int" in e else e for e in errors)
    assert set(kinds) == {"raise", "stall", "int"}, kinds

    # Killed half-way and resumed, still in the storm (other faults now): the outputs are still the calm run's, and
    # the side file keeps the failed tries of the lines kept, then has those of the turns made again.
    stormy, _ = outputs(tmp_path / "stormy")
    log = stormy / "events.jsonl"
    before = read_failed_tries(log)
    lines = log.read_bytes().splitlines(keepends=True)
    k = len(lines) // 2
    log.write_bytes(b"".join(lines[:k]) + lines[k][: len(lines[k]) // 2])  # the last line torn, as a kill leaves it
    for name in ("results.json", "summary.json"):
        (stormy / name).unlink()
    (stormy.parent / "summary.json").unlink()
    monkeypatch.setenv("STORM_SEED", "23")
    code = await asyncio.to_thread(cli, ["run", "-c", str(config), "--results", str(tmp_path / "stormy"), "--resume",
                                         "--quiet", "--no-report"])
    assert code == 0
    calm_folder, calm = outputs(tmp_path / "calm")
    assert {name: (stormy / name).read_bytes() for name in OUTPUTS} == calm
    after = read_failed_tries(log)
    assert {n: t for n, t in after.items() if n <= k} == {n: t for n, t in before.items() if n <= k}
    assert any(n > k for n in after)  # the storm went on after the resume
