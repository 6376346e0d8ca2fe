"""Command line: `python -m ltm_harness run | list`."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from ltm_harness.errors import UserError

DEFAULT_AGENTS = ["oracle", "retrieval", "recent:500", "null"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ltm-harness", description="Test the long-term memory of conversational agents.")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run a benchmark against one or more agents",
                         description="Run a benchmark config against agents. With no arguments: the built-in "
                                     "offline benchmark against the baseline agents.")
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
    run.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")

    ls = sub.add_parser("list", help="list datasets, agents and shipped configs", description="List what can be run.")
    ls.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    return p


def _cmd_run(args: argparse.Namespace) -> int:
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


def _cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness.agents import AGENT_KINDS
    from ltm_harness.config import CONFIG_DIR
    from ltm_harness.registry import discover

    console = Console()
    datasets = Table(title="datasets", title_justify="left")
    datasets.add_column("name")
    datasets.add_column("description")
    for name, cls in sorted(discover().items()):
        datasets.add_row(escape(name), escape(cls.description))
    console.print(datasets)
    agents = Table(title="agents", title_justify="left")
    agents.add_column("spec")
    agents.add_column("description")
    for kind, (_, _, desc) in AGENT_KINDS.items():
        agents.add_row(kind, escape(desc))
    console.print(agents)
    console.print("configs: " + ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yml"))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return {"run": _cmd_run, "list": _cmd_list}[args.command](args)
    except UserError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
