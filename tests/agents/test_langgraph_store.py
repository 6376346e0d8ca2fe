"""The harness's own LangGraph store: a checkpoint blob that names code is refused in one line, never run (issue 27),
and the thread keeps only the checkpoints resume and roll-back need, so the file grows linearly (issue 28).

The payload is a msgpack extension naming `os.mkdir` with a path: if LangGraph rebuilt it, the folder would exist
(harmless, and visible). With `LTM_TRUST_FRAMEWORK_STORES=1` it does run: the test shows the payload is live."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import ormsgpack
import pytest

from ltm_harness._agents.frameworks.langgraph import STATE_FILE, TURN_KEY
from ltm_harness._agents.frameworks.langgraph_store import KEEP_TURNS, TRUST_ENV, UntrustedStore
from tests.agents.test_langgraph_adapter import CONVERSATION, GRAPH, make, msg, play, thread_texts

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def payload(marker: Path) -> bytes:
    """A checkpoint blob whose loading calls os.mkdir(marker) in LangGraph's default (permissive) mode."""
    call = ormsgpack.Ext(0, ormsgpack.packb(["os", "mkdir", str(marker)]))  # EXT_CONSTRUCTOR_SINGLE_ARG
    return ormsgpack.packb({"v": 4, "id": "x", "channel_values": {"messages": call}})


def plant(store: Path, blob: bytes, form: str = "msgpack") -> int:
    """Replace every checkpoint (and pending write) of the store with `blob`; how many rows were changed."""
    with sqlite3.connect(store) as db:
        changed = db.execute("UPDATE checkpoints SET type = ?, checkpoint = ?", (form, blob)).rowcount
        changed += db.execute("UPDATE writes SET type = ?, value = ?", (form, blob)).rowcount
    return changed


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "graphs.py"
    path.write_text(GRAPH)
    return path


async def played(graph_file: Path, state: Path) -> list:
    agent = make(graph_file, state_dir=state)
    turns = await play(agent, CONVERSATION)
    await agent.close()
    return turns


async def test_a_planted_checkpoint_naming_code_is_refused_in_one_line_and_never_run(graph_file, tmp_path,
                                                                                    monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    state = tmp_path / "run" / "lg" / "state" / "main"
    turns = await played(graph_file, state)
    marker = tmp_path / "PWNED"
    assert plant(state / STATE_FILE, payload(marker)) > 0
    again = make(graph_file, state_dir=state)
    with pytest.raises(UntrustedStore) as refused:
        await again.restore(turns[:4])  # --resume and --retry-errored restore the store like this
    line = str(refused.value)
    assert "names os.mkdir" in line and f"{TRUST_ENV}=1" in line and "\n" not in line and refused.value.fatal
    with pytest.raises(UntrustedStore):
        await again.reply(msg(9, "What is my favourite colour?"))  # a fresh turn reads the thread too
    await again.close()
    assert not marker.exists()


async def test_trusting_the_folder_on_purpose_loads_what_langgraph_loads(graph_file, tmp_path, monkeypatch):
    """The payload is live: with the folder trusted, LangGraph's default serializer runs it (so the refusal above is
    what stops it)."""
    state = tmp_path / "s" / "main"
    turns = await played(graph_file, state)
    marker = tmp_path / "TRUSTED-RAN"
    plant(state / STATE_FILE, payload(marker))
    monkeypatch.setenv(TRUST_ENV, "1")
    again = make(graph_file, state_dir=state)
    try:
        await again.restore(turns[:4])
    except Exception:
        pass  # the planted blob is not a checkpoint LangGraph can use: what matters is that it was rebuilt
    await again.close()
    assert marker.is_dir()


@pytest.mark.parametrize("form", ["pickle", "json"])
async def test_a_store_in_a_form_the_harness_never_writes_is_refused(graph_file, tmp_path, monkeypatch, form):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    state = tmp_path / "s" / "main"
    turns = await played(graph_file, state)
    plant(state / STATE_FILE, b"cos\nsystem\n(S'true'\ntR." if form == "pickle" else b"{}", form)
    again = make(graph_file, state_dir=state)
    with pytest.raises(UntrustedStore, match=f"names a value stored as '{form}'"):
        await again.restore(turns[:2])
    await again.close()


async def test_the_thread_keeps_the_checkpoints_of_the_last_turns_only(graph_file, tmp_path):
    state = tmp_path / "s" / "main"
    agent = make(graph_file, state_dir=state)
    said = [msg(i, f"Fact number {i} is {i * 7}.", observe=i % 3 != 0) for i in range(30)]
    turns = await play(agent, said)
    with sqlite3.connect(state / STATE_FILE) as db:
        kept = db.execute("SELECT json_extract(CAST(metadata AS TEXT), '$.' || ?) FROM checkpoints",
                          (TURN_KEY,)).fetchall()
    assert len(kept) <= KEEP_TURNS + 1  # without pruning: 2-3 checkpoints per turn, 70+ here
    assert {t for (t,) in kept} <= set(range(30 - KEEP_TURNS + 1, 31)) | {None}
    assert len(await thread_texts(agent)) == 30 + 10  # every message is still in the thread (10 replies)
    await agent.close()
    again = make(graph_file, state_dir=state)  # resume and roll-back reach the last turns
    await again.restore(turns[:30 - KEEP_TURNS + 1])
    assert len(await thread_texts(again)) == 30 - KEEP_TURNS + 1 + len([t for t in turns[:30 - KEEP_TURNS + 1]
                                                                          if t[1]])
    with pytest.raises(Exception, match="cannot be resumed"):
        await again.restore(turns[:3])  # long gone: said in one line
    await again.close()


async def test_the_state_before_a_failed_turn_stays_however_far_back(graph_file, tmp_path):
    """`--retry-errored` goes back to the turn before the first failed one, however many turns came after it."""
    from tests.agents.test_langgraph_adapter import module_list

    state = tmp_path / "s" / "main"
    agent = make(graph_file, state_dir=state)
    turns = await play(agent, [msg(0, "My favourite colour is blue."), msg(1, "The cat is Tom.", observe=True)])
    module_list(graph_file, "FAIL").append(ConnectionError("down"))
    with pytest.raises(Exception, match="down"):
        await agent.reply(msg(2, "What is my favourite colour?"))
    turns += await play(agent, [msg(i, f"Fact {i}.", observe=True) for i in range(3, 20)])
    await agent.close()
    again = make(graph_file, state_dir=state)
    await again.restore(turns[:2])  # 17 turns back: kept, as the state before the failed turn
    assert len(await thread_texts(again)) == 3
    await again.close()


CUSTOM = '''
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


@dataclass
class Profile:
    facts: list = field(default_factory=list)


class State(MessagesState):
    profile: Profile


def respond(state):
    profile = state.get("profile") or Profile()
    profile = Profile(facts=[*profile.facts, state["messages"][-1].content])
    return {"messages": [AIMessage(content=f"{len(profile.facts)} facts")], "profile": profile}


builder = StateGraph(State)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
'''


async def test_a_type_the_graph_declares_in_its_state_is_loaded_back(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    path = tmp_path / "custom.py"
    path.write_text(CUSTOM)
    state = tmp_path / "s" / "main"
    agent = make(path, state_dir=state)
    turns = await play(agent, [msg(0, "One."), msg(1, "Two.")])
    await agent.close()
    again = make(path, state_dir=state)
    await again.restore(turns)
    values = (await again.graph.aget_state(again.thread)).values
    assert type(values["profile"]).__name__ == "Profile" and len(values["profile"].facts) == 2
    assert (await again.reply(msg(2, "Three."))).text == "3 facts"
    await again.close()


UNDECLARED = '''
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


@dataclass
class RunningSummary:  # as LangMem keeps its running summary: in a part of the state typed dict[str, Any]
    summary: str
    summarized_message_ids: set = field(default_factory=set)


class State(MessagesState):
    context: dict[str, Any]


def respond(state: State):
    old = state.get("context", {}).get("running_summary")
    said = (old.summary + " " if old is not None else "") + state["messages"][-1].content
    return {"messages": [AIMessage(content=f"summary of {said.count('.')}")],
            "context": {"running_summary": RunningSummary(said)}}


builder = StateGraph(State)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
'''


async def test_what_the_harness_wrote_itself_is_loaded_whatever_types_the_graph_put_in_it(tmp_path, monkeypatch):
    """A type the graph does not declare (LangMem's RunningSummary in a dict[str, Any]) stopped a fresh run at the
    turn after it was first written: the saver signs what it writes, so its own checkpoints load, in this run and on
    resume; a blob it did not vouch for is still held to the allow-list."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    path = tmp_path / "langmem_like.py"
    path.write_text(UNDECLARED)
    state = tmp_path / "s" / "main"
    agent = make(path, state_dir=state)
    turns = await play(agent, [msg(0, "One."), msg(1, "Two."), msg(2, "Three.")])
    await agent.close()
    assert [reply for _, reply in turns] == ["summary of 1", "summary of 2", "summary of 3"]
    again = make(path, state_dir=state)
    await again.restore(turns)
    assert (await again.reply(msg(3, "Four."))).text == "summary of 4"
    await again.close()
    with sqlite3.connect(state / STATE_FILE) as db:
        forms = {row[0] for row in db.execute("SELECT type FROM checkpoints")}
    assert forms == {"msgpack"}  # LangGraph's own form: its savers read the store as any other
    signatures = state / (STATE_FILE + ".sigs")
    signatures.write_text("0" * 64 + "\n")  # not the digests of these blobs (forged, or another machine's)
    forged = make(path, state_dir=state)
    with pytest.raises(UntrustedStore) as refused:
        await forged.restore(turns)
    assert "RunningSummary" in str(refused.value)
    await forged.close()
