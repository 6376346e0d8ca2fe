"""A lock per run folder, so that two processes never write one folder.

The lock is an operating-system lock (`flock` on POSIX, `msvcrt.locking` on Windows) on the folder's `.lock` file,
which holds the holder's process id. The OS lets go of it when the holder ends, however it ends, so a lock left by
a killed process is simply taken over by the next one (which says so). A second process while the first still
runs is refused in one line naming the holder's pid.

Why not the `filelock` package: it truncates the lock file on every attempt to acquire it, so the file cannot
carry the holder's pid for the refusal to name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import TracebackType

from ltm_harness._errors import RunFolderError

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", errors="replace").strip()
    return int(text) if text.isdigit() else None


class RunLock:
    """`with RunLock(folder / ".lock", folder):` holds the folder for this process; `took_over` is the pid of a
    killed process whose lock was taken over (None if there was none)."""

    def __init__(self, path: Path, folder: Path) -> None:
        self.path = path
        self.folder = folder
        self.took_over: int | None = None
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunFolderError(f"cannot write results under {self.folder.parent}: {exc.strerror or exc} "
                                 f"({self.folder}); give another results folder") from None
        try:
            locked = _try_lock(fd)
            if not locked:
                holder = _holder(fd)
                who = f"process {holder}" if holder is not None else "another process"
                if holder == os.getpid():
                    who = "this process (another run in it)"
                raise RunFolderError(f"{self.folder} is in use by {who}; wait for it to finish (or stop it), or "
                                     "write this run to another folder (another run name or results folder)")
            previous = _holder(fd)
            if previous is not None and previous != os.getpid():
                self.took_over = previous  # it held the lock and ended without letting go: killed
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError as exc:  # e.g. a network file system without locks, or a full disk
            os.close(fd)
            raise RunFolderError(f"cannot lock {self.path}: {exc.strerror or exc}; give a results folder on a file "
                                 "system that supports file locks (a local disk)") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # no holder: the next process takes it without a word
            _unlock(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
