"""LangGraph graphs and LangChain Runnables as agents: `-a langgraph:FILE.py:NAME` or `-a langgraph:MODULE:NAME`.

NAME is a compiled graph (`builder.compile()`; an uncompiled `StateGraph` is compiled here), a Functional API
workflow, a `RunnableWithMessageHistory` or any chat Runnable (`langgraph_forms`: how each is run, and what is
refused). Each conversation is one thread of the graph (`thread_id`: the harness's session), kept by the graph's checkpointer:

* a graph compiled without one is given an `AsyncSqliteSaver` (langgraph-checkpoint-sqlite) on the file
  `langgraph.sqlite` in the conversation's `state_dir` (an `InMemorySaver` when the run keeps no folder), whose
  serializer cannot name code and which keeps only the checkpoints resume needs (`langgraph_store`); a graph with
  its own checkpointer keeps it (it must keep threads across processes for `--resume`: an `InMemorySaver` does not);
* a Runnable that is not a graph (a chat model, `prompt | model`) becomes the one node of a `MessagesState` graph:
  it is handed the thread's messages and its output (a message, a string, or `{"messages": [...]}`) is the reply.

A user message goes in as `{"messages": [message]}`, or as `[message]` for a graph whose state is a list of
messages; which one is read from the graph's input schema, or set with `?input=dict` / `?input=messages` (for a
plain Runnable it says what the Runnable is handed: `{"messages": history}` or the list). The reply is the last AI
message the turn added (its content a string or a list of content blocks); its usage that of every model call of
the turn, from LangChain's callbacks (`langgraph_usage`; else the added messages' `usage_metadata`), priced by model.

A graph compiled with a long-term store (`compile(store=...)`) is handed one conversation's view of it, journaled and
rolled back with the checkpoint (`langgraph_longterm`); since its nodes are what write that store, history runs the
graph like any message (its reply recorded, unscored).

History that needs no reply (`observe`) goes into the thread without running the graph: `aupdate_state` as the
graph's input, then its pending tasks cleared, so no node and no model is called. Every checkpoint a turn writes
carries the turn's number in its metadata (`ltm_harness_turn`); rolling back to turn N (`--resume`, or after a
failed turn) makes a copy of the latest checkpoint of turn N the thread's head (LangGraph's own fork, `__copy__`),
so the thread is the graph's memory after exactly those turns, read from the checkpointer, not rebuilt.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START
from langgraph.store.base import BaseStore

from ltm_harness._agents.frameworks.base import Answer, FrameworkAgent, ModelUsage, content_text, load_target
from ltm_harness._agents.frameworks.langgraph_forms import as_graph, as_message, is_functional
from ltm_harness._agents.frameworks.langgraph_longterm import JOURNAL, ConversationStore
from ltm_harness._agents.frameworks.langgraph_store import forget, protect, prunable, prune, serializer_for
from ltm_harness._agents.frameworks.langgraph_usage import CallUsage
from ltm_harness._agents.lingering import stop_when_done
from ltm_harness._errors import AgentError
from ltm_harness._tokens import DEFAULT_ENCODING

TURN_KEY = "ltm_harness_turn"  # checkpoint metadata: the harness's turn that wrote it
STATE_FILE = "langgraph.sqlite"


class LangGraphAgent(FrameworkAgent):
    usage_note = ("model calls the graph makes outside LangChain's callbacks (a client it calls directly) are not "
                  "counted")
    description = "a LangGraph graph or LangChain Runnable (langgraph:FILE.py:NAME), one thread per conversation"
    kind = "langgraph"
    params = {"input": ("auto", "dict", "messages")}

    def __init__(self, spec: str, *, tokenizer: str = DEFAULT_ENCODING, runtime: Any = None) -> None:
        super().__init__(spec, tokenizer=tokenizer, runtime=runtime)
        self.graph, self.input_form = as_graph(load_target(spec, self.target), self.options["input"], spec)
        self.functional = is_functional(self.graph)
        if self.functional:
            self.ingests = False  # a workflow's memory is what it saves: history is answered (recorded unscored)
        store = getattr(self.graph, "store", None)
        self._user_store: BaseStore | None = store if isinstance(store, BaseStore) else None
        if self._user_store is not None:
            self.ingests = False  # the graph's nodes are what write its long-term store: history runs the graph
        self.longterm: ConversationStore | None = None  # this conversation's view of the user's store
        self._resumed_store = False  # the view's journal was brought back once in this process
        self._conn: Any = None  # the sqlite connection of the saver made here
        self._prune = False  # the saver is the harness's own, and the graph's state is in each checkpoint

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        saver = self.graph.checkpointer
        assert isinstance(saver, BaseCheckpointSaver), "opened: the graph has a checkpointer"
        return saver

    @property
    def thread(self) -> RunnableConfig:
        """The config naming this conversation's thread (its root graph: subgraphs keep their own namespaces)."""
        return {"configurable": {"thread_id": self.session_name, "checkpoint_ns": ""}}

    def _config(self, turn: int, callbacks: list[Any] | None = None) -> RunnableConfig:
        config: RunnableConfig = {"configurable": {"thread_id": self.session_name}, "metadata": {TURN_KEY: turn}}
        if callbacks:
            config["callbacks"] = callbacks
        return config

    def _input(self, message: BaseMessage) -> Any:
        return [message] if self.input_form == "messages" else {"messages": [message]}

    @staticmethod
    def _message(text: str, turn: int) -> HumanMessage:
        """The user message of a turn, with an id of its own: the reply is what the graph added after it."""
        return HumanMessage(content=text, id=f"ltm-harness-{turn}")

    async def _open(self) -> None:
        if self._user_store is not None:
            self.longterm = ConversationStore(self._user_store, self.session_name, self.state_file(JOURNAL))
            self.longterm.load()
            self.graph = self.graph.copy(update={"store": self.longterm})
        if isinstance(self.graph.checkpointer, BaseCheckpointSaver):
            _stop_user_connections(self.graph)
            return  # the graph's own
        path = self.state_file(STATE_FILE)
        saver: BaseCheckpointSaver[Any]
        if path is None:
            saver = InMemorySaver()
        else:
            import aiosqlite
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            self._conn = await aiosqlite.connect(str(path))
            saver = AsyncSqliteSaver(self._conn, serde=serializer_for(self.graph, path))
            self._prune = prunable(self.graph)
        self.graph = self.graph.copy(update={"checkpointer": saver})

    async def _turn_done(self, turn: int) -> None:
        """Keep the harness's own store linear: drop the checkpoints resume and roll-back no longer need."""
        if self._prune and self._conn is not None:
            await prune(self._conn, self.session_name, TURN_KEY, turn)

    async def _answer(self, text: str, turn: int) -> Answer:
        if self.longterm is not None:
            self.longterm.turn = turn  # the store's writes in this turn are this turn's
        message = self._message(text, turn)
        calls = CallUsage()
        out = await self.graph.ainvoke(self._input(message), self._config(turn, [calls]))
        await self._turn_done(turn)
        if self.functional:  # a workflow returns its reply (a message, a string, a list of messages)
            try:
                reply = as_message(out)
            except TypeError as exc:
                raise AgentError(f"agent {self.spec!r}: {exc}") from None
            return Answer(content_text(reply.content), calls.usage or _usage_of([reply]))
        messages = out.get("messages") if isinstance(out, dict) else out
        if not isinstance(messages, list) or not messages or not isinstance(messages[-1], BaseMessage):
            raise AgentError(f"agent {self.spec!r}: the graph returned {type(out).__name__} without a list of messages; "
                             "keep the conversation in a `messages` key (MessagesState)")
        new = _after(messages, message.id)
        said = [m for m in new if isinstance(m, AIMessage)]
        if not said:
            raise AgentError(f"agent {self.spec!r}: the graph added no reply to the thread; end it with a node that "
                             "returns an AI message")
        return Answer(content_text(said[-1].content), calls.usage or _usage_of(new))

    async def _ingest(self, text: str, turn: int, role: str = "user") -> None:
        config = self._config(turn)
        message: BaseMessage = self._message(text, turn) if role != "assistant" else \
            AIMessage(content=text, id=f"ltm-harness-{turn}")  # the agent's own earlier reply, as an AI message
        await self.graph.aupdate_state(config, self._input(message), as_node=START)
        await self.graph.aupdate_state(config, None, as_node=END)  # nothing left to run: no node is called
        await self._turn_done(turn)

    async def _rollback(self, turns: int) -> None:
        if self.longterm is not None:  # the long-term store back to the same turn as the checkpoint
            await self.longterm.rollback(turns, fresh_process=not self._resumed_store)
            self._resumed_store = True
        saver = self.checkpointer
        head = await saver.aget_tuple(self.thread)
        if turns == 0:
            if head is not None:
                await saver.adelete_thread(self.session_name)
            if self._conn is not None:
                await forget(self._conn, self.session_name)
            return
        if self._prune and self._conn is not None and head is not None:
            await protect(self._conn, self.session_name, turns)  # a way back to it stays, however long ago
        target = None
        async for found in saver.alist(self.thread, filter={TURN_KEY: turns}, limit=1):
            target = found
        if target is None:
            raise AgentError(f"agent {self.spec!r}: cannot be resumed: the checkpointer ({type(saver).__name__}) holds "
                             f"no state of thread {self.session_name!r} after turn {turns}; compile the graph without "
                             "a checkpointer (the harness then keeps one in the run folder), or run it again with "
                             "--overwrite")
        if head is not None and head.checkpoint["id"] == target.checkpoint["id"]:
            return
        await self.graph.aupdate_state(target.config, None, as_node="__copy__")

    async def _close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.close()


def _stop_user_connections(graph: Any) -> None:
    """A checkpointer or store the user's file made on an aiosqlite connection (`AsyncSqliteSaver(conn)`): its
    worker thread would keep the process alive after the run, so the command line stops it when it is done
    (`lingering`)."""
    try:
        import aiosqlite
    except ImportError:  # no aiosqlite: no such connection
        return
    for holder in (graph.checkpointer, getattr(graph, "store", None)):
        conn = getattr(holder, "conn", None)
        if isinstance(conn, aiosqlite.Connection):
            stop_when_done(conn, conn.stop)


def _after(messages: list[BaseMessage], sent: str | None) -> list[BaseMessage]:
    """The messages the turn added: those after the one it sent (searched from the end: the thread may be long), or
    the last one when the graph did not keep it."""
    for k in range(len(messages) - 1, -1, -1):
        if messages[k].id == sent:
            return messages[k + 1:]
    return messages[-1:]


def _usage(message: BaseMessage) -> ModelUsage | None:
    usage = getattr(message, "usage_metadata", None)
    if not isinstance(message, AIMessage) or not usage:
        return None
    meta = message.response_metadata or {}
    model = meta.get("model_name") or meta.get("model")
    return ModelUsage(model if isinstance(model, str) else None, int(usage.get("input_tokens", 0)),
                      int(usage.get("output_tokens", 0)))


def _usage_of(messages: list[BaseMessage]) -> list[ModelUsage]:
    """The usage the turn's AI messages carry (when no model call reached the harness's callback)."""
    return [usage for m in messages if (usage := _usage(m)) is not None]
