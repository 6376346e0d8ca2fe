"""The run process is killed with SIGKILL at seeded random moments and resumed each time; the final outputs
equal those of a run that was never interrupted, byte for byte (the event logs included). This holds for `run`,
`suite`, `syllabus run` and `aiq` resumed with --resume, and for `run --retry-errored` taking up a finished run
whose agent failed some of its turns (killed while it redoes them, then retried again).

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
# An agent that fails the colour questions while LTM_FLAKY is set (each turn tried once): its run finishes with
# errored tests, which `run --retry-errored` does again once the agent works.
FLAKY = """
import os
from ltm_harness._agents.baselines import RetrievalAgent

class Flaky(RetrievalAgent):
    async def reply(self, message, oracle_hint=None):
        if os.environ.get("LTM_FLAKY") and "colour" in message.text and "?" in message.text:
            raise ConnectionError("the agent's backend went away")
        return await super().reply(message, oracle_hint)
"""
FLAKY_AGENTS = ["-a", "flaky=flaky.py:Flaky", "-a", "oracle"]
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


@dataclass(frozen=True)
class Mode:
    """A command that writes event logs turn by turn and resumes with --resume."""

    name: str
    args: Callable[[Path, Path], list[str]]  # (config file, results folder) -> the command's arguments
    folder: Callable[[Path], Path]  # results folder -> the folder whose outputs are compared
    logs: str  # the event logs under that folder (a glob)
    again: str = "--resume"  # how a killed command is taken up again
    failing_first: bool = False  # first a run whose agent fails some turns (exit 3), then `again` until it is done


MODES = [
    Mode("run", lambda cfg, out: ["run", "-c", str(cfg), *AGENTS, "--results", str(out), "--quiet", "--no-report"],
         lambda out: out / "kill", "*/events.jsonl"),
    Mode("suite", lambda cfg, out: ["suite", "text-envs", *AGENTS, "--results", str(out), "--quiet"],
         lambda out: out / "suites" / "text-envs", "*/events/*.jsonl"),
    Mode("syllabus", lambda cfg, out: ["syllabus", "run", "ant-a-bandit-guess", *AGENTS, "--out", str(out)],
         lambda out: out, "*/*/events.jsonl"),
    Mode("aiq", lambda cfg, out: ["aiq", "--quiet", "--trials", "2", *AGENTS, "--results", str(out)],
         lambda out: out / "aiq", "*/events/*.jsonl"),
    Mode("retry-errored", lambda cfg, out: ["run", "-c", str(cfg), *FLAKY_AGENTS, "--results", str(out), "--quiet",
                                            "--no-report"],
         lambda out: out / "kill", "*/events.jsonl", again="--retry-errored", failing_first=True),
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
        if path.suffix == ".wall":  # the wall-clock side file of an event log
            continue
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


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(tmp_path: Path, mode: Mode):
    config = tmp_path / "kill.yml"
    text = CONFIG.replace("run_name: kill", "run_name: kill\n  turns: {attempts: 1, backoff: 0}")
    config.write_text(text if mode.failing_first else CONFIG)
    (tmp_path / "flaky.py").write_text(FLAKY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LTM_FLAKY", None)
    started = time.perf_counter()
    done = subprocess.run(command(mode, config, tmp_path / "ref"), cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    took = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    total = progress(mode, mode.folder(tmp_path / "ref"))
    rng = random.Random(f"{SEED}:{mode.name}")
    work = tmp_path / "work"

    if mode.failing_first:
        # The agent fails its colour questions: the run finishes with them errored (exit 3). Each --retry-errored
        # first cuts the logs back to their first failure, so kill points are moments, drawn over a whole run.
        failing = subprocess.run(command(mode, config, work), cwd=tmp_path, env={**env, "LTM_FLAKY": "1"},
                                 capture_output=True, text=True)
        assert failing.returncode == 3, failing.stderr
        targets: list[int | None] = [None] * 5
        moments = [rng.uniform(took * k / 5, took * (k + 1) / 5) for k in range(5)]  # one in each fifth of a run
    else:
        # Kill points: once during start-up (a random moment before the first event), then at random points of the
        # run's progress (event lines written), each hit within a few lines.
        targets = [None, *sorted(rng.sample(range(10, total - 10), 4))]
        moments = [rng.uniform(0.05, 0.6)] + [0.0] * 4
    seen = []
    for k, (target, moment) in enumerate(zip(targets, moments)):
        proc = subprocess.Popen(command(mode, config, work, mode.again), cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if target is None:
            time.sleep(moment)
        else:
            while progress(mode, mode.folder(work)) < target and proc.poll() is None:
                time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        at = f"{moment:.2f} s" if target is None else f"{target} lines"
        seen.append(f"kill {k + 1} at {at} (exit {proc.returncode}): {state(mode, mode.folder(work))}")
        if mode.failing_first and proc.returncode == 0:  # done before the moment came: nothing left to kill
            break
        assert proc.returncode == -signal.SIGKILL, "\n".join(seen) + "\n" + err.decode()
    last = subprocess.run(command(mode, config, work, mode.again), cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    report = f"{mode.name}: LTM_KILL_SEED={SEED}, {total} event lines in all\n" + "\n".join(seen)
    print(report)
    assert last.returncode == 0, report + "\n" + last.stderr
    expected, got = outputs(mode.folder(tmp_path / "ref")), outputs(mode.folder(work))
    assert sorted(got) == sorted(expected), report
    for rel in expected:
        assert got[rel] == expected[rel], f"{rel} differs\n{report}"
