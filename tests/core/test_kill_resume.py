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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


@dataclass(frozen=True)
class Mode:
    """A command that writes event logs turn by turn and resumes with --resume."""

    name: str
    args: Callable[[Path, Path], list[str]]  # (config file, results folder) -> the command's arguments
    folder: Callable[[Path], Path]  # results folder -> the folder whose outputs are compared
    logs: str  # the event logs under that folder (a glob)


MODES = [
    Mode("run", lambda cfg, out: ["run", "-c", str(cfg), *AGENTS, "--results", str(out), "--quiet", "--no-report"],
         lambda out: out / "kill", "*/events.jsonl"),
    Mode("suite", lambda cfg, out: ["suite", "text-envs", *AGENTS, "--results", str(out), "--quiet"],
         lambda out: out / "suites" / "text-envs", "*/events/*.jsonl"),
    Mode("syllabus", lambda cfg, out: ["syllabus", "run", "ant-a-bandit-guess", *AGENTS, "--out", str(out)],
         lambda out: out, "*/*/events.jsonl"),
    Mode("aiq", lambda cfg, out: ["aiq", "--quiet", "--trials", "2", *AGENTS, "--results", str(out)],
         lambda out: out / "aiq", "*/events/*.jsonl"),
]


def command(mode: Mode, config: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ltm_harness", *mode.args(config, results), *extra]


def state(mode: Mode, folder: Path) -> str:
    """What the kill left: the event lines of each agent's logs."""
    lines: dict[str, int] = {}
    for log in folder.glob(mode.logs):
        agent = log.relative_to(folder).parts[0]
        lines[agent] = lines.get(agent, 0) + log.read_bytes().count(b"\n")
    return ", ".join(f"{agent}:{n} lines" for agent, n in sorted(lines.items())) or "nothing yet"


def outputs(folder: Path) -> dict[str, bytes]:
    """Every output file that must not depend on interruptions (wall-clock times taken out of summaries, and the
    folder's own path out of the files that name it)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        rel = str(path.relative_to(folder))
        data = path.read_bytes().replace(str(folder).encode(), b"OUT")
        if path.name == "summary.json":
            summary = json.loads(data)
            for s in [summary, *summary.get("agents", [])]:
                s.pop("wall_seconds", None)
            data = json.dumps(summary, sort_keys=True).encode()
        out[rel] = data
    return out


def progress(mode: Mode, folder: Path) -> int:
    """Event lines written so far by all agents (resuming only appends, so this only grows)."""
    return sum(p.read_bytes().count(b"\n") for p in folder.glob(mode.logs))


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(tmp_path: Path, mode: Mode):
    config = tmp_path / "kill.yml"
    config.write_text(CONFIG)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command(mode, config, tmp_path / "ref"), cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    total = progress(mode, mode.folder(tmp_path / "ref"))

    # Kill points: once during start-up (a random moment before the first event), then at random points of the
    # run's progress (event lines written), each hit within a few lines.
    rng = random.Random(f"{SEED}:{mode.name}")
    targets: list[int | None] = [None, *sorted(rng.sample(range(10, total - 10), 4))]
    work = tmp_path / "work"
    seen = []
    for k, target in enumerate(targets):
        proc = subprocess.Popen(command(mode, config, work, "--resume"), cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if target is None:
            time.sleep(rng.uniform(0.05, 0.6))
        else:
            while progress(mode, mode.folder(work)) < target and proc.poll() is None:
                time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        seen.append(f"kill {k + 1} at {'start-up' if target is None else f'{target} lines'} "
                    f"(exit {proc.returncode}): {state(mode, mode.folder(work))}")
        assert proc.returncode == -signal.SIGKILL, "\n".join(seen) + "\n" + err.decode()
    last = subprocess.run(command(mode, config, work, "--resume"), cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    report = f"{mode.name}: LTM_KILL_SEED={SEED}, {total} event lines in all\n" + "\n".join(seen)
    print(report)
    assert last.returncode == 0, report + "\n" + last.stderr
    expected, got = outputs(mode.folder(tmp_path / "ref")), outputs(mode.folder(work))
    assert sorted(got) == sorted(expected), report
    for rel in expected:
        assert got[rel] == expected[rel], f"{rel} differs\n{report}"
