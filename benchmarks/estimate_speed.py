"""Wall time of `estimate` on a shipped config with several agents, and of a run of the same config with the
instant `null` agent, each in a fresh process (imports included).

The config is copied without the datasets given to --exclude (default: chapterbreak, whose data file may not be
there offline), so the same copy works with older versions of the harness that have no --exclude: give their
interpreter with --python to measure before and after on one machine.

    python benchmarks/estimate_speed.py [--config benchmark-v3-500k] [--exclude chapterbreak]
        [-a openai:gpt-4o -a openai:gpt-4o-mini@32k -a openai:gpt-4.1-mini@128k] [--python PATH] [--no-run]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._runner.config import resolve_config_path  # noqa: E402

AGENTS = ["openai:gpt-4o", "openai:gpt-4o-mini@32k", "openai:gpt-4.1-mini@128k"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - started, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="benchmark-v3-500k")
    parser.add_argument("--exclude", default="chapterbreak", help="datasets left out of the copy (comma-separated)")
    parser.add_argument("-a", "--agent", action="append", dest="agents")
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose ltm_harness is measured")
    parser.add_argument("--no-run", action="store_true", help="skip the run with the null agent")
    args = parser.parse_args()
    agents = args.agents or AGENTS
    left_out = {n for n in args.exclude.split(",") if n}
    raw = yaml.safe_load(resolve_config_path(args.config).read_text(encoding="utf-8"))
    raw["datasets"]["datasets"] = [d for d in raw["datasets"]["datasets"] if d["name"] not in left_out]
    with tempfile.TemporaryDirectory(prefix="ltm-estimate-speed-") as tmp:
        folder = Path(tmp)
        config = folder / "config.yml"
        config.write_text(yaml.safe_dump(raw), encoding="utf-8")
        cmd = [args.python, "-m", "ltm_harness", "estimate", "-c", str(config), "--json"]
        for agent in agents:
            cmd += ["-a", agent]
        wall, out = timed(cmd, folder)
        if out.returncode:
            sys.exit(f"estimate failed:\n{out.stderr}")
        rows = json.loads(out.stdout)
        print(f"{args.config} without {', '.join(sorted(left_out)) or 'nothing'}; {args.python}")
        print(f"  estimate, {len(agents)} agents ({', '.join(agents)}): {wall:.1f} s")
        for r in rows:
            window = f"{r['max_context']:,}" if r["max_context"] else "full"
            print(f"    {r['agent']:<28} {window:>8}  calls {r['agent_calls']:,}  sent {r['prompt_tokens']:,}  "
                  f"price {r['cost_usd']}")
        if not args.no_run:
            wall, out = timed([args.python, "-m", "ltm_harness", "run", "-c", str(config), "-a", "null", "--quiet",
                               "--no-report", "--results", str(folder / "results")], folder)
            if out.returncode:
                sys.exit(f"run failed:\n{out.stderr}")
            print(f"  run with the null agent: {wall:.1f} s")


if __name__ == "__main__":
    main()
