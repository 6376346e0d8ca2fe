"""Framework stores in a results folder are never a way to run code (issue 27, item 1; docs/security.md): mem0's local
Qdrant points (pickles) are checked by an unpickler that builds only Qdrant's models, its undo log may only change
rows of its own tables, a Letta agent file (which names its tools' code) is imported only when this harness signed
it, the Agents SDK session holds JSON items only, and no store is followed through a link out of the folder. Each
adapter's planted store is refused in one line on `--resume` and `--retry-errored`, and `rescore` never opens it."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._agents.frameworks import store_trust
from ltm_harness._agents.frameworks.qdrant_check import check_points
from ltm_harness._agents.frameworks.sqlite_undo import UndoError, UndoLog
from ltm_harness._agents.frameworks.store_trust import TRUST_ENV, UntrustedStore, read_signed, write_signed
from ltm_harness._api import rescore_async, run_async
from ltm_harness._errors import AgentError
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness.testing import make_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
TURNS = {"attempts": 2, "backoff": 0.0, "timeout": 30, "give_up_after": 3}


class Payload:
    """Unpickling it makes the folder `marker`: proof that code named by the store ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (str(self.marker),))


def plant_points(store: Path, marker: Path) -> int:
    """Every point of every local Qdrant collection under `store` replaced by the payload (the undo log's triggers
    dropped first, as a hostile author would)."""
    planted = 0
    for path in store.rglob("storage.sqlite"):
        with sqlite3.connect(path) as conn:
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                conn.execute(f'DROP TRIGGER "{name}"')
            planted += conn.execute("UPDATE points SET point = ?", (pickle.dumps(Payload(marker)),)).rowcount
    return planted


# -- the pieces ------------------------------------------------------------------------------------------------------
def test_qdrant_points_naming_code_are_refused_unless_trusted_and_then_they_do_run(tmp_path, monkeypatch):
    from qdrant_client import QdrantClient, models

    monkeypatch.delenv(TRUST_ENV, raising=False)
    folder = tmp_path / "qdrant"
    client = QdrantClient(path=str(folder))
    client.create_collection("c", vectors_config=models.VectorParams(size=2, distance=models.Distance.COSINE))
    client.upsert("c", [models.PointStruct(id=1, vector=[0.1, 0.2], payload={"data": "x", "n": [1, 2.5, None]})])
    client.close()
    assert check_points(folder) == 1  # Qdrant's own points pass
    marker = tmp_path / "PWNED"
    assert plant_points(tmp_path, marker) == 1
    with pytest.raises(UntrustedStore) as refused:
        check_points(folder)
    line = str(refused.value)
    assert "names posix.mkdir" in line and "storage.sqlite" in line and f"{TRUST_ENV}=1" in line and "\n" not in line
    assert refused.value.fatal and not marker.exists()
    monkeypatch.setenv(TRUST_ENV, "1")  # trusted on purpose: not checked, and Qdrant runs it (so the check matters)
    assert check_points(folder) == 0
    with pytest.raises(AttributeError):  # the payload ran (os.mkdir returned None, which is no point)
        QdrantClient(path=str(folder))
    assert marker.is_dir()


def test_an_undo_entry_that_is_not_a_row_change_is_refused_and_not_run(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    with sqlite3.connect(store / "db.sqlite") as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    log = UndoLog(store)
    log.mark(1)
    with sqlite3.connect(store / "db.sqlite") as conn:
        conn.execute("INSERT INTO t (v) VALUES ('turn 2')")
        outside = tmp_path / "outside.db"
        conn.execute("INSERT INTO _ltm_undo(stmt) VALUES (?)", (f"ATTACH DATABASE '{outside}' AS x",))
    with pytest.raises(UndoError, match="holds an undo entry the harness does not write"):
        log.rollback(1)
    assert not outside.exists()
    with sqlite3.connect(store / "db.sqlite") as conn:  # nothing was changed: the refusal rolled it all back
        assert conn.execute("SELECT v FROM t").fetchall() == [("turn 2",)]


def test_signed_files_are_read_only_when_this_harness_wrote_them(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    path = tmp_path / "turn-1.af"
    write_signed(path, '{"agents": []}')
    assert read_signed(path, "Letta") == '{"agents": []}'
    assert store_trust.key_path().is_file() and oct(store_trust.key_path().stat().st_mode)[-3:] == "600"
    path.write_text('{"agents": [], "tools": [{"source_code": "import os"}]}')
    with pytest.raises(UntrustedStore, match="was not written by this harness on this machine"):
        read_signed(path, "Letta")
    monkeypatch.setenv(store_trust.KEY_DIR_ENV, str(tmp_path / "another-machine"))  # another key: not ours
    write_signed(path, '{"agents": []}')
    monkeypatch.setenv(store_trust.KEY_DIR_ENV, str(tmp_path / "this-machine"))
    with pytest.raises(UntrustedStore):
        read_signed(path, "Letta")
    monkeypatch.setenv(TRUST_ENV, "1")
    assert read_signed(path, "Letta") == '{"agents": []}'


def test_a_link_in_a_store_is_never_followed_out_of_the_folder(tmp_path):
    store = tmp_path / "state" / "main"
    store.mkdir(parents=True)
    elsewhere = tmp_path / "users-own.sqlite"
    sqlite3.connect(elsewhere).close()
    (store / "agents_sdk.sqlite").symlink_to(elsewhere)
    with pytest.raises(AgentError) as refused:
        store_trust.check_tree(store, "Agents SDK")
    assert "symbolic link, 'agents_sdk.sqlite'" in str(refused.value) and "\n" not in str(refused.value)


# -- mem0's own files and its config -----------------------------------------------------------------------------------
def test_importing_the_mem0_adapter_writes_nothing_in_the_users_home(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "import os, ltm_harness._agents.frameworks.mem0 as m; "
                           "print(os.environ['MEM0_DIR'])"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".mem0").exists()  # mem0 wrote its config.json into a folder of the process's own...
    assert not Path(done.stdout.strip()).exists()  # ... removed when the process ended
    mine = tmp_path / "mine"
    done = subprocess.run([sys.executable, "-c", "import ltm_harness._agents.frameworks.mem0"],
                          env={**env, "MEM0_DIR": str(mine)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and (mine / "config.json").is_file()  # a MEM0_DIR the user set is theirs


async def test_a_failure_opening_mem0_closes_qdrant_so_the_next_try_shows_the_same_cause(tmp_path, monkeypatch):
    from ltm_harness._agents.frameworks.mem0 import AsyncMemory, Mem0Agent  # the adapter first: mem0's switches

    def broken(config: Any) -> Any:
        raise ValueError("the embedder's model 'nosuch' is not known")

    monkeypatch.setattr(AsyncMemory, "from_config", broken)
    agent = Mem0Agent(f"mem0:{EXAMPLES / 'mem0.yml'}", base_url="http://127.0.0.1:9/v1")
    agent.state_dir = tmp_path / "state" / "main"
    lines = []
    for _ in range(2):
        with pytest.raises(AgentError) as failed:
            await agent.restore([])
        lines.append(str(failed.value))
    assert lines[0] == lines[1] and "the embedder's model 'nosuch' is not known" in lines[0]
    assert "already accessed" not in lines[1]
    from qdrant_client import QdrantClient

    QdrantClient(path=str(tmp_path / "state" / "main" / "mem0" / "qdrant")).close()  # no lock left behind


# -- each adapter's planted store, through runs ----------------------------------------------------------------------
def cut(run: Path, agent: str, tmp_path: Path) -> Path:
    """A copy of the finished run with the second half of `agent`'s log lost, as after a kill."""
    copy = tmp_path / "cut"
    shutil.copytree(run, copy / run.name)
    log = copy / run.name / agent / "events.jsonl"
    lines = log.read_bytes().split(b"\n")
    log.write_bytes(b"\n".join(lines[:len(lines) // 2]) + b"\n")
    (copy / run.name / agent / "results.json").unlink(missing_ok=True)
    (copy / run.name / "summary.json").unlink(missing_ok=True)
    return copy


def failing_on_colours(cls: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter fails every try of a turn that asks about a colour: its test is errored (for --retry-errored)."""
    answer = cls._answer

    async def flaky(self: Any, text: str, turn: int) -> Any:
        if "colour" in text.lower() and "?" in text:
            raise ConnectionError("the model is down")
        return await answer(self, text, turn)

    monkeypatch.setattr(cls, "_answer", flaky)


async def refused_everywhere(tmp_path: Path, spec: str, cls: Any, monkeypatch: pytest.MonkeyPatch,
                             plant: Any, says: str) -> None:
    """Run with an errored test, plant the store, then rescore (not opened), --retry-errored and --resume (refused
    in one line)."""
    name = spec.partition("=")[0]
    cfg = make_config(["colours", "kv"], span=1000, examples=1, turns=TURNS)
    with pytest.MonkeyPatch.context() as patched:
        failing_on_colours(cls, patched)
        output = await run_async(cfg, [spec], results=tmp_path / "out")
    assert "errored" in [r.status for r in output.results(name)]
    monkeypatch.delenv(TRUST_ENV, raising=False)
    marker = tmp_path / "PWNED"
    assert plant(output.path / name / "state", marker) > 0
    resumable = cut(output.path, name, tmp_path)

    rescored = await rescore_async(output.path, no_judge=True)  # event logs only: the store is never opened
    assert [r.status for r in rescored.results(name)] == [r.status for r in output.results(name)]
    for again in (await run_async(cfg, [spec], results=tmp_path / "out", retry_errored=True),
                  await run_async(cfg, [spec], results=resumable, resume=True)):
        line = again.summary.errors[name]  # the agent stopped at once (no try again), said in one line
        assert says in line and f"{TRUST_ENV}=1" in line and "\n" not in line, line
        print(line)
    assert not marker.exists()


async def test_mem0_a_planted_qdrant_point_never_runs(tmp_path, monkeypatch):
    from ltm_harness._agents.frameworks.mem0 import Mem0Agent

    async with MockLLMServer() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        await refused_everywhere(tmp_path, f"m=mem0:{EXAMPLES / 'mem0.yml'}", Mem0Agent, monkeypatch, plant_points,
                                 "holds a point whose pickle names posix.mkdir")


def plant_sdk(state: Path, marker: Path) -> int:
    planted = 0
    for path in state.glob("*/agents_sdk.sqlite"):
        with sqlite3.connect(path) as conn:
            session = conn.execute("SELECT session_id FROM agent_messages LIMIT 1").fetchone()[0]
            conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                         (session, pickle.dumps(Payload(marker))))
            planted += 1
    return planted


async def test_agents_sdk_a_planted_session_item_never_runs(tmp_path, monkeypatch):
    from ltm_harness._agents.frameworks.openai_agents import OpenAIAgentsAgent

    copy = tmp_path / "sdk_agent.py"  # a copy loads afresh, with this test's environment
    copy.write_bytes((EXAMPLES / "agents_sdk_agent.py").read_bytes())
    async with MockLLMServer() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        monkeypatch.setenv("LTM_EXAMPLE_MODEL", "mock")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        await refused_everywhere(tmp_path, f"sdk=openai-agents:{copy}:agent", OpenAIAgentsAgent, monkeypatch,
                                 plant_sdk, "that is not a JSON object")


def plant_letta(state: Path, marker: Path) -> int:
    """Each saved agent file replaced by one whose tool's source makes `marker` (a Letta server runs a tool's
    source when the agent calls it)."""
    planted = 0
    for path in state.glob("*/letta/turn-*.af"):
        schema = json.loads(path.read_text())
        schema["agents"][0]["name"] = "planted"
        schema["tools"] = [{"name": "pwn", "source_type": "python",
                            "source_code": f"def pwn():\n    import os\n    os.mkdir({str(marker)!r})\n"}]
        path.write_text(json.dumps(schema))
        planted += 1
    return planted


async def test_letta_a_planted_agent_file_is_never_imported(tmp_path, monkeypatch, letta):
    from ltm_harness._agents.frameworks.letta import LettaAgent

    await refused_everywhere(tmp_path, f"l=letta:{letta.url}", LettaAgent, monkeypatch, plant_letta,
                             "was not written by this harness on this machine")
    assert all(agent["name"] != "planted" for agent in letta.agents.values())  # it never reached the server
