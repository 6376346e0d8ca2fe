"""Files read from outside: a special file (FIFO, device, socket) would block or never end, so it is refused before
it is opened; a file larger than `MAX_FILE_BYTES` is refused before it is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ltm_harness._guard.limits import MAX_FILE_BYTES


class NotARegularFile(OSError):
    """A path that is a FIFO, a device or a socket, or a file too large to read whole."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def check_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> None:
    """Raise NotARegularFile (an OSError, so readers that handle OSError handle it) unless `path` is a regular file
    of at most `max_bytes`; a missing path raises FileNotFoundError as opening it would."""
    st = os.stat(path)  # follows symlinks, as opening does; never opens
    if not stat.S_ISREG(st.st_mode):
        err = NotARegularFile(f"{path} is {_kind(st.st_mode)}, not a file; give a regular file")
        err.strerror = f"it is {_kind(st.st_mode)}, not a regular file"
        raise err
    if st.st_size > max_bytes:
        err = NotARegularFile(f"{path} is larger than {max_bytes:,} bytes")
        err.strerror = f"it is {st.st_size:,} bytes, more than the {max_bytes:,} read whole"
        raise err


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file's text (UTF-8): special and oversized files are refused before opening."""
    check_regular(path, max_bytes)
    return path.read_text(encoding="utf-8")


def read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    check_regular(path, max_bytes)
    return path.read_bytes()
