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
