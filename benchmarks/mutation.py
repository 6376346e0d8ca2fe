"""How many of a module's mutants its tests kill: a small driver around mutmut 3 (https://mutmut.readthedocs.io).

mutmut mutates one change at a time (a flipped comparison, +-1, `and`/`or` swapped, a statement or an argument
dropped, ...), runs only the given tests that reach the mutated function, and calls the mutant killed when one of
them fails. This script prints, per module, how many mutants were killed, survived, timed out (counted as killed:
the tests noticed), had no test reaching them (counted as survived), and the score, (killed + timeout) / total; then
the survivors, each with the command that shows its diff.

Run (from a checkout or a worktree, with the test extra and mutmut installed: `pip install 'mutmut>=3.3'`; the
commands for the scheduler and the event log are in docs/testing.md):

    python benchmarks/mutation.py ltm_harness/_store/eventlog.py --tests tests/core/test_eventlog.py \\
        --sample 100 --seed 1 --diffs -- -k "not slow"

`--sample N --seed S`: test a seeded sample of N of the modules' mutants (the same sample for the same source and
seed). `--jobs`: mutants tested at once (default 2). Arguments after `--` go to every pytest run (`-k`, `--deselect`).
`--diffs`: print each survivor's diff too.

mutmut reads its settings from the pyproject.toml of the folder it runs in and copies the sources into `mutants/`
there, so each run gets a scratch folder, `mutants/<label>/` in this checkout (git ignores `mutants/`): the
project's pyproject.toml with a generated `[tool.mutmut]` section, and links to the checkout's top-level folders.
Every run starts afresh (a kept mutmut cache would let survivors stand after new tests); to look at a survivor
afterwards: `cd mutants/<label> && mutmut show NAME` (or `mutmut browse`).

Why mutmut: it is kept up, mutates a copy (the checkout is never touched), runs each mutant in a forked process with
only the tests that reach the mutated function, and times out mutants that loop, which keeps a run to minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ltm_harness"
# Top-level entries that are never linked into the scratch folder (mutmut's own, caches, run outputs).
NOT_LINKED = {".git", ".venv", "mutants", "results", ".pytest_cache", ".mypy_cache", "build", "dist"}
MUTMUT = "import sys; from mutmut.__main__ import cli; sys.exit(cli())"  # mutmut's console script, this Python's
KILLED = ("killed", "timeout", "caught by type check")
# Imported by every Python a test starts: while mutmut maps tests to functions ("stats"), that Python runs the code
# unmutated and unrecorded (mutmut cannot see into it, and its recorder would look for its settings in the test's
# folder); while a mutant is tested, it runs the mutant too.
SUBPROCESS_SITE = """import os
if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    del os.environ["MUTANT_UNDER_TEST"]
"""


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def scratch_folder(modules: list[str], tests: list[str], pytest_args: list[str]) -> Path:
    """A fresh folder where mutmut mutates `modules` and runs `tests`: the project's pyproject.toml with a
    `[tool.mutmut]` section, and links to the checkout's top-level folders and files."""
    label = "+".join(Path(m).stem for m in modules)
    work = ROOT / "mutants" / label
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if "[tool.mutmut]" in pyproject:
        sys.exit("pyproject.toml: has a [tool.mutmut] section already; remove it, this script writes its own")
    linked = []
    for entry in sorted(ROOT.iterdir()):
        if entry.name in NOT_LINKED or entry.name == "pyproject.toml":
            continue
        (work / entry.name).symlink_to(entry)
        if entry.name != PACKAGE:
            linked.append(entry.name)
    (work / "pyproject.toml").write_text(
        pyproject + "\n[tool.mutmut]\n"
        f"source_paths = {_toml_list([PACKAGE])}\n"
        f"only_mutate = {_toml_list(modules)}\n"
        f"also_copy = {_toml_list(linked)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        f"pytest_add_cli_args = {_toml_list(pytest_args)}\n"
        "use_git_change_detection = false\n", encoding="utf-8")
    return work


def mutant_names(work: Path, modules: list[str]) -> list[str]:
    """Every mutant mutmut makes of `modules`, in its order (names as `mutmut run` takes them)."""
    code = ("import json, sys\n"
            "from pathlib import Path\n"
            "from mutmut.mutation.file_mutation import mutate_file_contents\n"
            "from mutmut.utils.format_utils import get_mutant_name\n"
            "names = [get_mutant_name(Path(m), n) for m in sys.argv[1:]\n"
            "         for n in mutate_file_contents(m, Path(m).read_text()).mutant_names]\n"
            "print(json.dumps(names))\n")
    out = subprocess.run([sys.executable, "-c", code, *modules], cwd=work, check=True, capture_output=True, text=True)
    return list(json.loads(out.stdout))


def run_mutmut(work: Path, names: list[str], jobs: int, log: Path) -> int:
    """Run mutmut on `names` (none: every mutant) in `work`, its output to `log`; its exit code."""
    env = dict(os.environ)
    # Tests that start the harness in a subprocess import the mutated copy too, never the checkout. The folder must
    # exist before Python starts, or its import system remembers it as missing and imports the checkout.
    # (Such tests set PYTHONPATH to the copy's root, hence the sitecustomize module there.)
    (work / "mutants").mkdir(exist_ok=True)
    (work / "mutants" / "sitecustomize.py").write_text(SUBPROCESS_SITE, encoding="utf-8")
    env["PYTHONPATH"] = str(work / "mutants")
    with log.open("wb") as out:
        code = subprocess.run([sys.executable, "-c", MUTMUT, "run", "--max-children", str(jobs), *names],
                              cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    return code


def results(work: Path) -> dict[str, str]:
    """Each tested mutant's status (killed, survived, timeout, no tests, ...), from `mutmut results --all true`."""
    out = subprocess.run([sys.executable, "-c", MUTMUT, "results", "--all", "true"], cwd=work, check=True,
                         capture_output=True, text=True).stdout
    found = (re.match(r"\s*(\S+): (.+)$", line) for line in out.splitlines())
    return {m.group(1): m.group(2).strip() for m in found if m}


def module_of(name: str, modules: list[str]) -> str:
    for m in modules:
        if name.startswith(m.removesuffix(".py").replace("/", ".") + "."):
            return m
    return "?"


def report(statuses: dict[str, str], modules: list[str]) -> list[str]:
    """Print the counts and score of each module (and of all of them); return the survivors' names, sorted."""
    rows = [(m, Counter(s for n, s in statuses.items() if module_of(n, modules) == m)) for m in modules]
    if len(modules) > 1:
        rows.append(("all", Counter(statuses.values())))
    for label, counts in rows:
        total = sum(counts.values())
        killed = sum(counts[k] for k in KILLED)
        other = total - killed - counts["survived"] - counts["no tests"]
        score = f"{100 * killed / total:.1f}%" if total else "-"
        print(f"{label}: killed {counts['killed']}, timeout {counts['timeout']}, survived {counts['survived']}, "
              f"no tests {counts['no tests']}" + (f", other {other}" if other else "")
              + f"; total {total}; score {score} ({killed}/{total})")
    return sorted(n for n, s in statuses.items() if s not in KILLED)


def main() -> None:
    argv = sys.argv[1:]
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="+", help="source files to mutate, relative to the checkout")
    parser.add_argument("--tests", nargs="+", required=True, help="test files or node ids to run against them")
    parser.add_argument("--sample", type=int, help="test only a seeded sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--diffs", action="store_true", help="print each survivor's diff")
    args = parser.parse_args(argv)
    for path in [*args.modules, *(t.split("::")[0] for t in args.tests)]:
        if not (ROOT / path).exists():
            sys.exit(f"{path}: no such file in {ROOT}; give paths relative to the checkout")
    try:
        import mutmut  # noqa: F401
    except ImportError:
        sys.exit("mutmut is not installed; install it with: pip install 'mutmut>=3.3'")

    work = scratch_folder(args.modules, args.tests, pytest_args)
    names = mutant_names(work, args.modules)
    sampled = args.sample is not None and args.sample < len(names)
    if sampled:
        names = sorted(random.Random(args.seed).sample(names, args.sample))
    print(f"{len(names)} mutants of {', '.join(args.modules)}; tests: {' '.join(args.tests)}", flush=True)
    log = work / "mutmut.log"
    print(f"mutmut's output goes to {log.relative_to(ROOT)}", flush=True)
    code = run_mutmut(work, names if sampled else [], args.jobs, log)  # no names: all of them
    wanted = set(names)
    statuses = {n: s for n, s in results(work).items() if n in wanted and s != "not checked"}
    if code != 0 or len(statuses) != len(names):
        tail = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n").splitlines()[-15:]
        print("\n".join(tail))
        sys.exit(f"mutmut stopped (exit {code}) with {len(statuses)} of {len(names)} mutants tested; see its log, "
                 f"{log.relative_to(ROOT)} (a test that fails without mutants stops it: --deselect it after --)")
    survivors = report(statuses, args.modules)
    if survivors:
        print(f"\nsurvivors ({len(survivors)}; see one with: cd {work.relative_to(ROOT)} && mutmut show NAME):")
        for name in survivors:
            print(f"  {name}: {statuses[name]}")
            if args.diffs:
                show = subprocess.run([sys.executable, "-c", MUTMUT, "show", name], cwd=work, capture_output=True,
                                      text=True).stdout
                print("    " + "\n    ".join(show.strip().splitlines()[1:]))


if __name__ == "__main__":
    main()
