"""`run`: run a benchmark config against one or more agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from ltm_harness.commands._options import add_config_arguments, apply_overrides
from ltm_harness.errors import UserError

NAME = "run"
ORDER = 10
HELP = "run a benchmark against one or more agents"
DESCRIPTION = ("Run a benchmark config against agents. With no arguments: the built-in offline benchmark "
               "against the baseline agents.")
DEFAULT_AGENTS = ["oracle", "retrieval", "recent:500", "null"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    add_config_arguments(run)
    run.add_argument("--run-name", help="name of the run; results go to results/<run-name>/")
    run.add_argument("--results", default="results", help="folder for run outputs (default: results)")
    run.add_argument("--quiet", action="store_true", help="print only the final tables")
    run.add_argument("--no-report", action="store_true", help="do not write the HTML report (results/<run>/report.html)")
    run.add_argument("--judge", metavar="MODEL", help="score with this LLM judge where datasets use one (config.judge for its endpoint)")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness.config import load_config, resolve_config_path
    from ltm_harness.runner import prepare, run_all
    from ltm_harness.table import print_run

    console = Console(width=None if sys.stdout.isatty() else 120)
    source = str(resolve_config_path(args.config))
    cfg = load_config(args.config)
    apply_overrides(cfg, args)
    agents = args.agents or cfg.config.agents or DEFAULT_AGENTS
    started = time.perf_counter()
    try:
        prepared = prepare(cfg, Path(args.results), source)
    except OSError as exc:
        raise UserError(f"cannot write results under {args.results}: {exc.strerror or exc} ({exc.filename}); "
                        "give another --results folder") from None
    for warning in prepared.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not args.quiet:
        n = sum(len(v) for v in prepared.examples.values())
        where = "reused from" if prepared.reused_definitions else "generated in"
        console.print(f"run [b]{escape(cfg.config.run_name)}[/b]: {n} tests from {len(prepared.datasets)} datasets "
                      f"({where} {escape(str(prepared.run_dir / 'definitions'))}), agents {escape(', '.join(agents))}"
                      f"{' (isolated)' if cfg.config.isolated else ''}")
    if args.quiet:
        summary = asyncio.run(run_all(prepared, agents))
    else:
        from ltm_harness.progress import RunProgress

        n_tests = sum(len(v) for v in prepared.examples.values())
        span = max(d.memory_span for d, _ in prepared.datasets)
        with RunProgress(console, agents, n_tests, span) as progress:  # a live display on a terminal, else log lines
            summary = asyncio.run(run_all(prepared, agents, progress.on_turn))
    print_run(summary, console)
    console.print(f"results in {escape(str(prepared.run_dir))}/  ({time.perf_counter() - started:.1f} s)")
    if not args.no_report:
        from ltm_harness.report import write_report

        try:
            report = write_report([prepared.run_dir])
        except UserError as exc:
            print(f"warning: no report written: {exc}", file=sys.stderr)
        else:
            console.print(f"report in {escape(str(report.html))}", soft_wrap=True)
    for error in summary.errors.values():
        print(f"error: {error}", file=sys.stderr)
    return 1 if summary.errors else 0
