"""Writes reference/: what l2metrics 3.1.0 computes on the logs of this folder (run it in a virtualenv holding
l2metrics 3.1.0, l2logger 1.8.2, pandas 1.5.3, numpy 1.26 and scipy 1.13; the harness is not needed).

    python make_reference.py

Each log is scored with maintenance_method and transfer_method "both", the other settings at l2metrics' defaults.
`cl-bandit` is scored against the two expert runs of ste/bandit, stored in the order of their names with
`-s a` (append), as a user stores them one after the other; the other logs without experts. l2metrics' own
command line stops before writing the metrics of these logs (json cannot write the numpy integers of their integer
rewards), so the report is made through its MetricsReport class and written with those integers as JSON numbers;
the per-regime table is its own TSV. `antc` with its experts (ste/antc) and `crash` make l2metrics itself fail:
their errors are kept in reference/errors.txt.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference"


def _expert_store(folder: Path) -> str:
    store = tempfile.mkdtemp(prefix="l2data-")
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        subprocess.run([sys.executable, "-m", "l2metrics", "-l", str(run), "-s", "a", "-p", "reward", "--no-plot"],
                       env=dict(os.environ, L2DATA=store), check=True, capture_output=True)
    return store


def _report(log: Path, store: str) -> None:
    """Score `log` in a child process whose L2DATA is `store` (l2logger reads it when it is imported)."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "import numpy as np\n"
        "from l2metrics.report import MetricsReport\n"
        "log, out = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "r = MetricsReport(log_dir=str(log), perf_measure='reward', maintenance_method='both', transfer_method='both')\n"
        "r.calculate()\n"
        "num = lambda o: int(o) if isinstance(o, np.integer) else float(o) if isinstance(o, np.floating) else o.tolist()\n"
        "(out / f'{log.name}_metrics.json').write_text(json.dumps(r.ll_metrics_dict, default=num) + '\\n')\n"
        "r.regime_metrics_df.to_csv(out / f'{log.name}_regime.tsv', sep='\\t', index=False)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(log), str(OUT)], env=dict(os.environ, L2DATA=store),
                          capture_output=True, text=True)
    if done.returncode:
        last = done.stderr.strip().splitlines()[-1]
        with (OUT / "errors.txt").open("a", encoding="utf-8") as f:
            f.write(f"{log.name}{' with experts' if os.listdir(store) else ''}: {last}\n")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    (OUT / "errors.txt").write_text("")
    empty = tempfile.mkdtemp(prefix="l2data-")
    _report(HERE / "logs" / "cl-bandit", _expert_store(HERE / "ste" / "bandit"))
    for name in ("cl-two", "antc", "crash"):
        _report(HERE / "logs" / name, empty)
    _report(HERE / "logs" / "antc", _expert_store(HERE / "ste" / "antc"))


if __name__ == "__main__":
    main()
