"""Several processes started at once on one run folder: one writes it, each other one refuses in one line naming
the holder's pid (or, started after it finished, keeps its results), and the folder ends exactly as one run alone
leaves it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
config: {run_name: busy}
datasets:
  args: {memory_span: 4000, dataset_examples: 2}
  datasets: [{name: colours}, {name: kv}, {name: jokes}, {name: shopping}]
"""
PROCESSES = 6


def outputs(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*"))
            if p.is_file() and not p.name.startswith(".") and p.name != "summary.json"}


@pytest.mark.slow
def test_processes_started_at_once_on_one_folder_leave_it_as_one_run_would(tmp_path: Path):
    config = tmp_path / "busy.yml"
    config.write_text(CONFIG)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def command(results: Path) -> list[str]:
        return [sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", "retrieval", "-a", "oracle",
                "--results", str(results), "--quiet", "--no-report", "--resume"]

    alone = subprocess.run(command(tmp_path / "ref"), env=env, capture_output=True, text=True, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    procs = [subprocess.Popen(command(tmp_path / "out"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path) for _ in range(PROCESSES)]
    ended = [(p.wait(), p.communicate()[1]) for p in procs]
    refused = 0
    for code, err in ended:
        assert "Traceback" not in err, err
        if code != 0:
            lines = [line for line in err.splitlines() if line.strip()]
            assert code == 2 and len(lines) == 1 and "is in use by" in lines[0], err
            refused += 1
    print(f"{refused} of {PROCESSES} processes refused")
    assert refused < PROCESSES  # someone ran it
    assert outputs(tmp_path / "out" / "busy") == outputs(tmp_path / "ref" / "busy")
