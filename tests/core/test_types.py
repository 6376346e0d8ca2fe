"""The harness and the built-in datasets type-check (types everywhere is a project rule)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mypy_is_clean():
    pytest.importorskip("mypy", reason="mypy is part of the test extra: pip install -e '.[test]'")
    done = subprocess.run([sys.executable, "-m", "mypy", "ltm_harness", "datasets"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
