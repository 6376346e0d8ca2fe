"""`run`: run a benchmark config against one or more agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from ltm_harness.errors import UserError

NAME = "run"
ORDER = 10
HELP = "run a benchmark against one or more agents"
DESCRIPTION = ("Run a benchmark config against agents. With no arguments: the built-in offline benchmark "
               "against the baseline agents.")
DEFAULT_AGENTS = ["oracle", "retrieval", "recent:500", "null"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("-c", "--config", default="default", help="YAML config path or shipped config name (default: default)")
    run.add_argument("-a", "--agent", action="append", dest="agents", metavar="AGENT",
                     help="agent spec, repeatable (e.g. retrieval, recent:2000, openai:gpt-4o-mini, http://127.0.0.1:8080/chat)")
    run.add_argument("--span", type=int, help="memory span in tokens for every dataset (overrides the config)")
    run.add_argument("--examples", type=int, help="examples per dataset (overrides the config)")
    run.add_argument("--seed", type=int, help="seed for test generation and filler")
    run.add_argument("--run-name", help="name of the run; results go to results/<run-name>/")
    run.add_argument("--isolated", action="store_true", help="each test in its own fresh session, no filler, tests run concurrently")
    run.add_argument("--results", default="results", help="folder for run outputs (default: results)")
    run.add_argument("--quiet", action="store_true", help="print only the final tables")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness.config import load_config, resolve_config_path
    from ltm_harness.runner import prepare, run_all
    from ltm_harness.table import print_run

    console = Console(width=None if sys.stdout.isatty() else 120)
    source = str(resolve_config_path(args.config))
    cfg = load_config(args.config)
    if args.span is not None:
        if args.span < 500:
            raise UserError("--span must be at least 500 tokens")
        cfg.datasets.args.memory_span = args.span
        for entry in cfg.datasets.datasets:
            entry.args.pop("memory_span", None)
    if args.examples is not None:
        if args.examples < 1:
            raise UserError("--examples must be at least 1")
        cfg.datasets.args.dataset_examples = args.examples
        for entry in cfg.datasets.datasets:
            entry.args.pop("dataset_examples", None)
    if args.seed is not None:
        cfg.config.seed = args.seed
    if args.run_name:
        cfg.config.run_name = args.run_name
    if args.isolated:
        cfg.config.isolated = True
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
    if args.quiet or not console.is_terminal:
        summary = asyncio.run(run_all(prepared, agents))
    else:
        from ltm_harness.progress import RunProgress

        n_tests = sum(len(v) for v in prepared.examples.values())
        with RunProgress(console, agents, n_tests) as progress:
            summary = asyncio.run(run_all(prepared, agents, progress.on_turn))
    print_run(summary, console)
    console.print(f"results in {escape(str(prepared.run_dir))}/  ({time.perf_counter() - started:.1f} s)")
    for error in summary.errors.values():
        print(f"error: {error}", file=sys.stderr)
    return 1 if summary.errors else 0
