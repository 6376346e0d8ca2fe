"""`suite`: run an aiVLE-style test suite against chat agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ltm_harness._protocols.aivle.agent import ChatAgentAdapter
    from ltm_harness._protocols.aivle.evaluator import EvaluationResult
    from ltm_harness._protocols.aivle.suite import SuiteResult, TestSuite
    from ltm_harness._protocols.aivle.testcase import TestCase

NAME = "suite"
ORDER = 40
HELP = "run an aiVLE-style test suite (MODULE:SUITE) against chat agents"
DESCRIPTION = ("Load a TestSuite (or a function returning one) from an importable module or a .py file, run it "
               "with every agent, print a table and write the results as JSON in the aiVLE schema. "
               "Example: suite ltm_harness.aivle.examples:suite -a retrieval")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", metavar="MODULE:SUITE", help="e.g. ltm_harness.aivle.examples:suite or my_suite.py:build")
    p.add_argument("-a", "--agent", action="append", dest="agents", metavar="AGENT",
                   help="agent spec, repeatable (default: retrieval)")
    p.add_argument("--results", default="results", help="outputs go to <results>/suites/<suite_id>/ (default: results)")
    p.add_argument("--quiet", action="store_true", help="print only the tables")


def _run_agent(suite: "TestSuite", spec: str, create: Callable[..., "ChatAgentAdapter"], out_dir: Path,
               console: "Console", quiet: bool) -> "SuiteResult":
    """Run the suite with one agent; write its JSON results and one event log per case."""
    from rich.markup import escape

    from ltm_harness._store.eventlog import EventLog

    from ltm_harness._store.events import SessionStart, TurnEvent
    from ltm_harness._runner.run import slug
    from ltm_harness._engine.tokens import DEFAULT_ENCODING

    created: list[ChatAgentAdapter] = []
    transcripts: dict[str, list[TurnEvent]] = {}

    def create_agent(**agent_init: Any) -> ChatAgentAdapter:
        adapter = create(**agent_init)
        created.append(adapter)
        return adapter

    def on_case(case: TestCase, result: EvaluationResult) -> None:
        transcripts[case.case_id] = [t for a in created for t in a.turns]
        created.clear()
        if not quiet:
            value = "-" if result.value is None else f"{result.value:.3f}"
            console.print(f"{escape(spec)}: {escape(case.case_id)} {value}"
                          + (f" [red]{escape(result.error)}[/red]" if result.error else ""))

    outcome = asyncio.run(suite.run_async(create_agent, on_case))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{slug(spec)}.json").write_text(outcome.model_dump_json(indent=2) + "\n", encoding="utf-8")
    for case_id, turns in transcripts.items():
        log = EventLog(out_dir / slug(spec) / "events" / f"{slug(case_id)}.jsonl")
        try:
            if turns:
                log.write(SessionStart(agent=spec, session=case_id, time=turns[0].time, tokenizer=DEFAULT_ENCODING))
            for turn in turns:
                log.write(turn)
        finally:
            log.close()
    return outcome


def _table(suite_id: str, spec: str, outcome: "SuiteResult") -> "Table":
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"suite {escape(suite_id)}, agent {escape(spec)}", title_justify="left")
    for col, just in (("case", "left"), ("evaluator", "left"), ("value", "right"), ("episodes", "right"),
                      ("error", "left")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for case in outcome.results:
        r = case.result
        episodes = r.detail.get("episodes") if isinstance(r.detail, dict) else None
        table.add_row(escape(case.case_id), escape(r.name), "-" if r.value is None else f"{r.value:.3f}",
                      "-" if episodes is None else str(episodes), escape(r.error or ""))
    return table


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._protocols.aivle.agent import chat_agent_factory
    from ltm_harness._protocols.aivle.suite import load_suite
    from ltm_harness._errors import ConfigError, RunFolderError
    from ltm_harness._runner.run import slug

    console = Console(width=None if sys.stdout.isatty() else 120)
    suite = load_suite(args.suite)
    agents = args.agents or ["retrieval"]
    if len(set(agents)) != len(agents):
        raise ConfigError("an agent is given twice; give each -a once")
    factories = {spec: chat_agent_factory(spec) for spec in agents}  # every spec checked before anything runs
    out_dir = Path(args.results) / "suites" / slug(suite.suite_id)
    outcomes = {}
    for spec in agents:
        try:
            outcomes[spec] = _run_agent(suite, spec, factories[spec], out_dir, console, args.quiet)
        except OSError as exc:
            raise RunFolderError(f"cannot write results under {args.results}: {exc.strerror or exc}; "
                            "give another --results folder") from None
    n_errors = 0
    for spec, outcome in outcomes.items():
        console.print(_table(suite.suite_id, spec, outcome))
        n_errors += sum(c.result.error is not None for c in outcome.results)
    for spec in agents:
        console.print(f"results of {escape(spec)}: {escape(str(out_dir / (slug(spec) + '.json')))} "
                      f"(chat turns in {escape(str(out_dir / slug(spec) / 'events'))}/)")
    if n_errors:
        print(f"error: {n_errors} case result(s) have an error (see the tables)", file=sys.stderr)
    return 1 if n_errors else 0
