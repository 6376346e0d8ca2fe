"""`run`: run a benchmark config against one or more agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from ltm_harness._cli.commands._options import add_config_arguments, apply_overrides
from ltm_harness._errors import LTMError, RunFolderError

NAME = "run"
ORDER = 10
HELP = "run a benchmark against one or more agents"
DESCRIPTION = ("Run a benchmark config against agents. With no arguments: the built-in offline benchmark "
               "against the baseline agents. If results/<run-name>/ already holds a finished run, the new run goes to "
               "results/<run-name>-2/ (and so on); if it holds an interrupted one, pass --resume to continue it or "
               "--overwrite to start again.")
DEFAULT_AGENTS = ["oracle", "retrieval", "recent:500", "null"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    add_config_arguments(run)
    run.add_argument("--run-name", help="name of the run; results go to results/<run-name>/")
    run.add_argument("--results", default="results", help="folder for run outputs (default: results)")
    run.add_argument("--quiet", action="store_true", help="print only the final tables")
    run.add_argument("--no-report", action="store_true", help="do not write the HTML report (results/<run>/report.html)")
    run.add_argument("--judge", metavar="MODEL", help="score with this LLM judge where datasets use one (config.judge for its endpoint)")
    again = run.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue the interrupted run in results/<run-name>/ (same config and options): finished "
                            "agents are kept, turns already answered are replayed from the event log, never asked again "
                            "(with nothing to resume, the run starts)")
    again.add_argument("--overwrite", action="store_true",
                       help="discard the results in results/<run-name>/ and run again (its definitions are reused)")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._runner.config import load_config, resolve_config_path
    from ltm_harness._agents.specs import display_spec
    from ltm_harness._runner.run import clear_run, free_run_name, prepare, run_all, run_folder_state, slug
    from ltm_harness._cli.tables import print_run

    console = Console(width=None if sys.stdout.isatty() else 120)
    source = str(resolve_config_path(args.config))
    cfg = load_config(args.config)
    apply_overrides(cfg, args)
    agents = args.agents or cfg.config.agents or DEFAULT_AGENTS
    started = time.perf_counter()
    results_root = Path(args.results)
    run_dir = results_root / slug(cfg.config.run_name)
    if args.overwrite:
        clear_run(run_dir)
    elif not args.resume:
        finished, interrupted = run_folder_state(run_dir)
        if interrupted:
            raise RunFolderError(f"{run_dir} holds an interrupted run ({', '.join(interrupted)} did not finish); pass "
                            "--resume to continue it, or --overwrite to discard it and start again")
        if finished:
            name = free_run_name(results_root, cfg.config.run_name)
            print(f"note: {run_dir} holds a finished run, kept as it is; this run writes to "
                  f"{results_root / slug(name)} (--overwrite replaces the finished run instead)", file=sys.stderr)
            cfg.config.run_name = name
    try:
        prepared = prepare(cfg, results_root, source, resume=args.resume)
    except OSError as exc:
        raise RunFolderError(f"cannot write results under {args.results}: {exc.strerror or exc} ({exc.filename}); "
                        "give another --results folder") from None
    for warning in prepared.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not args.quiet:
        n = sum(len(v) for v in prepared.examples.values())
        where = "reused from" if prepared.reused_definitions else "generated in"
        console.print(f"run [b]{escape(cfg.config.run_name)}[/b]: {n} tests from {len(prepared.datasets)} datasets "
                      f"({where} {escape(str(prepared.run_dir / 'definitions'))}), agents {escape(', '.join(map(display_spec, agents)))}"
                      f"{' (isolated)' if cfg.config.isolated else ''}")
    if args.resume:
        finished, interrupted = run_folder_state(prepared.run_dir)
        if not (finished or interrupted):
            print(f"note: {prepared.run_dir} holds nothing to resume; the run starts from the beginning", file=sys.stderr)
        elif not args.quiet:
            console.print(f"resuming: {len(finished)} agents finished (kept), {len(interrupted)} interrupted "
                          "(replayed from their event logs, then continued)")
    if args.quiet:
        summary = asyncio.run(run_all(prepared, agents, resume=args.resume))
    else:
        from ltm_harness._cli.progress import RunProgress

        n_tests = sum(len(v) for v in prepared.examples.values())
        span = max(d.memory_span for d, _ in prepared.datasets)
        with RunProgress(console, [display_spec(a) for a in agents], n_tests, span) as progress:  # a live display on a terminal, else log lines
            summary = asyncio.run(run_all(prepared, agents, progress.on_turn, resume=args.resume))
    print_run(summary, console)
    console.print(f"results in {escape(str(prepared.run_dir))}/  ({time.perf_counter() - started:.1f} s)")
    if not args.no_report:
        from ltm_harness._report import write_report

        try:
            report = write_report([prepared.run_dir])
        except LTMError as exc:
            print(f"warning: no report written: {exc}", file=sys.stderr)
        else:
            console.print(f"report in {escape(str(report.html))}", soft_wrap=True)
    for agent in summary.agents:
        errored = sum(d.errored for d in agent.datasets)
        if errored and agent.agent not in summary.errors:
            print(f"warning: agent {agent.agent}: {errored} tests errored (the reasons are in "
                  f"{prepared.run_dir / slug(agent.agent) / 'results.json'})", file=sys.stderr)
    for error in summary.errors.values():
        print(f"error: {error}", file=sys.stderr)
    return 1 if summary.errors else 0
