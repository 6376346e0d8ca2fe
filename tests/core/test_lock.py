"""One process per run folder: a second one is refused naming the holder, a killed holder's lock is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._errors import RunFolderError
from ltm_harness._store.layout import RunFolder

HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ltm_harness._store.layout import RunFolder
    lock = RunFolder(Path(sys.argv[1])).lock().acquire()
    print("held", flush=True)
    time.sleep(120)
""")


def hold(folder: Path) -> subprocess.Popen[str]:
    """Another process that takes the folder's lock and keeps it."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_process_is_refused_in_one_line_naming_the_holder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    holder = hold(tmp_path / "default")
    try:
        assert main(["run", "--quiet", "--no-report", "-a", "null", "--results", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"is in use by process {holder.pid}" in err and str(tmp_path / "default") in err
        assert not (tmp_path / "default" / "null").exists()  # nothing was written
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    holder = hold(tmp_path / "default")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / "default" / ".lock").read_text().strip() == str(holder.pid)  # left behind
    assert main(["run", "--quiet", "--no-report", "-a", "null", "--results", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"a lock left by process {holder.pid} (no longer running) was taken over" in err
    assert (tmp_path / "default" / "null" / "results.json").is_file()
    assert (tmp_path / "default" / ".lock").read_text() == ""  # let go at the end: nobody holds it


def test_one_process_cannot_take_a_folder_twice_and_lets_go_when_done(tmp_path: Path):
    folder = RunFolder(tmp_path / "run")
    with folder.lock():
        with pytest.raises(RunFolderError, match="in use by this process"):
            folder.lock().acquire()
    with folder.lock() as again:  # released: free again, and nobody's lock was taken over
        assert again.took_over is None


def test_rescore_takes_the_lock_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--quiet", "--no-report", "-a", "null", "--results", str(tmp_path)]) == 0
    holder = hold(tmp_path / "default")
    try:
        assert main(["rescore", str(tmp_path / "default")]) == 2
        assert f"in use by process {holder.pid}" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="flock is the POSIX lock")
def test_a_file_system_without_locks_is_one_line_and_leaks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import errno
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    opened_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    monkeypatch.setattr(fcntl, "flock", no_locks)
    folder = RunFolder(tmp_path / "run")
    with pytest.raises(RunFolderError, match=r"cannot lock .*\.lock: No locks available; give a results folder on a "
                                             r"file system that supports file locks"):
        folder.lock().acquire()
    if opened_before is not None:
        assert len(os.listdir("/proc/self/fd")) == opened_before  # the lock file was closed


def test_an_interrupted_run_whose_process_was_killed_says_so_when_refused(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]):
    args = ["run", "--quiet", "--no-report", "-a", "null", "--results", str(tmp_path), "--examples", "1"]
    assert main(args) == 0
    (tmp_path / "default" / "null" / "summary.json").unlink()  # as if killed before the end
    holder = hold(tmp_path / "default")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"holds an interrupted run (null did not finish; its process {holder.pid} ended while it ran)" in err
    assert main([*args, "--resume"]) == 0
