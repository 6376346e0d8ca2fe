"""What resuming costs: a long run interrupted at a share of its event log, then resumed.

Runs a config with the retrieval baseline (an agent whose memory grows with the conversation, so rebuilding it
is real work), then, for each cut, copies the run, cuts its event log there (a torn last line, as a kill leaves
it), and times `run_all(..., mode=Resume())`. Printed per cut: the turns replayed from the log, the turns asked
live, the resume's wall time, the time an uninterrupted run spends on those live turns, and so the overhead of
resuming (replay + memory rebuild). Also: the check that the resumed outputs equal the uninterrupted run's.

    python benchmarks/resume.py [--span 500000] [--cuts 0.25 0.5 0.9 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from ltm_harness._store.events import TurnEvent, parse_event
from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config

DATASETS = ["colours", "jokes", "prospective_memory", "kv", "shopping", "names", "sallyanne", "trigger_response",
            "locations", "spy_meeting"]


def turns(data: bytes) -> int:
    return sum(isinstance(parse_event(line), TurnEvent) for line in data.splitlines() if line.strip())


async def main(span: int, cuts: list[float]) -> None:
    cfg = make_config(DATASETS, span=span, examples=2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        await run_all(prepare(cfg, root / "ref"), ["retrieval"])
        full = time.perf_counter() - started
        ref = root / "ref" / "t"
        log = (ref / "retrieval" / "events.jsonl").read_bytes()
        lines = log.splitlines(keepends=True)
        total = turns(log)
        print(f"span {span:,}: {len(DATASETS) * 2} tests, {total} turns, {len(lines)} events, "
              f"{len(log) / 1e6:.1f} MB log; uninterrupted run {full:.2f} s (definitions included)")
        for share in cuts:
            k = int(len(lines) * share)
            work = root / f"cut{k}"
            shutil.copytree(ref, work / "t")
            torn = lines[k][: len(lines[k]) // 2] if k < len(lines) else b""
            (work / "t" / "retrieval" / "events.jsonl").write_bytes(b"".join(lines[:k]) + torn)
            for name in ("results.json", "summary.json"):
                (work / "t" / "retrieval" / name).unlink()
            kept = turns(b"".join(lines[:k]))
            started = time.perf_counter()
            await run_all(prepare(cfg, work, resume=True), ["retrieval"], mode=Resume())
            took = time.perf_counter() - started
            same = all((work / "t" / "retrieval" / f).read_bytes() == (ref / "retrieval" / f).read_bytes()
                       for f in ("events.jsonl", "results.json"))
            print(f"  cut at {share:>4.0%} of the log: {kept:>4} turns replayed, {total - kept:>4} live; "
                  f"resume {took:.2f} s; outputs identical: {same}")
            shutil.rmtree(work)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--span", type=int, default=500_000)
    parser.add_argument("--cuts", type=float, nargs="+", default=[0.25, 0.5, 0.9, 1.0])
    args = parser.parse_args()
    asyncio.run(main(args.span, args.cuts))
