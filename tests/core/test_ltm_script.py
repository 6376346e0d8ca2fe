"""The README's set-up script, `./ltm`, as a newcomer runs it (when its .venv is set up, as under `./ltm test`)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _venv_ready() -> bool:
    stamp = ROOT / ".venv" / ".installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return stamp.is_file() and stamp.read_text().strip().startswith(want)


def test_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(ROOT / "ltm")]).returncode == 0


@pytest.mark.skipif(not _venv_ready(), reason="./ltm has not set up .venv here (run the suite with ./ltm test)")
@pytest.mark.parametrize("args, expect", [(["list"], "datasets"), (["run", "--help"], "--span"), (["run"], "benchmark score")])
def test_script_runs_commands_without_reinstalling(tmp_path, args, expect):
    extra = ["--results", str(tmp_path)] if args == ["run"] else []
    done = subprocess.run(["bash", str(ROOT / "ltm"), *args, *extra], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert expect in done.stdout
    assert "installing" not in done.stderr
