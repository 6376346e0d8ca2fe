"""LongMemEval at full scale, offline: a generated LongMemEval_S-shaped file (500 questions, ~115k tokens of
haystack each) played with the `null` agent, and a generated M-shaped file (~2.7 GB) read streaming.

    python benchmarks/longmemeval_scale.py                 # S run with null, S run with the mock model, M read
    python benchmarks/longmemeval_scale.py --skip-m        # without the 2.7 GB file
    python benchmarks/longmemeval_scale.py --work DIR      # keep the files (default: a temporary folder)

Prints, for the S run with `null` (`python -m ltm_harness run -c longmemeval-s`, the config as shipped but for
the data file): wall time, peak RSS of the run's process, the run folder's size against the input file's, and the
number of history turns (each taken in with no reply); for an S run of `--mock-questions` questions with an
OpenAI-compatible agent on the mock LLM: model calls per question (history costs none); for the M file: the
wall time and peak RSS of reading every question with the streaming reader. Targets (issue 20): the S run under
3 minutes, peak RSS under 1 GB, run folder under 2x the input; M read under 1 GB RSS; 1 call per question.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from longmemeval_data import write_file  # noqa: E402

CONFIG = """config:
  run_name: {name}
  seed: 0
  isolated_concurrency: 8
datasets:
  args:
    memory_span: 32000
    dataset_examples: {n}
  datasets:
    - name: longmemeval
      args: {{variant: s, mode: reference, data_file: {data}}}
"""


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run a child process; its wall seconds, its own peak RSS (MiB, from wait4: this child alone) and its stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env={**os.environ, **(env or {})}, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if proc.returncode not in (0, 1, 3):
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{err.read()[-3000:]}")
        return wall, usage.ru_maxrss / 1024, out.read()


def s_run(work: Path, data: Path, agent: str, n: int, name: str, env: dict[str, str] | None = None) -> dict:
    config = work / f"{name}.yml"
    config.write_text(CONFIG.format(name=name, n=n, data=json.dumps(str(data))), encoding="utf-8")
    results = work / "results"
    wall, peak, _ = child([sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", agent,
                           "--results", str(results), "--quiet", "--no-report", "--overwrite"], env)
    folder = results / name
    summary = json.loads((folder / "summary.json").read_text())["agents"][0]
    return {"wall_s": round(wall, 1), "peak_rss_mib": round(peak), "run_folder_mib": round(size_of(folder) / 2**20, 1),
            "turns": summary["turns"], "observed_turns": summary["observed_turns"],
            "calls": summary["usage"]["calls"].get("agent", 0), "questions": n}


def m_read(data: Path) -> dict:
    code = ("import sys; from pathlib import Path; from ltm_harness._interop.longmemeval.data import iter_questions\n"
            "n = t = 0\n"
            "for q in iter_questions(Path(sys.argv[1])):\n"
            "    n += 1; t += sum(len(s.turns) for s in q.sessions)\n"
            "print(n, t)")
    wall, peak, said = child([sys.executable, "-c", code, str(data)])
    n, turns = said.split()
    return {"wall_s": round(wall, 1), "peak_rss_mib": round(peak), "questions": int(n), "turns": int(turns)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, help="where the files go (kept); default: a temporary folder")
    ap.add_argument("--skip-m", action="store_true", help="leave out the 2.7 GB M-shaped file")
    ap.add_argument("--mock-questions", type=int, default=30, help="questions of the S run with the mock model")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ltm-lme-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        s_file = work / "longmemeval_s_synthetic.json"
        if not s_file.exists():
            write_file(s_file, questions=500, sessions=48, session_tokens=2400, seed=0)
        mib = s_file.stat().st_size / 2**20
        print(f"S-shaped file: {mib:,.0f} MiB")
        null = s_run(work, s_file, "null", 500, "lme-s-null")
        print(f"S with null: {null['wall_s']} s, peak RSS {null['peak_rss_mib']} MiB, run folder "
              f"{null['run_folder_mib']:,} MiB ({null['run_folder_mib'] / mib:.2f}x the input), "
              f"{null['turns']:,} turns of which {null['observed_turns']:,} history")
        server = subprocess.Popen([sys.executable, "-m", "ltm_harness", "mock-llm", "--port", "0"],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            first = server.stdout.readline() if server.stdout else ""  # "mock LLM serving at URL  (models: ...)"
            url = first.split(" at ", 1)[1].split()[0]
            mock = s_run(work, s_file, "openai:mock", args.mock_questions, "lme-s-mock", {"OPENAI_BASE_URL": url})
        finally:
            server.terminate()
            server.wait()
        print(f"S with openai:mock, {mock['questions']} questions: {mock['calls']} model calls "
              f"({mock['calls'] / mock['questions']:.2f} per question) for {mock['observed_turns']:,} history turns, "
              f"{mock['wall_s']} s")
        if not args.skip_m:
            m_file = work / "longmemeval_m_synthetic.json"
            if not m_file.exists():
                write_file(m_file, questions=500, sessions=500, session_tokens=2000, seed=0)
            m = m_read(m_file)
            print(f"M-shaped file: {m_file.stat().st_size / 2**30:.2f} GiB, read streaming: {m['wall_s']} s, peak RSS "
                  f"{m['peak_rss_mib']} MiB, {m['questions']} questions, {m['turns']:,} turns")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
