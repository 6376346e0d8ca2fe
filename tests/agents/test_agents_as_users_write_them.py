"""Agents written as their frameworks' own docs teach (issue 34, item 12): forms that failed before, run through the
command as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ltm_harness._cli.main import main as cli

SQLITE_AGENT = '''
import sqlite3
from ltm_harness import Agent

class Notes(Agent):
    async def reply(self, message, oracle_hint=None):
        # the session file opened on the first turn, in the folder the harness gives (python-agent.md: set before)
        conn = sqlite3.connect(self.state_dir / "notes.sqlite")
        conn.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES (?)", (message.text,))
        conn.commit()
        conn.close()
        return "Noted."
'''


def _colours(tmp_path: Path) -> Path:
    config = tmp_path / "c.yml"
    config.write_text("config: {run_name: run}\ndatasets:\n  args: {memory_span: 500, dataset_examples: 1}\n"
                      "  datasets:\n    - name: colours\n", encoding="utf-8")
    return config


def test_state_dir_exists_at_a_python_agents_first_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.py").write_text(SQLITE_AGENT, encoding="utf-8")
    assert cli(["run", "-c", str(_colours(tmp_path)), "-a", "notes=notes.py:Notes", "--results", "results",
                "--no-report"]) == 0
    capsys.readouterr()
    files = list((tmp_path / "results" / "run" / "notes" / "state").rglob("notes.sqlite"))
    assert len(files) == 1 and files[0].stat().st_size > 0


USER_SAVER_GRAPH = '''
import aiosqlite
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph


def answer(state: MessagesState):
    return {"messages": [AIMessage(content="Noted.")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
conn = aiosqlite.connect("threads.sqlite")  # the user's own saver, as LangGraph's docs write it
graph = builder.compile(checkpointer=AsyncSqliteSaver(conn))
'''


def test_a_users_own_async_sqlite_saver_does_not_keep_the_process_alive(tmp_path: Path) -> None:
    """aiosqlite's worker thread is not a daemon: the command stops the connection the user's graph opened once it is
    done, so the process ends with the run (it hung forever)."""
    (tmp_path / "g.py").write_text(USER_SAVER_GRAPH, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run([sys.executable, "-m", "ltm_harness", "run", "-c", "default", "--datasets", "colours",
                               "--limit", "1", "-a", "langgraph:g.py:graph", "--results", "r", "--no-report"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("the process did not end after the run (the user's aiosqlite connection kept it alive)")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "threads.sqlite").stat().st_size > 0  # the user's saver held the thread
