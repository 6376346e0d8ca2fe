"""`suite`: run an aiVLE-style test suite against chat agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ltm_harness._cli.commands._options import add_agent_arguments, add_results_arguments, refresh_results_index
from ltm_harness._cli.exit_codes import add_allow_errored_argument, describe, exit_status

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ltm_harness._protocols.aivle.evaluator import EvaluationResult
    from ltm_harness._protocols.aivle.suite import SuiteResult, TestSuite
    from ltm_harness._protocols.aivle.testcase import TestCase

NAME = "suite"
ORDER = 40
HELP = "run an aiVLE-style test suite (MODULE:SUITE) against chat agents"
DESCRIPTION = ("Load a TestSuite (or a function returning one) from an importable module or a .py file, run it "
               "with every agent, print a table and write the results as JSON in the aiVLE schema. "
               "Example: suite ltm_harness.aivle.examples:suite -a retrieval. A case whose result has an error "
               "(a time-out, an agent that failed its turns, a broken case) is an errored test. "
               + describe(again="no results written for it; --resume continues it"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", metavar="SUITE", help="a suite's name (text-envs), or MODULE:NAME or path/to/file.py:NAME "
                                                  "of a TestSuite or a function returning one")
    add_agent_arguments(p, default="retrieval")
    add_results_arguments(p, "<results>/suites/<suite-id>/")
    p.add_argument("--quiet", action="store_true", help="print only the tables")
    add_allow_errored_argument(p, "cases")


def _table(suite_id: str, spec: str, outcome: "SuiteResult") -> "Table":
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"suite {escape(suite_id)}, agent {escape(spec)}", title_justify="left")
    for col, just in (("case", "left"), ("evaluator", "left"), ("value", "right"), ("episodes", "right"),
                      ("error", "left")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for case in outcome.results:
        r = case.result
        # the reference's detail shapes: a list per episode (reward), or total_episodes (step count)
        episodes = len(r.detail) if isinstance(r.detail, list) and r.detail else \
            r.detail.get("total_episodes") if isinstance(r.detail, dict) else None
        table.add_row(escape(case.case_id), escape(r.name), "-" if r.value is None else f"{r.value:.3f}",
                      "-" if episodes is None else str(episodes), escape(r.error or ""))
    return table


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._protocols.aivle.run import run_suite
    from ltm_harness._protocols.aivle.catalog import load_suite

    console = Console(width=None if sys.stdout.isatty() else 120)
    suite = load_suite(args.suite)
    agents = args.agents or ["retrieval"]

    def on_case(spec: str, case: "TestCase", result: "EvaluationResult") -> None:
        if not args.quiet:
            value = "-" if result.value is None else f"{result.value:.3f}"
            console.print(f"{escape(spec)}: {escape(case.case_id)} {value}"
                          + (f" [red]{escape(result.error)}[/red]" if result.error else ""))

    run = asyncio.run(run_suite(suite, agents, Path(args.results), resume=args.resume, overwrite=args.overwrite,
                                on_case=on_case))
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    n_errors = 0
    for spec, outcome in run.results.items():
        console.print(_table(suite.suite_id, spec, outcome))
        n_errors += sum(c.result.error is not None for c in outcome.results)
    for spec in run.results:
        console.print(f"results of {escape(spec)}: {escape(str(run.folder.suite_results(spec)))} "
                      f"(chat turns in {escape(str(run.folder.agent(spec).events_dir))}/)")
    refresh_results_index(args.results)
    for spec, why in run.failed.items():
        print(f"error: {why} (no results written for {spec}; --resume continues it)", file=sys.stderr)
    if n_errors:
        print(f"warning: {n_errors} case result(s) have an error (see the tables)", file=sys.stderr)
    return exit_status(bool(run.failed), bool(n_errors), args.allow_errored)
