"""A run in a process of its own freezes what its start-up made and collects young objects less often; a test (or a
library user) calling the command line in its own process keeps the collector as it was."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from ltm_harness._cli import heap
from ltm_harness._cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import gc, json, sys
import ltm_harness._cli.heap as heap
seen = {}
real = heap.settle
def settle():
    real()
    seen.update(frozen=gc.get_freeze_count(), threshold=gc.get_threshold())
heap.settle = settle
from ltm_harness._cli.main import main
sys.argv = ["ltm_harness", *sys.argv[1:]]
code = main()
print(json.dumps({"code": code, **seen}))
"""


def test_a_run_in_its_own_process_settles_the_collector(tmp_path: Path):
    done = subprocess.run([sys.executable, "-c", PROBE, "run", "--results", str(tmp_path), "--examples", "1", "--span",
                           "1000", "-a", "null", "--quiet", "--no-report"], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LTM_HARNESS_CACHE": str(tmp_path / "c")})
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["code"] == 0 and said["frozen"] > 10_000 and said["threshold"][0] == heap.YOUNG


def test_the_command_line_called_with_arguments_leaves_the_collector_as_it_was(tmp_path: Path):
    before = gc.get_threshold(), gc.get_freeze_count()
    assert main(["run", "--results", str(tmp_path), "--examples", "1", "--span", "1000", "-a", "null", "--quiet",
                 "--no-report"]) == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
