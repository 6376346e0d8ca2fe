"""LongMemEval at full scale, offline: a generated LongMemEval_S-shaped file (500 questions, ~115k tokens of
haystack each) played with the `null` agent, and a generated M-shaped file (~2.7 GB) read streaming.

    python benchmarks/longmemeval_scale.py                 # S run with null, S run with the mock model, M read
    python benchmarks/longmemeval_scale.py --skip-m        # without the 2.7 GB file
    python benchmarks/longmemeval_scale.py --work DIR      # keep the files (default: a temporary folder)
    python benchmarks/longmemeval_scale.py --per-turn 20   # only: ms per turn of a 20-question S run, and its floor

Prints, for the S run with `null` (`python -m ltm_harness run -c longmemeval-s`, the config as shipped but for
the data file): wall time, peak RSS of the run's process, the run folder's size against the input file's, and the
number of history turns (each taken in with no reply); for an S run of `--mock-questions` questions with an
OpenAI-compatible agent on the mock LLM: model calls per question (history costs none); for the M file: the
wall time and peak RSS of reading every question with the streaming reader. Targets (issue 20): the S run under
3 minutes, peak RSS under 1 GB, run folder under 2x the input; M read under 1 GB RSS; 1 call per question.

`--per-turn Q` measures, in one process after the imports, a run of the first Q questions with `null` (making the
definitions and playing them: `prepare` and `run_all`) per turn, against the floor: parsing those questions from
the file, counting every line's tokens once and writing the run's events (the same events, through the event log)
per turn. Target (issue 27): the run at most 2x the floor. `--top N` adds the run's N costliest functions.
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
from _timing import child  # noqa: E402

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


def s_run(work: Path, data: Path, agent: str, n: int, name: str, env: dict[str, str] | None = None) -> dict:
    config = work / f"{name}.yml"
    config.write_text(CONFIG.format(name=name, n=n, data=json.dumps(str(data))), encoding="utf-8")
    results = work / "results"
    done = child([sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", agent,
                 "--results", str(results), "--quiet", "--no-report", "--overwrite"], env)
    folder = results / name
    summary = json.loads((folder / "summary.json").read_text())["agents"][0]
    return {"wall_s": round(done.wall, 1), "peak_rss_mib": round(done.peak_mib),
            "run_folder_mib": round(size_of(folder) / 2**20, 1),
            "turns": summary["turns"], "observed_turns": summary["observed_turns"],
            "calls": summary["usage"]["calls"].get("agent", 0), "questions": n}


def m_read(data: Path) -> dict:
    code = ("import sys; from pathlib import Path; from ltm_harness._interop.longmemeval.data import iter_questions\n"
            "n = t = 0\n"
            "for q in iter_questions(Path(sys.argv[1])):\n"
            "    n += 1; t += sum(len(s.turns) for s in q.sessions)\n"
            "print(n, t)")
    done = child([sys.executable, "-c", code, str(data)])
    n, turns = done.stdout.split()
    return {"wall_s": round(done.wall, 1), "peak_rss_mib": round(done.peak_mib), "questions": int(n), "turns": int(turns)}


PER_TURN = r"""
import asyncio, cProfile, io, json, pstats, sys, tempfile, time
from pathlib import Path
from ltm_harness._runner.config import load_config
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness._tokens import get_tokenizer
from ltm_harness._interop.longmemeval.data import iter_questions, select_questions
from ltm_harness._store.eventlog import EventLog
from ltm_harness._store.events import parse_event

config, data, top = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
ROLES = {"user": "User", "assistant": "Assistant"}
with tempfile.TemporaryDirectory() as tmp:
    cfg = load_config(config)
    n = cfg.datasets.args.dataset_examples
    prof = cProfile.Profile() if top else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    prepared = prepare(cfg, Path(tmp), str(config))
    summary = asyncio.run(run_all(prepared, ["null"]))
    if prof:
        prof.disable()
    run_s = time.perf_counter() - start
    logs = sorted(p for p in Path(tmp).rglob("*.jsonl") if p.name == "events.jsonl" or p.parent.name == "events")
    events = [parse_event(line) for log in logs for line in log.read_text().splitlines()]
    turns = sum(1 for e in events if type(e).__name__ == "TurnEvent")
    # the floor: parse the questions, count every line once, write the same events
    count = get_tokenizer(cfg.config.tokenizer).count
    start = time.perf_counter()
    ids = select_questions(data, n, cfg.config.seed)
    tokens = 0
    for q in iter_questions(data, only=set(ids)):
        for session in q.sessions:
            for turn in session.turns:
                tokens += count(f"{ROLES.get(turn.role, turn.role.title())}: {turn.content}")
        tokens += count(q.question)
    log = EventLog(Path(tmp) / "floor.jsonl")
    for e in events:
        log.write(e)
    floor_s = time.perf_counter() - start
profile = io.StringIO()
if prof:
    pstats.Stats(prof, stream=profile).sort_stats(sys.argv[4] if len(sys.argv) > 4 else "cumulative").print_stats(top)
print(json.dumps({"turns": turns, "run_s": run_s, "floor_s": floor_s, "profile": profile.getvalue()}))
"""


def per_turn(work: Path, data: Path, questions: int, top: int) -> None:
    config = work / "lme-per-turn.yml"
    config.write_text(CONFIG.format(name="lme-per-turn", n=questions, data=json.dumps(str(data))), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", PER_TURN, str(config), str(data), str(top), os.environ.get("SORT", "cumulative")], capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"the per-turn run failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout)
    run_ms, floor_ms = 1000 * r["run_s"] / r["turns"], 1000 * r["floor_s"] / r["turns"]
    print(f"S run of {questions} questions with null: {r['turns']:,} turns, {run_ms:.3f} ms per turn "
          f"({r['run_s']:.1f} s); floor (parse + one tokenization + writing the events) {floor_ms:.3f} ms per turn; "
          f"{run_ms / floor_ms:.2f}x the floor (target <= 2x)")
    if top:
        print(r["profile"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, help="where the files go (kept); default: a temporary folder")
    ap.add_argument("--skip-m", action="store_true", help="leave out the 2.7 GB M-shaped file")
    ap.add_argument("--mock-questions", type=int, default=30, help="questions of the S run with the mock model")
    ap.add_argument("--per-turn", type=int, metavar="Q", help="only the per-turn measurement, on Q questions")
    ap.add_argument("--top", type=int, default=0, help="with --per-turn: the run's N costliest functions")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ltm-lme-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        s_file = work / "longmemeval_s_synthetic.json"
        if not s_file.exists():
            write_file(s_file, questions=500, sessions=48, session_tokens=2400, seed=0)
        mib = s_file.stat().st_size / 2**20
        print(f"S-shaped file: {mib:,.0f} MiB")
        if args.per_turn:
            per_turn(work, s_file, args.per_turn, args.top)
            return
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
