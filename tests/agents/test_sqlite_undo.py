"""The undo log of SQLite stores: after random writes (inserts, replaces, updates, deletes, a table and a file made
mid-run), `rollback(K)` gives every file exactly the rows, rowids included, it had when turn K ended."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from ltm_harness._agents.frameworks.sqlite_undo import KEEP, UndoError, UndoLog, sqlite_files


def contents(root: Path) -> dict[str, list[tuple]]:
    """The rows of every framework table of every file, with rowids (the log's own tables and empty tables left out:
    a table or file made after a turn is emptied, not removed, when the store goes back to it)."""
    out = {}
    for path in sqlite_files(root):
        conn = sqlite3.connect(path)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                            "'sqlite_%' AND name NOT LIKE '\\_ltm\\_%' ESCAPE '\\' ORDER BY name")]
        for name in names:
            rows = conn.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid').fetchall()
            if rows:
                out[f"{path.relative_to(root)}:{name}"] = rows
        conn.close()
    return out


def write(path: Path, rng: random.Random, n: int) -> None:
    """What a framework does: committed writes of every kind, as mem0's history DB and Qdrant's points table get."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS points (id TEXT PRIMARY KEY, point BLOB)")
    conn.execute("CREATE TABLE IF NOT EXISTS history (id TEXT PRIMARY KEY, memory TEXT, score REAL, n INTEGER)")
    for _ in range(n):
        key = f"k{rng.randrange(12)}"
        op = rng.choice(["replace", "insert", "update", "delete", "delete"])
        with conn:
            if op == "replace":
                conn.execute("INSERT OR REPLACE INTO points VALUES (?, ?)", (key, rng.randbytes(rng.randrange(1, 40))))
            elif op == "insert":
                conn.execute("INSERT OR IGNORE INTO history VALUES (?, ?, ?, ?)",
                             (key, f"memory {rng.random()}", rng.random() / 3, rng.choice([None, 7])))
            elif op == "update":
                conn.execute("UPDATE history SET memory = ?, score = ? WHERE id = ?", ("it's changed", 0.1 + 0.2, key))
            else:
                conn.execute(f"DELETE FROM {rng.choice(['points', 'history'])} WHERE id = ?", (key,))
    conn.close()


@pytest.mark.parametrize("seed", range(3))
def test_rollback_gives_back_exactly_the_rows_of_either_of_the_last_turns(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "store"
    (root / "collection" / "a").mkdir(parents=True)
    log = UndoLog(root)
    write(root / "history.db", rng, 0)  # the files the framework makes when it opens
    log.rollback(0)
    assert contents(root) == {}
    seen = {0: contents(root)}
    for turn in range(1, 9):
        write(root / "history.db", rng, rng.randrange(0, 8))
        if turn >= 4:  # a collection made mid-run, and a table in it made later still
            write(root / "collection" / "a" / "storage.sqlite", rng, 3)
        if turn == 6:
            with sqlite3.connect(root / "history.db") as conn:
                conn.execute("CREATE TABLE late (x TEXT)")
                conn.execute("INSERT INTO late VALUES ('made in turn 6')")
        log.mark(turn)
        seen[turn] = contents(root)
        if rng.random() < 0.5:  # a turn that fails or is killed half-way: its writes are in the files, no mark
            write(root / "history.db", rng, 3)
            write(root / "collection" / "a" / "storage.sqlite", rng, 2)
            back = rng.choice([turn, turn - 1])
            assert log.dirty(back)
            log.rollback(back)
            assert contents(root) == seen[back], (turn, back)
            if back < turn:
                seen.pop(turn)
                write(root / "history.db", rng, 2)
                log.mark(turn)
                seen[turn] = contents(root)
        assert not log.dirty(turn)
    with pytest.raises(UndoError, match=f"taken back to turn {8 - KEEP + 1} at the earliest, not to turn 3"):
        log.rollback(3)
    with pytest.raises(UndoError, match="holds 8 turns, fewer than the 9 recorded"):
        log.rollback(9)
    assert contents(root) == seen[8]  # a refused rollback changes nothing
    log.rollback(0)
    assert contents(root) == {}


def test_a_file_made_after_the_last_mark_is_emptied_and_an_empty_store_cannot_stand_for_turns(tmp_path):
    log = UndoLog(tmp_path)
    with pytest.raises(UndoError, match="holds no saved state after turn 2"):
        log.rollback(2)
    write(tmp_path / "a.db", random.Random(1), 5)
    log.mark(1)
    write(tmp_path / "b.db", random.Random(2), 9)  # made during turn 2, which never ended
    assert log.dirty(1)
    log.rollback(1)
    assert [key for key in contents(tmp_path) if key.startswith("b.db")] == []
    assert not log.dirty(1)


def test_refuses_tables_without_rowids(tmp_path):
    with sqlite3.connect(tmp_path / "x.db") as conn:
        conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY) WITHOUT ROWID")
    with pytest.raises(UndoError, match="WITHOUT ROWID"):
        UndoLog(tmp_path).mark(0)
