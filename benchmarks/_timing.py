"""The one timing helper of the benchmarks: a child process measured by what the kernel counted for it alone.

`child(argv)` runs a command and returns its wall seconds, its CPU seconds (user + system, from `os.wait4`: this
child and nothing else, so other work on a shared machine adds little), its own peak RSS and its output.
`interleaved(cases, repeats)` runs several commands in turn, `repeats` rounds of one each (so the machine's load
falls on all of them alike), and keeps every measurement; `best` is the least CPU of a case (other work only
ever adds time).

    from _timing import child, interleaved, best
    runs = interleaved({"loop": [...argv...], "harness": [...argv...]}, repeats=3)
    print(best(runs["harness"]).cpu / best(runs["loop"]).cpu)
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ChildRun:
    wall: float  # seconds, from start to exit (includes waiting for the CPU on a loaded machine)
    cpu: float  # user + system seconds of this child (and any children it waited for)
    peak_mib: float  # its own peak resident set, MiB
    code: int  # exit status
    stdout: str
    stderr: str


def child(argv: Sequence[str], env: Mapping[str, str] | None = None, code: Path = ROOT,
          ok: Sequence[int] = (0, 1, 3)) -> ChildRun:
    """Run `argv` to its end, in and with the harness of the checkout `code` (default: this one); its wall and CPU
    seconds, peak RSS and output. An exit status outside `ok` stops the benchmark with the child's last words.

    The child may write and read compiled bytecode (`__pycache__`), as an installed package has it: without that
    (`PYTHONDONTWRITEBYTECODE=1`, set on some developer machines), every run compiles the harness's ~130 modules from
    source again (0.12 CPU s on a LoCoMo run), which no user's run pays."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=err, text=True, cwd=code,
                                env={**environ, "PYTHONPATH": str(code), **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        run = ChildRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, out.read(), err.read())
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {code}:\n{run.stderr[-3000:]}")
    return run


def interleaved(cases: Mapping[str, Sequence[str]], repeats: int = 3, env: Mapping[str, str] | None = None,
                code: Mapping[str, Path] | None = None) -> dict[str, list[ChildRun]]:
    """Each case run `repeats` times, one of each per round, in the order given (`code`: a case's checkout)."""
    runs: dict[str, list[ChildRun]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, argv in cases.items():
            runs[name].append(child(argv, env, (code or {}).get(name, ROOT)))
    return runs


def best(runs: Sequence[ChildRun]) -> ChildRun:
    """The run with the least CPU time."""
    return min(runs, key=lambda r: r.cpu)


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes), to print beside a figure."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"
