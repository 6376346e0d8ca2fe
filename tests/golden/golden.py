"""Golden outputs: what the shipped configs, syllabi, the example suite and an AIQ run write, for the offline
baselines at seed 0, reduced to a sha256 per file.

They are made through the command line (`python -m ltm_harness ...` in a subprocess), the one entry point that
stays the same whatever the package's insides look like, and compared byte for byte. Wall-clock values
(`wall_seconds` in summaries) are set to 0 and the output folder's path to OUT before hashing, and so is the
definitions manifest's `fingerprint`: it hashes the dataset modules' source, which any move of code changes, while
the definitions it stands for are compared byte for byte. Nothing else is changed.

    python tests/golden/golden.py record     # (re)write expected.json from the current code, on purpose only
    python tests/golden/golden.py check      # compare the current code with expected.json
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("expected.json")
AGENTS = ["oracle", "retrieval", "recent:500", "null"]
SYLLABI = ["cl-bandit", "ant-a-bandit-guess", "ant-b-bandit-guess"]
# Files that hold no result (the report, the results index, a lock, the LLM cache) are not compared.
SKIP = re.compile(r"(^|/)(report\.[a-z.]+|index\.html|\.colours\.json|\.llm-cache(/.*)?|\.lock|\.ltm-lock)$")
WALL = re.compile(rb'"wall_seconds": ?[0-9.eE+-]+')
FINGERPRINT = re.compile(rb'"fingerprint": ?"[0-9a-f]*"')


def _v3_32k_without_chapterbreak(folder: Path) -> Path:
    text = (ROOT / "configs" / "benchmark-v3-32k.yml").read_text(encoding="utf-8")
    text = text.replace("    - name: chapterbreak\n", "")
    path = folder / "v3-32k-no-chapterbreak.yml"
    path.write_text(text, encoding="utf-8")
    return path


def commands(out: Path) -> list[list[str]]:
    agents = [x for a in AGENTS for x in ("-a", a)]
    res = ["--results", str(out / "results")]
    cmds = [
        ["run", "--quiet", "--no-report", *res],
        ["run", "-c", str(_v3_32k_without_chapterbreak(out)), "--quiet", "--no-report", *agents, *res],
        ["run", "-c", "environments", "--quiet", "--no-report", "-a", "oracle", "-a", "retrieval", "-a", "null", *res],
        ["suite", "ltm_harness.aivle.examples:suite", "--quiet", "-a", "oracle", "-a", "retrieval", "-a", "null", *res],
        ["aiq", "--quiet", "--trials", "2", "-a", "oracle", "-a", "retrieval", "-a", "null", *res],
    ]
    for name in SYLLABI:
        cmds.append(["syllabus", "run", name, "-a", "oracle", "-a", "retrieval", "-a", "null",
                     "--out", str(out / "l2m")])
    return cmds


def produce(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for cmd in commands(out):
        done = subprocess.run([sys.executable, "-m", "ltm_harness", *cmd], cwd=out, capture_output=True, text=True)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")


def digest(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        if SKIP.search(rel) or rel.endswith(".yml") and "/" not in rel:
            continue
        data = path.read_bytes().replace(str(out).encode(), b"OUT")  # where it was made (metrics.json names it)
        if path.name == "summary.json":
            data = WALL.sub(b'"wall_seconds": 0', data)
        if path.name == "manifest.json":  # a hash of the dataset modules' source: moving code changes it
            data = FINGERPRINT.sub(b'"fingerprint": "-"', data)
        found[rel] = hashlib.sha256(data).hexdigest()
    return found


def main(argv: list[str]) -> int:
    action = argv[0] if argv else "check"
    keep = Path(argv[1]) if len(argv) > 1 else None
    with tempfile.TemporaryDirectory(prefix="ltm-golden-") as tmp:
        out = keep or Path(tmp)
        produce(out)
        now = digest(out)
    if action == "record":
        EXPECTED.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(now)} files in {EXPECTED}")
        return 0
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    differ = sorted(k for k in expected.keys() & now.keys() if expected[k] != now[k])
    missing, extra = sorted(expected.keys() - now.keys()), sorted(now.keys() - expected.keys())
    for label, names in (("differ", differ), ("missing", missing), ("new", extra)):
        for name in names:
            print(f"{label}: {name}")
    print(f"{len(expected) - len(differ) - len(missing)} of {len(expected)} identical")
    return 1 if differ or missing or extra else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
