"""Time and peak memory of reading LongMemEval-shaped files with the harness's streaming reader.

Writes the synthetic S-shaped (~48 sessions, ~115k tokens a question, ~310 MB) and M-shaped (~500 sessions a
question, ~2.8 GB) files of benchmarks/longmemeval_data.py into FOLDER unless they are there, then, each in a fresh
process (so the peak RSS is the reader's alone):

* `read`: every question built (`iter_questions`);
* `only`: 5 questions asked for, the other 495 skipped unbuilt (`iter_questions(only=...)`);
* `select`: the ids of 60 questions stratified by type (`select_questions`);
* `stream`: every question built as plain dicts, no models (`stream.list_items`, the reader's JSON part);
* `ijson-items`: ijson's own C `items()` over the same file, building plain dicts (for comparison: the reader
  builds its items in Python to bound nesting, see ltm_harness/_interop/longmemeval/stream.py).

    python benchmarks/longmemeval_read.py [--folder /tmp/lme] [--only-s]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
mode, path = sys.argv[1], Path(sys.argv[2])
started = time.perf_counter()
if mode == "ijson-items":
    import ijson
    with path.open("rb") as fh:
        count = sum(1 for _ in ijson.items(fh, "item", use_float=True))
    extra = ijson.backend
else:
    from ltm_harness._interop.longmemeval.data import iter_questions, question_index, select_questions
    if mode == "read":
        count = turns = 0
        for q in iter_questions(path):
            count += 1
            turns += sum(len(s.turns) for s in q.sessions)
        extra = f"{turns:,} turns"
    elif mode == "stream":
        from ltm_harness._interop.longmemeval.stream import list_items
        count = sum(1 for _ in list_items(path, what="a file"))
        extra = "dicts"
    elif mode == "only":
        ids = {qid for qid, _, _ in question_index(path)[::100]}
        started = time.perf_counter()
        count = sum(1 for _ in iter_questions(path, only=ids))
        extra = "the 5 asked for"
    else:
        count = len(select_questions(path, 60, seed=0))
        extra = "ids"
wall = time.perf_counter() - started
print(json.dumps({"mode": mode, "questions": count, "wall_s": round(wall, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), "note": extra}))
"""


def generator():
    spec = importlib.util.spec_from_file_location("longmemeval_data", ROOT / "benchmarks" / "longmemeval_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/ltm-longmemeval-bench"))
    parser.add_argument("--only-s", action="store_true", help="skip the M-shaped file")
    args = parser.parse_args()
    gen = generator()
    files = {"S": (args.folder / "s.json", 48, 2400)}
    if not args.only_s:
        files["M"] = (args.folder / "m.json", 500, 2000)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for shape, (path, sessions, tokens) in files.items():
        if not path.exists():
            print(f"writing {path} ...", file=sys.stderr)
            gen.write_file(path, questions=500, sessions=sessions, session_tokens=tokens)
        print(f"\n{shape}-shaped: {path} ({path.stat().st_size / 1e9:.2f} GB, 500 questions, ~{sessions} sessions each)")
        for mode in ("read", "only", "select", "stream", "ijson-items"):
            out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), str(ROOT)], capture_output=True,
                                 text=True)
            if out.returncode:
                sys.exit(f"{mode} failed:\n{out.stderr}")
            row = json.loads(out.stdout)
            print(f"  {mode:12} {row['questions']:4} questions  {row['wall_s']:7.2f} s  peak RSS "
                  f"{row['peak_rss_mb']:7.1f} MB  ({row['note']})")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
