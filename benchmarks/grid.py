"""A study of 24 cells (4 agents x 3 spans x 2 seeds) against the shipped mock LLM with 50 ms latency per request,
run by the local executor and by Ray on this machine; each way in a fresh driver process.

Modes (each a `run_study` in its own process, into its own folder):
  serial      the local executor, one cell at a time: the cells one after another (the baseline)
  local       the local executor, --concurrency cells at a time on one event loop
  ray-serial  Ray, one cell at a time: per cell, what Ray adds (task scheduling, a worker process, its imports)
  ray         Ray, with the study's default resources (1 CPU per cell: as many at once as Ray has CPUs)
  ray-packed  Ray, --ray-cpus-per-cell CPUs per cell, so --concurrency cells at a time, as `local`

Printed per mode: the driver's wall time (Ray's start separately), the cells' own time (each cell's `run_cell`,
summed), the driver's peak memory (its own maximum resident set; Ray's own processes are not in it), the speed-up
over `serial`. Ray's overhead per cell, with one cell at a time: (wall - cells' own time) / cells on Ray, less the
same locally (what Ray adds around a cell: scheduling, the worker process and its imports, the result's way back);
it is measured this way because the wall times alone move by more than that on a loaded machine. Every mode's cells are checked to hold the same results and event logs (less the
measured latency of each LLM call, which the event log records). GRID_BENCH_DIR keeps the folders there.

Run: `python benchmarks/grid.py [--latency-ms 50] [--concurrency 8] [--ray-cpus 2] [--modes serial,local,...]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENTS = ["plain=openai:mock", "retrieval=openai:mock-retrieval", "echo=openai:mock-echo", "fixed=openai:mock-fixed"]
SPANS = [1000, 2000, 4000]
SEEDS = [0, 1]
MODES = ["serial", "local", "ray-serial", "ray", "ray-packed"]


def write_study(folder: Path, url: str) -> Path:
    (folder / "base.yml").write_text(json.dumps({
        "config": {"run_name": "bench", "openai": {"base_url": url, "api_key": "mock"},
                   "llm": {"cache": False}},
        "datasets": {"args": {"memory_span": 1000, "dataset_examples": 1},
                     "datasets": [{"name": "colours"}, {"name": "names"}, {"name": "kv"}]},
    }))
    study = folder / "study.yml"
    study.write_text(json.dumps({"name": "bench", "base": "base.yml", "agents": AGENTS, "spans": SPANS,
                                 "seeds": SEEDS}))
    return study


def child(args: argparse.Namespace) -> None:
    """One mode in this process: prints a JSON line of its numbers."""
    from ltm_harness._grid.driver import run_study
    from ltm_harness._grid.study import load_study

    study = load_study(args.study)
    mode = args.child
    study.spec.concurrency = 1 if mode.endswith("serial") else args.concurrency
    if mode == "ray-packed":
        study.spec.num_cpus = args.ray_cpus / args.concurrency
    ray_start = 0.0
    if mode.startswith("ray"):
        import logging

        import ray

        started = time.perf_counter()
        ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        ray_start = time.perf_counter() - started
    started = time.perf_counter()
    run = run_study(study, Path(args.results), "ray" if mode.startswith("ray") else "local")
    wall = time.perf_counter() - started
    states = [e.state for e in run.index.cells]
    cell_walls = [e.wall_seconds or 0.0 for e in run.index.cells]
    print(json.dumps({"mode": mode, "wall": wall, "ray_start": ray_start, "cells": len(states),
                      "finished": states.count("finished"), "cell_seconds": sum(cell_walls),
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def outputs(cells: Path) -> dict[str, bytes]:
    """Every cell's results and event logs, less the measured latency of LLM calls (wall-clock, in `llm_call`)."""
    out = {}
    for path in sorted(cells.rglob("*")):
        if path.is_file() and path.name == "results.json":
            out[str(path.relative_to(cells))] = path.read_bytes()
        elif path.is_file() and path.name == "events.jsonl":
            events = [json.loads(line) for line in path.read_text().splitlines()]
            for event in events:
                event.pop("latency_ms", None)
            out[str(path.relative_to(cells))] = json.dumps(events, sort_keys=True).encode()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency-ms", type=float, default=50.0)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray (default 2: this machine's)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--study", help=argparse.SUPPRESS)
    p.add_argument("--results", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    mock = subprocess.Popen([sys.executable, "-m", "ltm_harness", "mock-llm", "--port", "0", "--latency-ms",
                             str(args.latency_ms)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert mock.stdout is not None
        url = mock.stdout.readline().split(" at ")[1].split()[0]
        with tempfile.TemporaryDirectory() as tmp:
            tmp = os.environ.get("GRID_BENCH_DIR", tmp)
            study = write_study(Path(tmp), url)
            print(f"study: {len(AGENTS)} agents x {len(SPANS)} spans x {len(SEEDS)} seeds = "
                  f"{len(AGENTS) * len(SPANS) * len(SEEDS)} cells, datasets colours, names, kv; mock LLM at {url} "
                  f"with {args.latency_ms:g} ms per request; {os.cpu_count()} CPUs here")
            results: dict[str, dict[str, float]] = {}
            folders: dict[str, Path] = {}
            for mode in args.modes.split(","):
                folders[mode] = Path(tmp) / mode
                done = subprocess.run([sys.executable, __file__, "--child", mode, "--study", str(study), "--results",
                                       str(folders[mode]), "--concurrency", str(args.concurrency), "--ray-cpus",
                                       str(args.ray_cpus)], capture_output=True, text=True, env=env)
                if done.returncode != 0:
                    raise SystemExit(f"{mode} failed:\n{done.stderr[-3000:]}")
                results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
                r = results[mode]
                ray = f", Ray started in {r['ray_start']:.1f} s (not included)" if r["ray_start"] else ""
                print(f"{mode:>10}: {r['wall']:7.1f} s wall for {r['finished']}/{r['cells']} cells "
                      f"(cells' own time {r['cell_seconds']:.1f} s), driver peak {r['peak_mb']:.0f} MB{ray}; "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
            first = next(iter(folders))
            same = all(outputs(f / "bench" / "cells") == outputs(folders[first] / "bench" / "cells")
                       for f in folders.values())
            print(f"results.json and event logs (less measured latencies) identical across modes: {same}")
            if "serial" in results:
                base = results["serial"]["wall"]
                for mode, r in results.items():
                    if mode != "serial":
                        print(f"speed-up of {mode} over serial: {base / r['wall']:.2f}x")
                if "ray-serial" in results:
                    n = results["serial"]["cells"]
                    local_gap = (base - results["serial"]["cell_seconds"]) / n
                    ray_gap = (results["ray-serial"]["wall"] - results["ray-serial"]["cell_seconds"]) / n
                    print(f"Ray overhead per cell: {(ray_gap - local_gap) * 1000:.0f} ms (one cell at a time, the "
                          f"time outside the cell's own run: {ray_gap * 1000:.0f} ms per cell on Ray, "
                          f"{local_gap * 1000:.0f} ms locally)")
    finally:
        mock.terminate()
        mock.wait()


if __name__ == "__main__":
    main()
