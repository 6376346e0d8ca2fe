"""MemoryAgentBench at the published sizes, offline: generated rows of the hub's shape (benchmarks/mab_data.py; no real
data) for every source of the paper's main table, with the published rows, questions and tokens a row (recommendation
1.44M tokens in one row, EventQA 534K a row, 100 book rows of 172K, ...), played by `null` as `-c mab` plays them.

    python benchmarks/mab_scale.py                  # all four splits at the published sizes
    python benchmarks/mab_scale.py --small          # a tenth of the tokens a row (a quick look)
    python benchmarks/mab_scale.py --work DIR       # keep the files (default: a temporary folder)

Prints: the input (parquet bytes, context characters, rows, questions), then for the run with `null` (a child
process: `python -m ltm_harness run`, the shipped `mab` config but for the data folder): wall time, peak RSS (from
wait4), the run folder's size against the input's context text, history turns. Targets (issue 33): all four splits
with null under 3 minutes and 1 GB, the run folder under 2x the input."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from mab_data import MAIN, SCALE_TOKENS, write_dataset  # noqa: E402

CONFIG = """config:
  run_name: mab-scale
  seed: 0
  tokenizer: o200k_base
  isolated_concurrency: 4
datasets:
  args:
    memory_span: 32000
    dataset_examples: {n}
  datasets:
    - name: memoryagentbench
      args: {{competency: all, data_dir: {data}}}
"""


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def context_chars(data: Path) -> tuple[int, int, int]:
    import pyarrow.parquet as pq

    chars = rows = questions = 0
    for path in sorted((data / "data").glob("*.parquet")):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1, columns=["context", "questions"]):
            row = batch.to_pylist()[0]
            chars += len(row["context"])
            questions += len(row["questions"])
            rows += 1
    return chars, rows, questions


def run_null(work: Path, data: Path, rows: int) -> dict[str, Any]:
    config = work / "mab-scale.yml"
    config.write_text(CONFIG.format(n=rows, data=json.dumps(str(data))), encoding="utf-8")
    results = work / "results"
    argv = [sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", "null", "--results", str(results),
            "--quiet", "--no-report", "--overwrite"]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, text=True, cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1, 3):
            err.seek(0)
            raise SystemExit(err.read()[-3000:])
    folder = results / "mab-scale"
    summary = json.loads((folder / "summary.json").read_text())["agents"][0]
    return {"wall_s": round(wall, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024),
            "run_folder_mib": round(size_of(folder) / 2**20, 1), "observed_turns": summary["observed_turns"],
            "turns": summary["turns"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path)
    ap.add_argument("--small", action="store_true", help="a tenth of the published tokens a row")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="mab-scale-"))
    data = work / "data-root"
    start = time.perf_counter()
    if args.small:
        import mab_data

        mab_data.SCALE_TOKENS.update({k: (r, q, t // 10) for k, (r, q, t) in SCALE_TOKENS.items()})
    write_dataset(data, MAIN, scale=True)
    made = time.perf_counter() - start
    chars, rows, questions = context_chars(data)
    parquet = size_of(data / "data")
    print(f"input: {rows} rows, {questions} questions, {chars / 2**20:.1f} MiB of context text, parquet "
          f"{parquet / 2**20:.1f} MiB (generated in {made:.0f} s)")
    got = run_null(work, data, rows)
    print(f"null: {got['wall_s']} s, peak RSS {got['peak_rss_mib']} MiB, run folder {got['run_folder_mib']} MiB "
          f"({got['run_folder_mib'] * 2**20 / chars:.2f}x the context text), {got['observed_turns']:,} history turns, "
          f"{got['turns']:,} turns")


if __name__ == "__main__":
    main()
