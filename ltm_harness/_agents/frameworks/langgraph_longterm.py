"""A LangGraph graph's long-term store (`builder.compile(store=InMemoryStore())`, the nodes' `store.put`/`search`: the
LangGraph docs' pattern for long-term memory), kept per conversation and brought back like its checkpoint.

The graph is handed a `ConversationStore` in place of the user's store. It is a view of the user's store, not a copy:

* **one conversation's own part of it**: every namespace the graph uses is put under (`ltm-harness`, SESSION) in the
  user's store, and taken off again in what the graph reads back (items, searches, namespace lists). Conversations
  run side by side on one store (LoCoMo's ten, isolated tests) never see each other's memories, and a graph's own
  namespaces (`("memories", user_id)`) work unchanged;
* **a journal of its writes**: each put or delete the graph makes is recorded with the harness's turn that made it,
  the value before and the value after (`longterm.jsonl` in the conversation's `state_dir`, JSON lines appended and
  flushed before the turn is recorded; in memory when the run keeps no folder). Rolling back to turn N (independent
  questions, a failed turn, `--resume`) puts back, newest first, the values the writes of later turns replaced, and
  cuts the journal there; a resumed run in a new process (an `InMemoryStore` starts empty) first sets every key the
  journal names to its value after turn N. So the store is the graph's memory after exactly the recorded turns, as
  the checkpoint is, and a question never sees what an earlier question wrote.

The journal holds JSON only (a store's values are JSON by LangGraph's contract): reading it back can name no code. A
value that JSON cannot hold (a datetime, say) is kept as its text. A torn last line (a kill in the middle of a write)
is ignored: that write's turn was never recorded, so it is one the roll-back undoes anyway.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from langgraph.store.base import (BaseStore, GetOp, Item, ListNamespacesOp, MatchCondition, Op, PutOp, Result,
                                  SearchOp)

ROOT = "ltm-harness"  # the first part of every namespace the harness keeps in the user's store
JOURNAL = "longterm.jsonl"


@dataclass
class Write:
    """One put or delete of the graph's: the turn that made it, where, the value before and after (None: absent)."""

    turn: int
    namespace: tuple[str, ...]
    key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    end: int = 0  # the journal file's size after this line


class ConversationStore(BaseStore):
    """The user's store as one conversation sees it, with a journal of its writes (see the module's docstring)."""

    def __init__(self, inner: BaseStore, session: str, journal: Path | None) -> None:
        self.inner = inner
        self.prefix: tuple[str, ...] = (ROOT, session)
        self.journal = journal
        self.turn = 0  # the turn the graph's writes belong to (set by the adapter before each turn)
        self.writes: list[Write] = []
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config

    def __getattr__(self, name: str) -> Any:  # what else the user's store offers (an index config, say)
        return getattr(self.inner, name)

    # -- the view ----------------------------------------------------------------------------------------------
    def _in(self, op: Op) -> Op:
        """The operation on the user's store: its namespaces put under this conversation's prefix."""
        if isinstance(op, (GetOp, PutOp)):
            return op._replace(namespace=self.prefix + tuple(op.namespace))
        if isinstance(op, SearchOp):
            return op._replace(namespace_prefix=self.prefix + tuple(op.namespace_prefix))
        if isinstance(op, ListNamespacesOp):
            conditions = list(op.match_conditions or ())
            conditions = [c._replace(path=self.prefix + tuple(c.path)) if c.match_type == "prefix" else c
                          for c in conditions]
            if not any(c.match_type == "prefix" for c in conditions):
                conditions.append(MatchCondition(match_type="prefix", path=self.prefix))
            depth = None if op.max_depth is None else op.max_depth + len(self.prefix)
            return op._replace(match_conditions=tuple(conditions), max_depth=depth)
        return op

    def _out(self, result: Result) -> Result:
        """A result as the graph sees it: the conversation's prefix taken off every namespace."""
        cut = len(self.prefix)
        if isinstance(result, Item):
            shown = copy.copy(result)
            shown.namespace = tuple(result.namespace[cut:])
            return shown
        if isinstance(result, list):
            out: list[Any] = []
            for entry in result:
                if isinstance(entry, Item):
                    out.append(self._out(entry))
                elif isinstance(entry, tuple):
                    if entry[:cut] == self.prefix and len(entry) > cut:
                        out.append(entry[cut:])
                else:
                    out.append(entry)
            return out
        return result

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = [self._in(op) for op in ops]
        puts = [op for op in ops if isinstance(op, PutOp)]
        before = self.inner.batch([GetOp(op.namespace, op.key) for op in puts]) if puts else []
        results = self.inner.batch(ops)
        self._record(puts, before)
        return [self._out(r) for r in results]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = [self._in(op) for op in ops]
        puts = [op for op in ops if isinstance(op, PutOp)]
        before = await self.inner.abatch([GetOp(op.namespace, op.key) for op in puts]) if puts else []
        results = await self.inner.abatch(ops)
        self._record(puts, before)
        return [self._out(r) for r in results]

    # -- the journal ---------------------------------------------------------------------------------------------
    def _record(self, puts: list[PutOp], before: list[Result]) -> None:
        cut = len(self.prefix)
        lines = []
        for op, old in zip(puts, before):
            write = Write(self.turn, tuple(op.namespace[cut:]), op.key,
                          _plain(old.value) if isinstance(old, Item) else None,
                          None if op.value is None else _plain(dict(op.value)))
            self.writes.append(write)
            lines.append(write)
        if self.journal is not None and lines:
            with self.journal.open("ab") as out:
                for write in lines:
                    out.write(json.dumps({"turn": write.turn, "namespace": list(write.namespace), "key": write.key,
                                          "before": write.before, "after": write.after},
                                         default=str).encode("utf-8") + b"\n")
                    write.end = out.tell()
                out.flush()

    def load(self) -> None:
        """The journal of an earlier process (a resumed run), read back as JSON lines; a torn last line ignored."""
        self.writes = []
        if self.journal is None or not self.journal.is_file():
            return
        end = 0
        with self.journal.open("rb") as source:
            for line in source:
                end += len(line)
                try:
                    data = json.loads(line)
                    write = Write(int(data["turn"]), tuple(str(p) for p in data["namespace"]), str(data["key"]),
                                  _mapping(data["before"]), _mapping(data["after"]), end)
                except (ValueError, KeyError, TypeError):
                    break  # torn by a kill: this write's turn was never recorded
                self.writes.append(write)

    async def rollback(self, turns: int, *, fresh_process: bool) -> None:
        """The store after exactly `turns` turns: later writes undone (newest first), the journal cut there; in a
        new process the state after `turns` is first set for every key the journal names (an in-memory store starts
        empty)."""
        kept = [w for w in self.writes if w.turn <= turns]
        undone = [w for w in self.writes if w.turn > turns]
        ops: list[Op] = []
        if fresh_process:
            state: dict[tuple[tuple[str, ...], str], dict[str, Any] | None] = {}
            for write in self.writes:  # the first value before any write, then the last value after each kept one
                state.setdefault((write.namespace, write.key), write.before)
            for write in kept:
                state[(write.namespace, write.key)] = write.after
            ops = [PutOp(self.prefix + ns, key, value) for (ns, key), value in state.items()]
        else:
            ops = [PutOp(self.prefix + w.namespace, w.key, w.before) for w in reversed(undone)]
        if ops:
            await self.inner.abatch(ops)
        self.writes = kept
        if self.journal is not None and self.journal.is_file() and undone:
            with self.journal.open("r+b") as out:
                out.truncate(kept[-1].end if kept else 0)


def _plain(value: Any) -> dict[str, Any]:
    """A value as the journal keeps it (JSON; what JSON cannot hold kept as its text)."""
    plain: dict[str, Any] = json.loads(json.dumps(value, default=str))
    return plain


def _mapping(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    raise TypeError("a store value is a JSON object or null")
