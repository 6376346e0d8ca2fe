"""A results folder that cannot be written (a full disk, a read-only folder) ends a run with one error line, leaves
no half-written file, and the run resumes (once the cause is gone) to exactly the outputs of a run that never
failed."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ltm_harness._store.eventlog as eventlog
import ltm_harness._store.files as files
from ltm_harness._cli.main import main as cli

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
config: {run_name: w}
datasets:
  args: {memory_span: 1500, dataset_examples: 1}
  datasets: [{name: colours}, {name: kv}, {name: prospective_memory}]
"""
AGENTS = ["-a", "retrieval", "-a", "oracle"]


def command(config: Path, results: Path, *extra: str) -> list[str]:
    return ["run", "-c", str(config), *AGENTS, "--results", str(results), "--quiet", "--no-report", *extra]


def outputs(run: Path) -> dict[str, bytes]:
    """Event logs and results, and every other file but the wall-clock ones (side files, summaries' wall time)."""
    out = {}
    for path in sorted(run.rglob("*")):
        if path.is_file() and not path.name.startswith(".") and path.suffix != ".wall" and path.name != "summary.json":
            out[str(path.relative_to(run))] = path.read_bytes()
    return out


@pytest.fixture
def setup(tmp_path: Path, capsys) -> tuple[Path, dict[str, bytes]]:
    config = tmp_path / "w.yml"
    config.write_text(CONFIG)
    assert cli(command(config, tmp_path / "ref")) == 0
    capsys.readouterr()
    return config, outputs(tmp_path / "ref" / "w")


def one_error_line(err: str, *parts: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot write "), err
    assert all(p in lines[0] for p in parts), lines[0]
    assert "Traceback" not in err
    return lines[0]


def no_torn_lines(run: Path) -> None:
    for log in run.rglob("*.jsonl"):
        data = log.read_bytes()
        assert not data or data.endswith(b"\n"), log  # whole lines only
    assert not list(run.rglob(".*.tmp"))  # no temporary file left behind


def test_a_full_disk_while_logging_is_one_line_and_the_run_resumes_identically(tmp_path, setup, monkeypatch, capsys):
    config, expected = setup
    real = os.pwrite
    calls = {"n": 0}

    def pwrite(fd: int, data, offset: int) -> int:  # the 60th write gets half its bytes out, then the disk is full
        calls["n"] += 1
        if calls["n"] == 60:
            return real(fd, bytes(data)[: len(data) // 2], offset)
        if calls["n"] > 60:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)

    monkeypatch.setattr(eventlog.os, "pwrite", pwrite)
    assert cli(command(config, tmp_path / "out")) == 2
    one_error_line(capsys.readouterr().err, "events.jsonl: No space left on device", "free some disk space",
                   "--resume")
    run = tmp_path / "out" / "w"
    no_torn_lines(run)
    assert not (run / "summary.json").exists()
    monkeypatch.setattr(eventlog.os, "pwrite", real)
    assert cli(command(config, tmp_path / "out", "--resume")) == 0
    assert outputs(run) == expected


def test_a_full_disk_while_writing_results_keeps_the_old_file_whole(tmp_path, setup, monkeypatch, capsys):
    config, expected = setup
    real = os.replace

    def replace(src, dst) -> None:
        if Path(dst).name == "results.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    assert cli(command(config, tmp_path / "out")) == 2
    one_error_line(capsys.readouterr().err, "results.json: No space left on device")
    run = tmp_path / "out" / "w"
    no_torn_lines(run)
    assert not list(run.rglob("results.json"))
    monkeypatch.setattr(files.os, "replace", real)
    assert cli(command(config, tmp_path / "out", "--resume")) == 0
    assert outputs(run) == expected


def test_a_read_only_file_system_is_one_line(tmp_path, setup, monkeypatch, capsys):
    config, expected = setup
    assert cli(command(config, tmp_path / "out")) == 0  # a finished run, then the disk turns read-only
    real = os.open

    def read_only(path, flags, *args, **kwargs):  # (os is one module: every open in the process comes here)
        if flags & (os.O_WRONLY | os.O_RDWR) and "events" in str(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(eventlog.os, "open", read_only)
    capsys.readouterr()
    assert cli(command(config, tmp_path / "out", "--overwrite")) == 2
    one_error_line(capsys.readouterr().err, "Read-only file system", "writable")


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="POSIX permissions; root writes anyway")
def test_a_read_only_folder_is_one_line_and_resumable(tmp_path, setup, capsys):
    config, expected = setup
    assert cli(command(config, tmp_path / "out")) == 0
    agent = tmp_path / "out" / "w" / "retrieval"
    (agent / "summary.json").unlink()  # interrupted
    agent.chmod(0o555)
    try:
        assert cli(command(config, tmp_path / "out", "--resume")) == 2
        one_error_line(capsys.readouterr().err, "writable")
    finally:
        agent.chmod(0o755)
    assert cli(command(config, tmp_path / "out", "--resume")) == 0
    assert outputs(tmp_path / "out" / "w") == expected


def test_a_full_disk_in_another_process_is_one_line_and_resumable(tmp_path, setup):
    config, expected = setup
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = textwrap.dedent(f"""
        import errno, os, sys
        import ltm_harness._store.eventlog as eventlog
        from ltm_harness._cli.main import main
        real, n = os.pwrite, [0]
        def pwrite(fd, data, offset):
            n[0] += 1
            if n[0] > 45:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd, data, offset)
        eventlog.os.pwrite = pwrite
        sys.exit(main({command(config, tmp_path / "out")!r}))
    """)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    one_error_line(done.stderr, "No space left on device")
    no_torn_lines(tmp_path / "out" / "w")
    again = subprocess.run([sys.executable, "-m", "ltm_harness", *command(config, tmp_path / "out", "--resume")],
                           env=env, capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert outputs(tmp_path / "out" / "w") == expected
