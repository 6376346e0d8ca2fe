"""Turn marks and an undo log kept inside SQLite files, so that a store made of them can go back to an earlier turn.

A framework whose memory is SQLite files it writes itself (mem0: its history DB, and local Qdrant's collections, one
`storage.sqlite` each) keeps no versions of them. `UndoLog` adds, in each file beside the framework's tables:

* `_ltm_undo(seq, stmt)`: for every row the framework inserts, updates or deletes, the statement that undoes it,
  written by triggers, so inside the framework's own transaction (a change and its undo reach the disk together or
  not at all, whenever the process is killed). An `INSERT OR REPLACE` that replaces a row is undone too: a trigger
  before each insert keeps the row it would replace (found by the table's unique keys);
* `_ltm_marks(turn, seq)`: where the log stood when each turn ended;
* `_ltm_tables(name, since)`: the tables tracked, each with the turn it was first seen at.

`rollback(K)` runs the undo statements written after K's mark, newest first, with the triggers off, and deletes
them: every row is as it was when turn K ended, rowids included (so the framework reads its rows back in the same
order). A table first seen after K, or a file made after the last mark, is emptied (it held nothing then), and turn
0 (a fresh conversation) empties every table. Only the last `KEEP` turns can be gone back to: a turn taken in just
before the run was killed, or a failed turn's half, is all a resume or a retry ever undoes. Older undo entries are
deleted as turns end, so the log holds a few turns' changes and a turn costs its own changes twice (each row and
its undo), never a copy of the store. (Copying the files after every turn would be simpler, but the copy grows with
the memory: a long conversation would copy its whole store on every turn.)

Tables must have rowids (no WITHOUT ROWID tables) and plain names; the framework must not write while a mark or
a rollback runs (the adapter closes it first for a rollback).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KEEP = 2  # turns a store can be taken back by: the last mark and the one before it are kept
_HEADER = b"SQLite format 3\x00"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OWN = ("_ltm_undo", "_ltm_marks", "_ltm_tables")


class UndoError(Exception):
    """The store cannot be taken back to the turn asked for (said in one sentence)."""


def sqlite_files(root: Path) -> list[Path]:
    """The SQLite databases under `root` (by their header), in a fixed order."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(("-journal", "-wal", "-shm")):
            with path.open("rb") as f:
                if f.read(16) == _HEADER:
                    found.append(path)
    return found


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A transaction of the log's own. It is not synced to the disk (`synchronous=OFF`): what it writes survives the
    process being killed, as the harness's event log does (written, not synced), which is all a resume needs; the
    framework's own writes keep their settings."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA synchronous = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.close()


def _q(name: str) -> str:
    return f'"{name}"'


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                        "ORDER BY name").fetchall()
    return [r[0] for r in rows if r[0] not in _OWN]


def _triggers(conn: sqlite3.Connection, table: str) -> list[str]:
    """The statements creating the undo triggers of `table`."""
    if not _NAME.match(table):
        raise UndoError(f"table {table!r} has a name the undo log cannot quote")
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({_q(table)})")]
    if not all(_NAME.match(c) for c in columns):
        raise UndoError(f"a column of table {table!r} has a name the undo log cannot quote")
    try:
        conn.execute(f"SELECT rowid FROM {_q(table)} LIMIT 0")
    except sqlite3.OperationalError:
        raise UndoError(f"table {table!r} has no rowids (WITHOUT ROWID), which the undo log needs") from None
    names = ",".join(_q(c) for c in columns)

    def restore(ref: str) -> str:  # an SQL expression: the statement putting the row `ref` back
        values = " || ',' || ".join(f"quote({ref}{_q(c)})" for c in columns)
        return (f"'INSERT OR REPLACE INTO {_q(table)}(rowid,{names}) VALUES(' || quote({ref}rowid) || ',' || "
                f"{values} || ')'")

    keys = []  # each unique index's columns: a row an INSERT OR REPLACE would replace matches one of them
    for index in conn.execute(f"PRAGMA index_list({_q(table)})").fetchall():
        if index[2]:  # unique
            cols = [r[2] for r in conn.execute(f"PRAGMA index_info({_q(index[1])})")]
            if cols and all(c is not None for c in cols):
                keys.append(" AND ".join(f"{_q(c)} = NEW.{_q(c)}" for c in cols))
    sets = ", ".join(f"{_q(c)} = ' || quote(OLD.{_q(c)}) || '" for c in columns)
    prefix = f"_ltm_{table}"
    made = [
        f"CREATE TRIGGER {prefix}_insert AFTER INSERT ON {_q(table)} BEGIN INSERT INTO _ltm_undo(stmt) VALUES("
        f"'DELETE FROM {_q(table)} WHERE rowid = ' || NEW.rowid); END",
        f"CREATE TRIGGER {prefix}_update AFTER UPDATE ON {_q(table)} BEGIN INSERT INTO _ltm_undo(stmt) VALUES("
        f"'UPDATE {_q(table)} SET rowid = ' || OLD.rowid || ', {sets} WHERE rowid = ' || NEW.rowid); END",
        f"CREATE TRIGGER {prefix}_delete AFTER DELETE ON {_q(table)} BEGIN INSERT INTO _ltm_undo(stmt) VALUES("
        f"{restore('OLD.')}); END",
    ]
    if keys:
        where = " OR ".join(f"({k})" for k in keys)
        made.append(f"CREATE TRIGGER {prefix}_replace BEFORE INSERT ON {_q(table)} BEGIN INSERT INTO _ltm_undo(stmt) "
                    f"SELECT {restore('')} FROM {_q(table)} WHERE {where}; END")
    return made


def _own_triggers(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '\\_ltm\\_%' "
                                       "ESCAPE '\\' ORDER BY name")]


def _track(conn: sqlite3.Connection, turn: int) -> None:
    """Give the file the log's tables, and every table not tracked yet its triggers (first seen at `turn`)."""
    conn.execute("CREATE TABLE IF NOT EXISTS _ltm_undo (seq INTEGER PRIMARY KEY AUTOINCREMENT, stmt TEXT NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS _ltm_marks (turn INTEGER PRIMARY KEY, seq INTEGER NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS _ltm_tables (name TEXT PRIMARY KEY, since INTEGER NOT NULL)")
    tracked = {r[0] for r in conn.execute("SELECT name FROM _ltm_tables")}
    for table in _tables(conn):
        if table not in tracked:
            for statement in _triggers(conn, table):
                conn.execute(statement)
            conn.execute("INSERT INTO _ltm_tables VALUES (?, ?)", (table, turn))


def _last_seq(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = '_ltm_undo'").fetchone()
    return int(row[0]) if row else 0


def _marks(conn: sqlite3.Connection) -> dict[int, int]:
    try:
        return dict(conn.execute("SELECT turn, seq FROM _ltm_marks").fetchall())
    except sqlite3.OperationalError:  # a file made after the last mark: not tracked yet
        return {}


class UndoLog:
    """The undo log of every SQLite file under `root` (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._schemas: dict[Path, int] = {}  # each file's schema version when its tables were last tracked

    def mark(self, turn: int) -> None:
        """Turn `turn` has ended: remember where each file's log stands, and forget what only older turns need."""
        for path in sqlite_files(self.root):
            with _connect(path) as conn:
                schema = conn.execute("PRAGMA schema_version").fetchone()[0]
                if self._schemas.get(path) != schema:  # a table may have been made since: track it
                    _track(conn, turn)
                    self._schemas[path] = conn.execute("PRAGMA schema_version").fetchone()[0]
                conn.execute("INSERT OR REPLACE INTO _ltm_marks VALUES (?, ?)", (turn, _last_seq(conn)))
                conn.execute("DELETE FROM _ltm_marks WHERE turn <= ?", (turn - KEEP,))
                oldest = conn.execute("SELECT MIN(seq) FROM _ltm_marks").fetchone()[0]
                conn.execute("DELETE FROM _ltm_undo WHERE seq <= ?", (oldest,))

    def dirty(self, turn: int) -> bool:
        """Whether any file holds more than its state after `turn` (a rollback would change something)."""
        for path in sqlite_files(self.root):
            conn = sqlite3.connect(path)
            try:
                marks = _marks(conn)
                if turn == 0 or turn not in marks:
                    if any(conn.execute(f"SELECT 1 FROM {_q(t)} LIMIT 1").fetchone() for t in _tables(conn)):
                        return True
                    continue
                if max(marks) > turn or _last_seq(conn) > marks[turn]:
                    return True
                since = dict(conn.execute("SELECT name, since FROM _ltm_tables").fetchall())
                if any(t not in since or since[t] > turn for t in _tables(conn)):
                    return True
            finally:
                conn.close()
        return False

    def rollback(self, turn: int) -> None:
        """Every file as it was when `turn` ended (0: empty); an UndoError when that state is no longer kept (nothing
        is changed then)."""
        files = sqlite_files(self.root)
        plans = [_plan(path, turn) for path in files]
        if turn > 0 and "undo" not in plans:
            raise UndoError(f"its memory in {self.root} holds no saved state after turn {turn}")
        self._schemas.clear()
        for path, plan in zip(files, plans):
            with _connect(path) as conn:
                marks = _marks(conn)
                before = dict(conn.execute("SELECT name, since FROM _ltm_tables").fetchall()) if marks else {}
                _track(conn, turn)  # a file or table made after the last mark is tracked from now on (emptied below)
                triggers = _own_triggers(conn)
                saved = [conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                                      (name,)).fetchone()[0] for name in triggers]
                for name in triggers:
                    conn.execute(f"DROP TRIGGER {_q(name)}")
                if plan == "undo":
                    _undo(conn, path, marks[turn])
                    conn.execute("DELETE FROM _ltm_undo WHERE seq > ?", (marks[turn],))
                    conn.execute("DELETE FROM _ltm_marks WHERE turn > ?", (turn,))
                else:
                    conn.execute("DELETE FROM _ltm_undo")
                    conn.execute("DELETE FROM _ltm_marks")
                for table in _tables(conn):
                    if plan == "clear" or before.get(table, turn + 1) > turn:
                        conn.execute(f"DELETE FROM {_q(table)}")  # it held nothing when `turn` ended
                        conn.execute("UPDATE _ltm_tables SET since = ? WHERE name = ?", (turn, table))
                for statement in saved:
                    conn.execute(statement)
        self.mark(turn)


def _undo(conn: sqlite3.Connection, path: Path, since: int) -> None:
    """Run the undo statements written after `since`, newest first. They come from the file, which a results folder
    may have been given by anyone: each may only insert, update or delete rows of the file's own tables (an
    authorizer refuses anything else: ATTACH, which would write another file, PRAGMA, schema changes, any function),
    so a planted statement is refused, as an UndoError, and the file is left as it was."""
    tables = set(_tables(conn))
    allowed = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_READ}

    def authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
        if action in allowed and arg1 in tables and db in (None, "main"):
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    statements = conn.execute("SELECT stmt FROM _ltm_undo WHERE seq > ? ORDER BY seq DESC", (since,)).fetchall()
    conn.set_authorizer(authorize)
    try:
        for (stmt,) in statements:
            conn.execute(stmt if isinstance(stmt, str) else "")
    except (sqlite3.Error, sqlite3.Warning, ValueError) as exc:
        raise UndoError(f"its memory in {path.parent} holds an undo entry the harness does not write ({exc}); "
                        f"it is not run") from None
    finally:
        conn.set_authorizer(None)


def _plan(path: Path, turn: int) -> str:
    """How `path` goes back to its state after `turn`: "undo" (its log), "clear" (it was empty then), or an UndoError
    (that state is not kept)."""
    conn = sqlite3.connect(path)
    try:
        marks = _marks(conn)
        if not marks or turn == 0:
            return "clear"  # made after the last mark, or a fresh conversation
        if turn in marks:
            return "undo"
        since = [r[0] for r in conn.execute("SELECT since FROM _ltm_tables")]
    finally:
        conn.close()
    if turn > max(marks):
        raise UndoError(f"its memory in {path.parent} holds {max(marks)} turns, fewer than the {turn} recorded")
    if since and min(since) > turn:
        return "clear"  # made after `turn`
    raise UndoError(f"its memory in {path.parent} can be taken back to turn {min(marks)} at the earliest, not to "
                    f"turn {turn}")


def _marks_of(path: Path) -> dict[int, int]:
    conn = sqlite3.connect(path)
    try:
        return _marks(conn)
    finally:
        conn.close()
