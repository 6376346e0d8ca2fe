"""The harness's own LangGraph checkpointer: a store in the run folder that cannot name code, and that grows linearly.

**Nothing in it can run code.** A results folder is something people zip and send each other; its
`<agent>/state/<session>/langgraph.sqlite` is read back on `--resume` and `--retry-errored`. LangGraph's default
serializer rebuilds any type a checkpoint names (a msgpack blob naming `os.system` calls it), so the harness's saver
uses `StrictSerializer`: LangGraph's `JsonPlusSerializer` in its strict mode, its allow-list being LangGraph's safe
types (messages, dates, `Send`, ...) and the types the graph declares in its state, input, output and node schemas
(found as LangGraph itself finds them with `LANGGRAPH_STRICT_MSGPACK=true`). A blob naming anything else, or stored
in a form the harness never writes (`pickle`, the legacy `json`), stops the agent in one line (`UntrustedStore`)
instead of being loaded. What the saver writes it vouches for (the keyed digest of `store_trust`, listed in
`langgraph.sqlite.sigs` before the blob is stored): a blob listed there holds only values the user's own graph made
in a run of this harness on this machine, so it is loaded whatever types it names (a LangMem `RunningSummary` kept
in an untyped part of the state stopped a fresh run). Whoever wrote the folder themselves and trusts it can say so: `LTM_TRUST_FRAMEWORK_STORES=1`
loads any type LangGraph can load, as LangGraph does by default.

**Linear storage.** A checkpoint holds the whole state (with `MessagesState`, every message so far), and LangGraph
keeps every step's checkpoint, so a thread's file grows with the square of the conversation. The harness needs
only what resume and roll-back use: the last checkpoint of each of the last `KEEP_TURNS` turns (a roll-back goes at
most that far: a try that failed, a turn taken in just before a kill, the questions asked since the end of the
history) and the thread's head, and the state before any turn that failed (`protect`: `--retry-errored` goes back
there, however long ago). `prune` deletes the rest of the thread's root namespace after each turn; subgraph
namespaces are left as they are, and a graph with a `DeltaChannel` (which rebuilds state from ancestors) is not
pruned at all.
"""

from __future__ import annotations

import logging
import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ltm_harness._agents.frameworks.store_trust import TRUST_ENV, digest, stores_trusted  # noqa: F401 (one place)
from ltm_harness._errors import AgentError

# turns back a roll-back may go: a failed try (0), a turn taken in before a kill (1), back to the end of the
# history after a question, and a kill then (2)
KEEP_TURNS = 4
SIGNATURES = ".sigs"  # beside the store: the digests of the blobs the harness wrote into it
_DIGEST_LENGTH = 64  # hex characters of a SHA-256 HMAC
_SAFE_FORMS = ("null", "bytes", "bytearray", "msgpack")  # what this LangGraph writes (never pickle, never json)
_blocked: ContextVar[list[str] | None] = ContextVar("ltm_langgraph_blocked", default=None)


class UntrustedStore(AgentError):
    """A framework store names code (or is in a form the harness never writes): it is not loaded."""

    def __init__(self, what: str, where: str = "in the run folder") -> None:
        super().__init__(f"the LangGraph store {where} names {what}, which the harness does not load from a "
                         f"results folder (it could run code); if you wrote this folder yourself and trust it, run "
                         f"again with {TRUST_ENV}=1", fatal=True)


def _note_blocked(event: SerdeEvent) -> None:
    seen = _blocked.get()
    if seen is not None and event.get("kind") in ("msgpack_blocked", "msgpack_method_blocked"):
        seen.append(".".join(p for p in (event.get("module"), event.get("name"), event.get("method")) if p))


def _quiet(record: logging.LogRecord) -> bool:
    """LangGraph's own warning about a blocked type is left out while the harness loads (its line says it)."""
    return _blocked.get() is None


register_serde_event_listener(_note_blocked)
logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_quiet)


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's serializer in strict mode (`allowed_msgpack_modules` = the safe types and the graph's own), whose
    loads refuse a blob that names any other type instead of returning its raw data. `where`: the store's file.

    What it writes it vouches for: before a msgpack blob goes into the store, its keyed digest (`store_trust.digest`,
    with this user's key) is appended to `signatures` (the store's file + `.sigs`, one digest a line). A blob whose
    digest is listed was written by this harness on this machine, from values the user's own graph made: it is
    loaded as LangGraph loads by default, whatever types it names (a LangMem `RunningSummary` kept in an untyped part
    of the state). Any other blob is held to the allow-list. The store itself keeps LangGraph's own forms, so
    LangGraph's savers read it as they read any store."""

    def __init__(self, *, where: str = "in the run folder", signatures: Path | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.where = where
        self.signatures = signatures
        self._signed: set[str] = set()
        if signatures is not None and signatures.is_file():
            self._signed = {line.strip() for line in signatures.read_text("ascii", errors="replace").splitlines()
                            if len(line.strip()) == _DIGEST_LENGTH}
        self._own = JsonPlusSerializer(allowed_msgpack_modules=True)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        form, data = super().dumps_typed(obj)
        if form == "msgpack" and self.signatures is not None:
            said = digest(data)
            if said not in self._signed:  # listed before the blob is stored: a kill never leaves it unvouched
                with self.signatures.open("a", encoding="ascii") as out:
                    out.write(said + "\n")
                self._signed.add(said)
        return form, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        form = data[0]
        if form == "msgpack" and self._signed and digest(data[1]) in self._signed:
            return self._own.loads_typed(data)  # the harness's own write: its types are the user's graph's
        if form not in _SAFE_FORMS:
            raise UntrustedStore(f"a value stored as {form!r}", self.where)
        seen: list[str] = []
        token = _blocked.set(seen)
        try:
            value = super().loads_typed(data)
        finally:
            _blocked.reset(token)
        if seen:
            raise UntrustedStore(", ".join(sorted(set(seen))[:3]), self.where)
        return value


def serializer_for(graph: Any, path: Any) -> JsonPlusSerializer:
    """The serializer of the harness's saver for `graph`: strict with the graph's allow-list, unless the user
    trusts the folder's stores (then LangGraph's default)."""
    if stores_trusted():
        return JsonPlusSerializer(allowed_msgpack_modules=True)
    return StrictSerializer(allowed_msgpack_modules=tuple(graph_allowlist(graph)), where=str(path),
                            signatures=Path(path).with_name(Path(path).name + SIGNATURES))


def graph_allowlist(graph: Any) -> set[tuple[str, ...]]:
    """The types `graph` declares (its state, input, output, context and node schemas, its channels' types), found
    as LangGraph does in strict mode; LangGraph's message types when it cannot say."""
    from langgraph._internal import _serde

    found = getattr(graph, "_serde_allowlist", None)
    if found:
        return set(found)
    builder = getattr(graph, "builder", None)
    schemas: list[Any] = []
    for name in ("state_schema", "input_schema", "output_schema", "context_schema"):
        schema = getattr(builder, name, None)
        if schema is not None:
            schemas.append(schema)
    for node in (getattr(builder, "nodes", None) or {}).values():
        if getattr(node, "input_schema", None) is not None:
            schemas.append(node.input_schema)
    try:
        return _serde.build_serde_allowlist(schemas=schemas, channels=dict(getattr(graph, "channels", {}) or {}))
    except Exception:  # a schema LangGraph cannot walk: its message types
        return _serde.curated_core_allowlist()


def prunable(graph: Any) -> bool:
    """The graph's state can be read from one checkpoint (no `DeltaChannel` rebuilding it from ancestors)."""
    from langgraph.channels.delta import DeltaChannel

    return not any(isinstance(c, DeltaChannel) for c in (getattr(graph, "channels", None) or {}).values())


_KEEP_TABLE = ("CREATE TABLE IF NOT EXISTS ltm_harness_keep (thread_id TEXT NOT NULL, turn INTEGER NOT NULL, "
               "PRIMARY KEY (thread_id, turn))")


async def protect(conn: Any, thread: str, turn: int) -> None:
    """Keep the state after `turn` for good: a turn after it failed (or was rolled back), and `--retry-errored`
    goes back to it, however far back that is by then."""
    await conn.execute(_KEEP_TABLE)
    await conn.execute("INSERT OR IGNORE INTO ltm_harness_keep (thread_id, turn) VALUES (?, ?)", (thread, turn))
    await conn.commit()


async def forget(conn: Any, thread: str) -> None:
    """A new conversation in the thread: the old one's protected turns go with it."""
    await conn.execute(_KEEP_TABLE)
    await conn.execute("DELETE FROM ltm_harness_keep WHERE thread_id = ?", (thread,))
    await conn.commit()


async def prune(conn: Any, thread: str, turn_key: str, turn: int, keep_turns: int = KEEP_TURNS) -> None:
    """Delete the checkpoints (and their pending writes) of `thread`'s root namespace that resume and roll-back do
    not need: all but the head, the last checkpoint of each of the turns `turn - keep_turns + 1 .. turn`, and the
    last checkpoint of each protected turn (`protect`)."""
    await conn.execute(_KEEP_TABLE)
    async with conn.execute("SELECT turn FROM ltm_harness_keep WHERE thread_id = ?", (thread,)) as cursor:
        protected = {row[0] for row in await cursor.fetchall()}
    query = ("SELECT checkpoint_id, json_extract(CAST(metadata AS TEXT), '$.' || ?) FROM checkpoints "
             "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC")
    keep: list[str] = []
    kept_turns: set[int] = set()
    async with conn.execute(query, (turn_key, thread)) as cursor:
        rows = await cursor.fetchall()
    for k, (checkpoint_id, of_turn) in enumerate(rows):
        wanted = isinstance(of_turn, int) and (turn - keep_turns < of_turn <= turn or of_turn in protected)
        if k == 0 or (wanted and of_turn not in kept_turns):
            keep.append(checkpoint_id)
            if isinstance(of_turn, int):
                kept_turns.add(of_turn)
    if len(keep) == len(rows):
        return
    marks = ",".join("?" * len(keep))
    await conn.execute(f"DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id NOT IN "
                       f"({marks})", (thread, *keep))
    await conn.execute(f"DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id NOT IN "
                       f"({marks})", (thread, *keep))
    await conn.commit()
