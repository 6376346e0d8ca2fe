"""The shipped framework examples run by `python -m ltm_harness run`, on the mock LLM server (127.0.0.1): they score
between `null` and `oracle` on the offline default config, and a run killed with SIGKILL mid-conversation resumes
to outputs byte-identical to a run that never stopped, with the framework's memory taken from its file in the run
folder (counted: the resumed run asks the model only for the turns the killed run had not recorded).

The examples: examples/agents/langgraph_agent.py (a LangGraph graph whose node hands the thread to ChatOpenAI) and
examples/agents/agents_sdk_agent.py (an Agents SDK agent run with a SQLiteSession). The model is the mock's `mock`:
it answers a question with the earlier user sentence that shares most words with it, from the messages it is sent,
so these agents remember exactly what their framework keeps and sends: the thread / the session.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import ltm_harness
from ltm_harness import DatasetInterface, TestExample, Wait
from ltm_harness._api import run_async
from ltm_harness._authoring.catalog import DATASETS
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._resources import shipped
from ltm_harness._store.events import TurnEvent
from ltm_harness.testing import make_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
AGENTS = {"lg": f"langgraph:{EXAMPLES / 'langgraph_agent.py'}:graph",
          "sdk": f"openai-agents:{EXAMPLES / 'agents_sdk_agent.py'}:agent"}
# Three datasets of the default config, one example each, keep the conversation short (~40 turns): its tests ask
# for a colour, a key's value and a list recalled after the filler, which the mock finds in the history it is sent.
SELECTION = ["--datasets", "colours,kv,delayed_recall", "--limit", "1"]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


class ThreadedMock:
    """The mock LLM server on its own event loop in a thread, so that it answers while the test waits on a
    subprocess."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server = MockLLMServer()

    def __enter__(self) -> MockLLMServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, MockLLMServer]]:
    """One mock server per adapter, so that each one's model calls are counted apart."""
    with ThreadedMock() as lg, ThreadedMock() as sdk:
        yield {"lg": lg, "sdk": sdk}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory, servers: dict[str, MockLLMServer]) -> Path:
    """The shipped default config, with the Agents SDK's endpoint (config.openai.base_url) on its own server; the
    LangGraph example's ChatOpenAI reads OPENAI_BASE_URL."""
    text = (shipped("configs") / "default.yml").read_text()
    assert "\nconfig:\n  run_name: default\n" in text
    path = tmp_path_factory.mktemp("config") / "default.yml"
    path.write_text(text.replace("\nconfig:\n", f"\nconfig:\n  openai: {{base_url: '{servers['sdk'].url}'}}\n", 1))
    return path


def command(config: Path, results: Path, agents: list[str], *extra: str) -> list[str]:
    named = [a for name in agents for a in ("-a", f"{name}={AGENTS.get(name, name)}")]
    return [sys.executable, "-m", "ltm_harness", "run", "-c", str(config), *SELECTION, *named, "--results",
            str(results), "--quiet", "--no-report", *extra]


def environment(servers: dict[str, MockLLMServer]) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": servers["lg"].url, "LTM_EXAMPLE_MODEL": "mock"}
    env.pop("OPENAI_API_KEY", None)
    return env


def reset(servers: dict[str, MockLLMServer]) -> None:
    for server in servers.values():  # idle now: no run is under way
        server.stats.clear()
        server.requests.clear()


def turns(log: Path) -> int:
    """Turns recorded in an event log (whole lines only: a kill may cut the last one)."""
    if not log.is_file():
        return 0
    return sum(1 for line in log.read_bytes().split(b"\n")[:-1] if line.startswith(b'{"type":"turn"'))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, servers: dict[str, MockLLMServer], config: Path) -> Path:
    """A run that never stopped: both examples beside null and oracle."""
    out = tmp_path_factory.mktemp("ref")
    reset(servers)
    done = subprocess.run(command(config, out, ["lg", "sdk", "null", "oracle"]), env=environment(servers),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for name in AGENTS:  # one model call per turn, each counted by its own server
        assert servers[name].stats["ok_replies"] == turns(out / "default" / name / "events.jsonl") > 20
    return out / "default"


def scores(folder: Path) -> dict[str, float]:
    summary = json.loads((folder / "summary.json").read_text())
    return {agent["agent"]: agent["benchmark_score"] for agent in summary["agents"]}


def test_the_examples_score_above_null_and_at_most_oracle(reference):
    """Above null: the examples answer from what their framework keeps (the thread, the session), which holds the
    facts the questions ask about (null knows nothing and scores 0). At most oracle: the oracle is handed every
    expected answer (a perfect score); the mock model only repeats the best-matching sentence, so it cannot beat it."""
    got = scores(reference)
    assert got["null"] == 0 and got["oracle"] == 3
    for name in AGENTS:
        assert got["null"] < got[name] <= got["oracle"], got


def outputs(folder: Path) -> dict[str, bytes]:
    """An agent folder's outputs that must not depend on interruptions: the event log, results and summary (its
    wall-clock time out), not the wall-clock side file nor the framework's own files in state/."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or rel.parts[0] == "state" or path.suffix == ".wall" or path.name.startswith("."):
            continue
        data = path.read_bytes()
        if path.name == "summary.json":
            summary = json.loads(data)
            summary.pop("wall_seconds", None)
            data = json.dumps(summary, sort_keys=True).encode()
        out[str(rel)] = data
    return out


def memory(name: str, state: Path) -> list[tuple[str, str]]:
    """What the framework keeps of the conversation, read from its own file: (role, text) of each message."""
    if name == "lg":
        from langgraph.checkpoint.sqlite import SqliteSaver

        with sqlite3.connect(state / "langgraph.sqlite") as conn:
            saved = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": state.name, "checkpoint_ns": ""}})
        assert saved is not None
        return [(m.type, m.content) for m in saved.checkpoint["channel_values"]["messages"]]
    with sqlite3.connect(state / "agents_sdk.sqlite") as conn:
        rows = conn.execute("SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id",
                            (state.name,)).fetchall()
    items = [json.loads(data) for (data,) in rows]
    return [(i["role"], i["content"] if isinstance(i["content"], str) else i["content"][0]["text"]) for i in items]


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_killed_run_resumes_from_the_frameworks_own_memory(tmp_path, servers, config, reference, name):
    total = turns(reference / name / "events.jsonl")
    lines = (reference / name / "events.jsonl").read_bytes().count(b"\n")
    env = environment(servers)
    log = tmp_path / "default" / name / "events.jsonl"
    reset(servers)
    proc = subprocess.Popen(command(config, tmp_path, [name]), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while (log.read_bytes().count(b"\n") if log.is_file() else 0) < lines // 2 and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()
    recorded = turns(log)
    asked_before = servers[name].stats["ok_replies"]
    assert 0 < recorded < total and asked_before in (recorded, recorded + 1)  # killed mid-conversation

    reset(servers)
    done = subprocess.run(command(config, tmp_path, [name], "--resume"), env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert outputs(tmp_path / "default" / name) == outputs(reference / name)
    # Restored, not rebuilt: the resumed run asked the model for the unrecorded turns only (feeding the recorded
    # turns to the framework again would have asked for them too), and the framework's memory is the same as the
    # uninterrupted run's.
    asked_after = servers[name].stats["ok_replies"]
    print(f"{name}: killed with {recorded} of {total} turns recorded (the model had answered {asked_before}); the "
          f"resumed run asked the model {asked_after} times; outputs byte-identical")
    assert asked_after == total - recorded
    assert memory(name, tmp_path / "default" / name / "state" / "main") == memory(name, reference / name / "state" /
                                                                                     "main")


# -- history that needs no reply, through `observe` ------------------------------------------------------------------
HISTORY = ["Alice: I adopted a cat last week, her name is Miso.", "Bob: That is lovely, what colour is she?",
           "Alice: She is ginger with white paws.", "Bob: I started learning the cello on Monday.",
           "Alice: How is it going so far?", "Bob: Slowly, my teacher is called Ingrid."]
ASKED = [("What is the name of Alice's cat?", "Miso"), ("Who is the cello teacher of Bob?", "Ingrid")]


class Chat(DatasetInterface):
    """A chat between two friends, as history, then questions about it (a benchmark of LoCoMo's shape)."""

    name = "framework_chat"
    description = "a chat as history, then questions (tests)"
    conversation_per_example = True

    def generate_examples(self, n: int) -> list[TestExample]:
        script = HISTORY + [q for q, _ in ASKED]
        return [self.make_example(i, script, [False] * len(HISTORY) + [True] * len(ASKED), [a for _, a in ASKED],
                                  waits=[Wait()] * len(script), observe=[True] * len(HISTORY) + [False] * len(ASKED),
                                  needs=[[0], [5]], oracle_answers=[a for _, a in ASKED]) for i in range(n)]

    def evaluate_correct(self, questions: list[str], responses: list[str], expected: list[Any]
                         ) -> tuple[float, float, list[str]]:
        score = sum(e.lower() in r.lower() for r, e in zip(responses, expected))
        return float(score), float(len(expected)), []


@pytest.fixture
def chat() -> Iterator[None]:
    ltm_harness.register_dataset(Chat)
    yield
    DATASETS.unregister("framework_chat")


async def test_history_goes_into_the_frameworks_memory_without_a_model_call_and_resumes(tmp_path, monkeypatch, chat):
    """Each history turn reaches the framework through `observe`: no model call (one call per question), yet the
    answers come from it; a run stopped in the middle of the history resumes to the same results, its framework's
    memory taken from the file (the resumed run asks only for the questions)."""
    copies = tmp_path / "examples"  # copies load afresh, with this test's environment (ChatOpenAI reads it at import)
    copies.mkdir()
    for name in ("langgraph_agent.py", "agents_sdk_agent.py"):
        (copies / name).write_bytes((EXAMPLES / name).read_bytes())
    agents = [("lg", f"langgraph:{copies / 'langgraph_agent.py'}:graph"),
              ("sdk", f"openai-agents:{copies / 'agents_sdk_agent.py'}:agent")]
    cfg = make_config(["framework_chat"], span=1000)
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("LTM_EXAMPLE_MODEL", "mock")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        whole = await run_async(cfg, agents, results=tmp_path / "whole")
        assert len(server.requests) == 2 * len(ASKED)  # no call for the 12 history turns
        for name, _ in agents:
            events = [e for e in whole.events(name)["framework_chat__0"] if isinstance(e, TurnEvent)]
            assert [e.observed for e in events] == [True] * len(HISTORY) + [None] * len(ASKED)
            assert all(e.reply == "" for e in events[:len(HISTORY)])
            assert [e.reply for e in events[len(HISTORY):]] == [HISTORY[0], HISTORY[5]]  # from the history it heard
            assert whole.agent_summary(name).datasets[0].score == 1.0

        cut = tmp_path / "cut"  # the same run, stopped after its fifth history turn (a kill leaves the store at
        # most a turn ahead of the log; the harness's LangGraph store keeps the last turns: langgraph_store.py)
        await run_async(cfg, agents, results=cut)
        for name, _ in agents:
            folder = cut / "t" / name
            (folder / "results.json").unlink()
            (folder / "summary.json").unlink()
            log = folder / "events" / "framework_chat__0.jsonl"
            log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:7]))  # the starts, 5 turns
        server.requests.clear()
        resumed = await run_async(cfg, agents, results=cut, resume=True)
        assert len(server.requests) == 2 * len(ASKED)  # the history was not sent again, nor answered
    for name, _ in agents:
        assert resumed.results(name) == whole.results(name)
        assert memory(name, cut / "t" / name / "state" / "framework_chat__0") == \
            memory(name, tmp_path / "whole" / "t" / name / "state" / "framework_chat__0")
