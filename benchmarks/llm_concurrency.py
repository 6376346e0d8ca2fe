"""How well runs overlap LLM latency: agents at once, and isolated tests at once.

Against the shipped mock server (in its own process, 50 ms per request), on the v3 32k config:

  (a) one agent (`openai:mock`);
  (b) four agents at once (`openai:mock`, `openai:mock@8000`, `openai:mock@16000`, `openai:mock@24000`),
      each with its own conversation: (b)/(a) should stay near 1 (target <= 1.1);
  (c) isolated mode, every test in its own session, all at once; compared with the longest test run
      alone (target <= 1.2).

Run: `python benchmarks/llm_concurrency.py [--latency-ms 50] [--config benchmark-v3-32k]`.
Datasets that need user-supplied data files (chapterbreak) are left out, and the output says so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._runner.config import RunConfig, load_config  # noqa: E402
from ltm_harness._authoring.catalog import known_datasets  # noqa: E402
from ltm_harness._runner.prepare import prepare  # noqa: E402
from ltm_harness._runner.run import run_all  # noqa: E402

AGENTS_B = ["openai:mock", "openai:mock@8000", "openai:mock@16000", "openai:mock@24000"]


async def start_mock(latency_ms: float) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--port", "0", "--latency-ms", str(latency_ms),
        stdout=asyncio.subprocess.PIPE, cwd=str(ROOT))
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    found = re.search(r"(http://\S+/v1)", line)
    if not found:
        raise SystemExit(f"the mock did not start: {line!r}")
    return proc, found.group(1)


def runnable(cfg: RunConfig) -> tuple[RunConfig, list[str]]:
    registry = known_datasets()
    left_out = [e.name for e in cfg.datasets.datasets if getattr(registry.get(e.name), "requires_user_data", False)]
    cfg = cfg.model_copy(deep=True)
    cfg.datasets.datasets = [e for e in cfg.datasets.datasets if e.name not in left_out]
    return cfg, left_out


async def timed_run(cfg: RunConfig, agents: list[str], root: Path) -> tuple[float, int]:
    prepared = prepare(cfg, root)
    started = time.perf_counter()
    summary = await run_all(prepared, agents)
    if summary.errors:
        raise SystemExit(f"errors: {summary.errors}")
    return time.perf_counter() - started, sum(a.turns for a in summary.agents)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--config", default="benchmark-v3-32k")
    parser.add_argument("--examples", type=int, default=None, help="examples per dataset (default: the config's)")
    args = parser.parse_args()
    proc, url = await start_mock(args.latency_ms)
    os.environ["OPENAI_BASE_URL"] = url
    try:
        cfg, left_out = runnable(load_config(args.config))
        if args.examples:
            cfg.datasets.args.dataset_examples = args.examples
            for e in cfg.datasets.datasets:
                e.args.pop("dataset_examples", None)
        cfg.config.llm.agent_concurrency = 64
        print(f"config {args.config}: {len(cfg.datasets.datasets)} datasets"
              f"{' (left out, need user data: ' + ', '.join(left_out) + ')' if left_out else ''}; "
              f"mock latency {args.latency_ms:g} ms per request")
        with tempfile.TemporaryDirectory() as tmp:
            a, turns_a = await timed_run(cfg, ["openai:mock"], Path(tmp) / "a")
            print(f"(a) one agent:        {a:7.2f} s  ({turns_a} calls, {a / turns_a * 1000:.1f} ms per call)")
            b, turns_b = await timed_run(cfg, AGENTS_B, Path(tmp) / "b")
            print(f"(b) four agents:      {b:7.2f} s  ({turns_b} calls)   (b)/(a) = {b / a:.3f}  (target <= 1.1)")
            iso = cfg.model_copy(deep=True)
            iso.config.isolated = True
            prepared = prepare(iso, Path(tmp) / "c")
            n_tests = sum(len(v) for v in prepared.examples.values())
            iso.config.isolated_concurrency = n_tests
            c, turns_c = await timed_run(iso, ["openai:mock"], Path(tmp) / "c")
            longest, longest_name = 0.0, ""
            for name, examples in prepared.examples.items():
                for ex in examples:
                    one = iso.model_copy(deep=True)
                    one.config.isolated_concurrency = 1
                    one.datasets.datasets = [e for e in one.datasets.datasets if e.name == name]
                    one.datasets.args.dataset_examples = int(ex.example_id) + 1
                    for e in one.datasets.datasets:
                        e.args.pop("dataset_examples", None)
                    solo = prepare(one, Path(tmp) / f"solo-{name}-{ex.example_id}")
                    solo.examples = {name: [x for x in solo.examples[name] if x.example_id == ex.example_id]}
                    started = time.perf_counter()
                    await run_all(solo, ["openai:mock"])
                    t = time.perf_counter() - started
                    if t > longest:
                        longest, longest_name = t, ex.unique_id
            print(f"(c) isolated, all {n_tests} tests at once: {c:6.2f} s ({turns_c} calls); longest test alone: "
                  f"{longest:.2f} s ({longest_name});  (c)/longest = {c / longest:.3f}  (target <= 1.2)")
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    asyncio.run(main())
