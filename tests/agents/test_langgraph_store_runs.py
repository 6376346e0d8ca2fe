"""A results folder whose LangGraph store was replaced by a payload naming code, run again: `--resume`,
`--retry-errored` and `rescore` never run it; the runs that must read the store stop in one line saying how to trust
the folder on purpose (issue 27, item 1)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ltm_harness._agents.frameworks.langgraph import STATE_FILE
from ltm_harness._agents.frameworks.langgraph_store import TRUST_ENV
from ltm_harness._api import rescore_async, run_async
from ltm_harness.testing import make_config
from tests.agents.test_langgraph_store import payload, plant

ROOT = Path(__file__).resolve().parents[2]
GRAPH = '''
import os
import re

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def words(text):
    return set(re.findall(r"[a-z]+", text.lower())) - {"what", "is", "my", "the", "a", "you", "i"}


def respond(state):
    users = [m.content for m in state["messages"] if isinstance(m, HumanMessage)]
    if os.environ.get("LG_DOWN") and "colour" in users[-1]:
        raise ConnectionError("the model is down")
    best = max(users[:-1], key=lambda t: len(words(t) & words(users[-1])), default="OK.")
    return {"messages": [AIMessage(content=best)]}


builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
'''
TURNS = {"attempts": 2, "backoff": 0.0, "timeout": 10, "give_up_after": 3}


def config():
    return make_config(["colours", "kv"], span=1000, examples=1, turns=TURNS)


@pytest.fixture
def errored_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A finished run with an errored test (the graph failed on the colour question), its store then replaced."""
    path = tmp_path / "graph.py"
    path.write_text(GRAPH)
    spec = f"lg=langgraph:{path}:graph"
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.setenv("LG_DOWN", "1")
    return tmp_path, spec


async def test_resume_retry_errored_and_rescore_never_run_a_planted_store(errored_run, monkeypatch):
    tmp_path, spec = errored_run
    output = await run_async(config(), [spec], results=tmp_path / "out")
    assert "errored" in [r.status for r in output.results("lg")]
    monkeypatch.delenv("LG_DOWN")
    marker = tmp_path / "PWNED"
    stores = list((output.path / "lg" / "state").glob(f"*/{STATE_FILE}"))
    assert stores and all(plant(store, payload(marker)) > 0 for store in stores)
    resumable = tmp_path / "cut"  # the same folder with its last turns lost, as after a kill
    shutil.copytree(output.path, resumable / output.path.name)
    log = resumable / output.path.name / "lg" / "events.jsonl"
    lines = log.read_bytes().split(b"\n")
    log.write_bytes(b"\n".join(lines[:len(lines) // 2]) + b"\n")
    (resumable / output.path.name / "lg" / "results.json").unlink(missing_ok=True)
    (resumable / output.path.name / "summary.json").unlink(missing_ok=True)

    rescored = await rescore_async(output.path, no_judge=True)  # reads the event logs only: the store is not opened
    assert [r.status for r in rescored.results("lg")] == [r.status for r in output.results("lg")]
    for again in (await run_async(config(), [spec], results=tmp_path / "out", retry_errored=True),
                  await run_async(config(), [spec], results=resumable, resume=True)):
        line = again.summary.errors["lg"]  # the agent stopped at once (no try again), said in one line
        assert "names os.mkdir" in line and f"{TRUST_ENV}=1" in line and STATE_FILE in line and "\n" not in line
    assert not marker.exists()


def test_the_command_line_says_it_in_one_line(errored_run, tmp_path):
    _, spec = errored_run
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LG_DOWN": "1", "HOME": str(tmp_path)}
    base = [sys.executable, "-m", "ltm_harness", "run", "-c", "default", "--datasets", "colours,kv", "--limit", "1",
            "--span", "1000", "-a", spec, "--results", str(tmp_path / "cli"), "--quiet", "--no-report"]
    first = subprocess.run(base, env=env, capture_output=True, text=True, timeout=300)
    assert "1 errored: " in first.stderr, first.stderr  # (exit code 3: finished with errored tests)
    marker = tmp_path / "PWNED-CLI"
    for store in (tmp_path / "cli").glob(f"*/lg/state/*/{STATE_FILE}"):
        plant(store, payload(marker))
    env.pop("LG_DOWN")
    again = subprocess.run([*base, "--retry-errored"], env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and not marker.exists()
    said = [line for line in again.stderr.splitlines() if "os.mkdir" in line]
    assert len(said) == 1 and f"{TRUST_ENV}=1" in said[0] and "Traceback" not in again.stderr, again.stderr
