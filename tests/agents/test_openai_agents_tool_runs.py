"""Agents SDK agents that call tools, through `python -m ltm_harness run` on the mock's tool-calling model
(`mock-tools`, issue 28 item 2): one with a function tool (and a handoff it is offered), one that hands off to an
agent with that tool. Killed with SIGKILL mid-conversation and resumed, the outputs are byte-identical to a run that
never stopped, nothing is asked of the model for the recorded turns, the tool calls and their results are in the
session store, and every model call of a turn (two: the call, then the answer) is counted in the turn's usage."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ltm_harness._tokens import get_tokenizer
from tests.agents.test_framework_runs import SELECTION, ThreadedMock, outputs, turns

ROOT = Path(__file__).resolve().parents[2]
AGENTS = '''
from agents import Agent, function_tool


@function_tool
def lookup(query: str) -> str:
    """Look the user's words up in the notebook."""
    words = [w for w in query.split() if w[:1].isalpha()]
    return "Notebook: " + " ".join(words[-6:])


notes = Agent(name="notes", instructions="Answer from the notebook.", model="mock-tools", tools=[lookup])
tool = Agent(name="memory", instructions="Use the notebook.", model="mock-tools", tools=[lookup], handoffs=[notes])
triage = Agent(name="triage", instructions="Hand off to notes.", model="mock-tools", handoffs=[notes])
'''
NAMES = ("tool", "handoff")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("tool_agents")
    path = folder / "tool_agents.py"
    path.write_text(AGENTS)
    with ThreadedMock() as server:
        yield server, path, folder


def run_command(server, path: Path, results: Path, *extra: str) -> list[str]:
    named = [a for name, target in (("tool", "tool"), ("handoff", "triage"))
             for a in ("-a", f"{name}=openai-agents:{path}:{target}")]
    return [sys.executable, "-m", "ltm_harness", "run", "-c", "default", *SELECTION, *named, "--results",
            str(results), "--quiet", "--no-report", *extra]


def environment(server) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": server.url}
    env.pop("OPENAI_API_KEY", None)
    return env


def session_kinds(state: Path) -> list[str]:
    with sqlite3.connect(state / "agents_sdk.sqlite") as conn:
        rows = conn.execute("SELECT message_data FROM agent_messages ORDER BY id").fetchall()
    return [str(json.loads(d).get("type") or json.loads(d).get("role")) for (d,) in rows]


def turn_events(log: Path) -> list[dict]:
    return [e for e in map(json.loads, log.read_text().splitlines()) if e.get("type") == "turn"]


@pytest.fixture(scope="module")
def reference(setup):
    server, path, folder = setup
    server.stats.clear()
    server.requests.clear()
    out = folder / "ref"
    done = subprocess.run(run_command(server, path, out), env=environment(server), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    return out / "default"


def test_each_turn_calls_the_tool_or_hands_off_and_every_model_call_is_counted(setup, reference):
    server, _, _ = setup
    total = sum(turns(reference / name / "events.jsonl") for name in NAMES)
    # calls made: two per turn (the tool call or the handoff, then the answer from its result)
    assert server.stats["ok_replies"] == 2 * total and server.stats["tool_calls"] == total
    tokenizer = get_tokenizer()
    made = sum(server._count(r["messages"], "")[0] for r in server.requests)
    counted = sum(e["prompt_tokens"] for name in NAMES for e in turn_events(reference / name / "events.jsonl"))
    print(f"model calls made: {server.stats['ok_replies']} for {total} turns; prompt tokens made {made}, counted "
          f"{counted}")
    assert counted == made  # every call's usage is in its turn's, not only the answer's
    tool_turn = turn_events(reference / "tool" / "events.jsonl")[0]
    assert tool_turn["reply"].startswith("Notebook: ") and tool_turn["completion_tokens"] > \
        tokenizer.count(tool_turn["reply"])  # the tool call's own tokens too
    kinds = session_kinds(reference / "tool" / "state" / "main")
    assert kinds[:4] == ["user", "function_call", "function_call_output", "message"]
    assert kinds.count("function_call") == turns(reference / "tool" / "events.jsonl")
    handoff = session_kinds(reference / "handoff" / "state" / "main")
    assert handoff[:4] == ["user", "function_call", "function_call_output", "message"]  # transfer_to_notes
    with sqlite3.connect(reference / "handoff" / "state" / "main" / "agents_sdk.sqlite") as conn:
        first_call = json.loads(conn.execute("SELECT message_data FROM agent_messages ORDER BY id LIMIT 2")
                                .fetchall()[1][0])
    assert first_call["name"] == "transfer_to_notes"


@pytest.mark.slow
def test_a_killed_tool_run_resumes_byte_identical_from_the_session_store(setup, reference, tmp_path):
    server, path, _ = setup
    total = sum(turns(reference / name / "events.jsonl") for name in NAMES)
    lines = sum((reference / name / "events.jsonl").read_bytes().count(b"\n") for name in NAMES)
    env = environment(server)
    logs = [tmp_path / "default" / name / "events.jsonl" for name in NAMES]
    # (the mock's stats are not cleared: its call ids count its requests, and ids used twice in one session would
    # not be what an API gives)
    proc = subprocess.Popen(run_command(server, path, tmp_path), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while sum(log.read_bytes().count(b"\n") if log.is_file() else 0 for log in logs) < lines // 2 \
            and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()
    recorded = sum(turns(log) for log in logs)
    assert 0 < recorded < total

    before = server.stats["ok_replies"]
    done = subprocess.run(run_command(server, path, tmp_path, "--resume"), env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    for name in NAMES:
        assert outputs(tmp_path / "default" / name) == outputs(reference / name)
        assert session_kinds(tmp_path / "default" / name / "state" / "main") == \
            session_kinds(reference / name / "state" / "main")  # the tool items restored, none doubled
    made = server.stats["ok_replies"] - before
    print(f"killed with {recorded} of {total} turns recorded; the resumed run made {made} model calls")
    assert made == 2 * (total - recorded)  # only the unrecorded turns: two calls each
