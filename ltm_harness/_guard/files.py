"""Files read from a path a user names (data files, reference prompts, configs, agents' state, run folders): the one
check before any of them is opened.

* `check_regular(path, max_bytes)`: a regular file (a symbolic link to one is fine) of at most `max_bytes`; a FIFO
  would block the reader, a device never ends, a folder cannot be read as a file, so each is refused before it is
  opened, with the real cause in the message ("is a FIFO (named pipe)", "is a symbolic link to a device", "is a
  folder", "does not exist");
* `open_regular(path)`: opened without blocking (`O_NONBLOCK`, so a FIFO put in place after the check cannot hang
  the open), then checked again on the open file (`fstat`), so what is read is what was checked;
* `read_text` / `read_bytes`: a whole file, capped; `hash_file`: a file of any size fed to a hash in chunks, never
  held whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO, Any

from ltm_harness._guard.limits import MAX_FILE_BYTES

CHUNK = 1 << 20


class NotARegularFile(OSError):
    """A path that is a FIFO, a device, a socket or a folder, or a file too large to read whole. `strerror` says
    which, in words ("it is a FIFO (named pipe), not a regular file"), for messages of the form
    `f"{path}: cannot be read ({exc.strerror})"`."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _refuse(path: Path, mode: int, linked: bool) -> NotARegularFile:
    what = f"a symbolic link to {_kind(mode)}" if linked else _kind(mode)
    err = NotARegularFile(f"{path} is {what}, not a regular file; give a regular file")
    err.strerror = f"it is {what}, not a regular file"
    err.filename = str(path)
    return err


def _too_large(path: Path, size: int, max_bytes: int) -> NotARegularFile:
    err = NotARegularFile(f"{path} is {size:,} bytes, more than the {max_bytes:,} read whole")
    err.strerror = f"it is {size:,} bytes, more than the {max_bytes:,} read whole"
    err.filename = str(path)
    return err


def problem(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> str | None:
    """Why `path` cannot be read as a file, in words ("it does not exist", "it is a folder, not a regular file",
    "it is a symbolic link to a character device, not a regular file", ...), or None when it can."""
    try:
        check_regular(path, max_bytes)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return str(exc.strerror or exc)
    return None


def check_regular(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> None:
    """Raise NotARegularFile (an OSError, so readers that handle OSError handle it) unless `path` is a regular file
    (or a symbolic link to one) of at most `max_bytes` (None: any size, for files read in chunks); a missing path
    raises FileNotFoundError as opening it would. Never opens the path."""
    st = os.stat(path)  # follows symlinks, as opening does
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(Path(path), st.st_mode, os.path.islink(path))
    if max_bytes is not None and st.st_size > max_bytes:
        raise _too_large(Path(path), st.st_size, max_bytes)


def open_regular(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> IO[bytes]:
    """`path` opened for reading in binary, after `check_regular`; opened non-blocking and checked again on the open
    file, so that a FIFO or device swapped in between cannot block or be read."""
    check_regular(path, max_bytes)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(Path(path), st.st_mode, os.path.islink(path))
        if max_bytes is not None and st.st_size > max_bytes:
            raise _too_large(Path(path), st.st_size, max_bytes)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes: special and oversized files are refused before opening."""
    with open_regular(path, max_bytes) as fh:
        data = fh.read()  # sized by the file (read(n) would set aside n bytes first)
    if len(data) > max_bytes:  # it grew after the check
        raise _too_large(Path(path), len(data), max_bytes)
    return data


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file's text (UTF-8, line ends read as Python's text mode reads them): special and oversized files
    are refused before opening."""
    text = read_bytes(path, max_bytes).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def hash_file(digest: Any, path: Path) -> None:
    """Feed the bytes of the regular file `path` to `digest` (a hashlib object) in chunks: memory stays at one chunk
    whatever the size of the file."""
    with open_regular(path, None) as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
