"""The run process is killed with SIGKILL at seeded random moments and resumed each time; the final outputs
equal those of a run that was never interrupted, byte for byte (the event logs included).

The seed is LTM_KILL_SEED (default below); a failure prints it, so the same kill points can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SEED = int(os.environ.get("LTM_KILL_SEED", "7031"))
CONFIG = """
config:
  run_name: kill
datasets:
  args: {memory_span: 150000, dataset_examples: 2}
  datasets:
    - {name: colours}
    - {name: jokes}
    - {name: prospective_memory}
    - {name: kv}
    - {name: shopping}
    - {name: names}
    - {name: sallyanne}
    - {name: trigger_response}
"""
AGENTS = ["-a", "retrieval", "-a", "recent:4000", "-a", "oracle"]
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


def command(config: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ltm_harness", "run", "-c", str(config), *AGENTS, "--results", str(results),
            "--quiet", "--no-report", *extra]


def state(run_dir: Path) -> str:
    """What the kill left: per agent, finished / lines in its event log / absent."""
    parts = []
    for agent in ("retrieval", "recent_4000", "oracle"):
        folder = run_dir / agent
        if (folder / "summary.json").is_file():
            parts.append(f"{agent}:done")
        elif (folder / "events.jsonl").is_file():
            parts.append(f"{agent}:{len((folder / 'events.jsonl').read_bytes().splitlines())} lines")
        else:
            parts.append(f"{agent}:-")
    return ", ".join(parts)


def outputs(run_dir: Path) -> dict[str, bytes]:
    """Every output file that must not depend on interruptions (wall-clock times taken out of summaries)."""
    out = {}
    for path in sorted(run_dir.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        rel = str(path.relative_to(run_dir))
        data = path.read_bytes()
        if path.name == "summary.json":
            summary = json.loads(data)
            for s in [summary, *summary.get("agents", [])]:
                s.pop("wall_seconds", None)
            data = json.dumps(summary, sort_keys=True).encode()
        out[rel] = data
    return out


def progress(run_dir: Path) -> int:
    """Event lines written so far by all agents (resuming only appends, so this only grows)."""
    return sum(p.read_bytes().count(b"\n") for p in run_dir.glob("*/events.jsonl"))


def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(tmp_path):
    config = tmp_path / "kill.yml"
    config.write_text(CONFIG)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command(config, tmp_path / "ref"), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    total = progress(tmp_path / "ref" / "kill")

    # Kill points: once during start-up (a random moment before the first event), then at random points of the
    # run's progress (event lines written), each hit within a few lines.
    rng = random.Random(SEED)
    targets: list[int | None] = [None, *sorted(rng.sample(range(10, total - 10), 4))]
    work = tmp_path / "work"
    seen = []
    for k, target in enumerate(targets):
        proc = subprocess.Popen(command(config, work, "--resume"), cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if target is None:
            time.sleep(rng.uniform(0.05, 0.6))
        else:
            while progress(work / "kill") < target and proc.poll() is None:
                time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        seen.append(f"kill {k + 1} at {'start-up' if target is None else f'{target} lines'} "
                    f"(exit {proc.returncode}): {state(work / 'kill')}")
        assert proc.returncode == -signal.SIGKILL, "\n".join(seen) + "\n" + err.decode()
    last = subprocess.run(command(config, work, "--resume"), cwd=tmp_path, env=env, capture_output=True, text=True)
    report = f"LTM_KILL_SEED={SEED}, {total} event lines in all\n" + "\n".join(seen)
    print(report)
    assert last.returncode == 0, report + "\n" + last.stderr
    expected, got = outputs(tmp_path / "ref" / "kill"), outputs(work / "kill")
    assert sorted(got) == sorted(expected), report
    for rel in expected:
        assert got[rel] == expected[rel], f"{rel} differs\n{report}"
