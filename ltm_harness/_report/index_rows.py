"""What the results index remembers of each finished folder, so that refreshing it reads only what changed.

The rule: `results/index.html` carries, in a JSON block it never runs (`<script type="application/json">`), each
finished folder's row with the signature of the files it was made from: summary.json's device, inode, size,
modification and change times, and whether the report and the AIQ report are there. Each refresh lists the
results folder afresh (a deleted folder drops out, a new one comes in), takes the row of a folder whose signature
is unchanged from the block, and reads and validates only the summaries that changed: the finished run's own, or
one another process wrote (a rewrite is a new file, with a new inode and change time; a file copied or unzipped in
gets a change time of this machine, which no one can set back). Unfinished and unreadable folders are looked at
every time (they are few, and they change). A block that is missing, too big, not valid or of another format is
ignored: every folder is read, as on the first refresh. The block only saves work; what the page shows is always
what reading every folder would show.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ltm_harness._store.layout import RunFolder

ROWS_FORMAT = 2  # 2: an agent's protocol marks
MAX_INDEX_BYTES = 64 * 2**20  # a bigger index.html is not read back (its rows are made afresh)
_OPEN = '<script type="application/json" id="ltm-index-rows">'
_CLOSE = "</script>"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentCell(_Strict):
    name: str
    score: float
    max_score: int
    metric: str | None = None  # a benchmark's leading number's name (F1, accuracy), as the index's AgentScore
    marks: list[tuple[str, str]] = []  # its protocol marks, (kind, detail), as the index's AgentScore


class RowRecord(_Strict):
    """A row as the block keeps it (the index's `IndexRow`, less its colour, which is decided per page)."""

    name: str
    link: str
    state: str
    when: float
    kind: str
    agents: list[AgentCell]
    judge: str | None
    note: str


class _Entry(_Strict):
    path: str  # the folder, relative to the results folder
    sig: list[int]
    row: RowRecord


class _Block(_Strict):
    format: int
    rows: list[_Entry]


def signature(folder: RunFolder) -> list[int] | None:
    """What a finished folder's row is made of, as the file system shows it (None: no regular summary.json)."""
    try:
        st = folder.summary.stat()
        if not stat.S_ISREG(st.st_mode):
            return None
        return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, int(folder.report.is_file()),
                int(folder.aiq_report.is_file())]
    except OSError:
        return None


class KnownRows:
    """The rows an earlier index holds (`load`), and those this refresh keeps (`keep`) for the next one."""

    def __init__(self, earlier: dict[str, tuple[list[int], RowRecord]] | None = None) -> None:
        self._earlier = earlier or {}
        self._kept: list[_Entry] = []

    @classmethod
    def load(cls, index: Path) -> "KnownRows":
        try:  # opened without blocking (a FIFO put there), read only if it is a regular file, and at most the cap
            fd = os.open(index, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return cls()
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return cls()
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(MAX_INDEX_BYTES + 1)
        except OSError:
            return cls()
        finally:
            os.close(fd)
        if len(data) > MAX_INDEX_BYTES:
            return cls()
        text = data.decode("utf-8", errors="replace")
        start = text.rfind(_OPEN)
        end = text.find(_CLOSE, start + len(_OPEN)) if start >= 0 else -1
        if end < 0:
            return cls()
        try:
            block = _Block.model_validate(json.loads(text[start + len(_OPEN):end]))
        except (ValueError, RecursionError, ValidationError):
            return cls()
        if block.format != ROWS_FORMAT:
            return cls()
        return cls({e.path: (e.sig, e.row) for e in block.rows})

    def get(self, path: str, sig: list[int]) -> RowRecord | None:
        """The earlier row of the folder at `path` if its files are as they were then (kept for the next index)."""
        earlier = self._earlier.get(path)
        if earlier is None or earlier[0] != sig:
            return None
        self._kept.append(_Entry(path=path, sig=sig, row=earlier[1]))
        return earlier[1]

    def keep(self, path: str, sig: list[int], row: RowRecord) -> None:
        self._kept.append(_Entry(path=path, sig=sig, row=row))

    def block(self) -> str:
        """The JSON block for the page (every `<` escaped, so no text in it can end the block or open a comment)."""
        data = _Block(format=ROWS_FORMAT, rows=sorted(self._kept, key=lambda e: e.path)).model_dump_json()
        return _OPEN + data.replace("<", "\\u003c") + _CLOSE
