"""`run`: run a benchmark config against one or more agents."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ltm_harness._cli.commands._options import (add_config_arguments, add_judge_cost_arguments, add_max_cost_argument,
                                               add_results_arguments, configure, judge_batch_progress,
                                               report_after_run, say_causes, selection_of)
from ltm_harness._guard.redact import redact
from ltm_harness._cli.exit_codes import AGENT_FAILED, INTERRUPTED, add_allow_errored_argument, describe, exit_status

NAME = "run"
ORDER = 10
HELP = "run a benchmark against one or more agents"
DESCRIPTION = ("Run a benchmark config against agents. With no arguments: the built-in offline benchmark "
               "against the baseline agents. If results/<run-name>/ already holds a finished run, the new run goes to "
               "results/<run-name>-2/ (and so on); if it holds an interrupted one, pass --resume to continue it or "
               "--overwrite to start again. " + describe(retry="--retry-errored does them again"))
DEFAULT_AGENTS = ["oracle", "retrieval", "recent:500", "null"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    add_config_arguments(run)
    run.add_argument("--run-name", help="name of the run; results go to results/<run-name>/")
    add_results_arguments(run, "results/<run-name>/")
    run.add_argument("--quiet", action="store_true", help="print only the final tables")
    run.add_argument("--no-report", action="store_true", help="do not write the HTML report (results/<run>/report.html)")
    run.add_argument("--judge", metavar="MODEL", help="score with this LLM judge where datasets use one (config.judge for its endpoint)")
    add_judge_cost_arguments(run)
    run.add_argument("--reference-prompts", metavar="PATH",
                     help="a LongMemEval checkout: its longmemeval datasets are judged with the reference's own prompt "
                          "texts, read from src/evaluation/evaluate_qa.py there; a BEAM checkout, for the beam "
                          "datasets (src/prompts.py, src/evaluation/compute_metrics.py); or a MemoryAgentBench "
                          "checkout, for the memoryagentbench datasets (utils/templates.py, the LongMemEval judge "
                          "prompts); parsed, never run")
    run.add_argument("--retry-errored", action="store_true",
                     help="do the errored tests of the run in results/<run-name>/ again (given as when it started): each "
                          "session with one is replayed from its event log up to its first failed turn or errored "
                          "test and goes on live from there; an interrupted run is resumed as with --resume")
    add_max_cost_argument(run)
    add_allow_errored_argument(run)


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._agents.specs import agent_choices
    from ltm_harness._api import load, run_async, run_to_end
    from ltm_harness._cli.heap import settle
    from ltm_harness._cli.tables import print_run
    from ltm_harness._engine.progress import TurnProgress
    from ltm_harness._llm.ledger import BudgetReached, Ledger
    from ltm_harness._runner.claim import Claim
    from ltm_harness._runner.prepare import PreparedRun
    from ltm_harness._store.layout import RunFolder
    from ltm_harness._tokens import plural

    console = Console(width=None if sys.stdout.isatty() else 120)
    cfg, source = load(args.config)
    cfg, warnings = configure(cfg, source, args)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    agents = args.agents or cfg.config.agents or DEFAULT_AGENTS
    names = [choice.name for choice in agent_choices(agents)]
    started = time.perf_counter()
    progress = None
    claimed: list[str] = []  # the run's name once its folder is claimed (for the resume hint)
    ledgers: list[Ledger | None] = []  # its ledger of spend

    def say_note(note: str) -> None:  # said once, while the run goes on (above a live display)
        console.print(f"warning: {escape(redact(note))}", soft_wrap=True, highlight=False)

    def prepared_now(prepared: PreparedRun, claim: Claim) -> None:
        nonlocal progress
        claimed.append(claim.run_name)
        ledgers.append(prepared.ledger)
        if prepared.ledger is not None:
            prepared.ledger.on_note = say_note
        for note in claim.notes:
            print(f"note: {redact(note)}", file=sys.stderr)
        for warning in prepared.warnings:
            print(f"warning: {redact(warning)}", file=sys.stderr)
        if args.quiet:
            return
        n = prepared.results_total()
        where = "reused from" if prepared.reused_definitions else "generated in"
        console.print(f"run [b]{escape(prepared.config.config.run_name)}[/b]: {plural(n, 'test')} from "
                      f"{plural(len(prepared.datasets), 'dataset')} ({where} {escape(str(prepared.folder.definitions))}), agents "
                      f"{escape(', '.join(names))}{' (isolated)' if cfg.config.isolated else ''}")
        if claim.resuming:
            console.print(claim.resuming)
        from ltm_harness._cli.progress import RunProgress, progress_span

        span = progress_span(d for d, _ in prepared.datasets)
        ledger = prepared.ledger  # the run's spend is shown when it may pay a provider
        paid = ledger is not None and (ledger.budget is not None or bool(cfg.config.judge.model)
                                       or any(c.uses_openai for c in agent_choices(agents)))
        progress = RunProgress(console, names, n, span,  # live on a terminal, else log lines
                               spend=ledger.describe if ledger is not None and paid else None)
        progress.__enter__()

    def on_turn(turn: TurnProgress) -> None:
        if progress is not None:
            progress.on_turn(turn)

    try:
        settle()  # the collector for a long run: what is loaded now is never walked again
        output = run_to_end(run_async(cfg, agents, datasets=args.datasets, exclude=args.exclude, limit=args.limit,
                                       results=args.results, resume=args.resume, overwrite=args.overwrite,
                                       retry_errored=args.retry_errored, reference_prompts=args.reference_prompts,
                                       on_turn=None if args.quiet else on_turn, on_prepared=prepared_now,
                                       source=source, judge_batch=args.judge_batch, no_cache=args.no_cache,
                                       on_judge_batch=judge_batch_progress(console)))
    except KeyboardInterrupt:
        if progress is not None:
            progress.__exit__(None, None, None)
            progress = None
        if not claimed:
            print("interrupted before any agent was called; nothing was kept", file=sys.stderr)
        else:
            folder = RunFolder.named(Path(args.results), claimed[-1]).path
            print(f"interrupted: every answered turn is kept in {folder}; resume the run with\n  "
                  f"{redact(resume_command(args, claimed[-1]))}", file=sys.stderr)
        return INTERRUPTED
    except BudgetReached as stop:
        if progress is not None:
            progress.__exit__(None, None, None)
            progress = None
        folder = RunFolder.named(Path(args.results), claimed[-1]).path
        print(f"{stop} (every answered turn is kept in {folder}); go on with a higher budget:\n  "
              f"{resume_command(args, claimed[-1], higher=stop.higher)}", file=sys.stderr)
        return AGENT_FAILED
    finally:
        if progress is not None:
            progress.__exit__(None, None, None)
    summary = output.summary
    print_run(summary, console, {a: output.results(a) for a in output.agents} if len(output.agents) > 1 else None)
    console.print(f"results in {escape(str(output.path))}/  ({time.perf_counter() - started:.1f} s)")
    ledger = ledgers[-1] if ledgers else None
    if ledger is not None and (ledger.spent or ledger.budget is not None):
        console.print(f"{ledger.describe()} on paid LLM calls, as billed ({plural(ledger.calls, 'call')} now"
                      + (f", {ledger.carried:.4f} USD before the resume" if ledger.carried else "") + ")")
    if not args.no_report:
        report_after_run(output.path, console)
    any_errored = any(sum(d.errored for d in agent.datasets) and agent.agent not in summary.errors
                      for agent in summary.agents)
    say_causes(output)
    for agent in summary.agents:
        if agent.questions is not None and (line := agent.questions.warning(agent.agent)):
            print(f"warning: {line}", file=sys.stderr)
    for error in summary.errors.values():
        print(f"error: {redact(error)}", file=sys.stderr)
    if any(agent.error for agent in summary.agents):  # an agent's sessions stopped early: resumable
        print(f"every answered turn is kept in {output.path}; continue the run with\n  "
              f"{redact(resume_command(args, output.path.name))}", file=sys.stderr)
    return exit_status(bool(summary.errors), any_errored, args.allow_errored)


def resume_command(args: argparse.Namespace, run_name: str, higher: float | None = None) -> str:
    """The exact command that resumes this run, as the user started it: its own options, the folder it claimed, and
    --resume (`higher`: the budget to go on with, after the run stopped at its own)."""
    from ltm_harness._cli.again import command_line

    words = ["run", "-c", args.config]
    for agent in args.agents or []:
        words += ["-a", agent]
    for flag, value in (("--span", args.span), ("--examples", args.examples), ("--seed", args.seed),
                        ("--judge", args.judge)):
        if value is not None:
            words += [flag, str(value)]
    if args.isolated:
        words.append("--isolated")
    for setting in args.settings or []:
        words += ["--set", setting]
    words += selection_of(args).flags()
    words += ["--run-name", run_name]
    if args.results != "results":
        words += ["--results", args.results]
    budget = higher if higher is not None else getattr(args, "max_cost", None)
    if budget is not None:
        words += ["--max-cost", f"{budget:g}"]
    words += [flag for flag, on in (("--quiet", args.quiet), ("--no-report", args.no_report),
                                    ("--retry-errored", args.retry_errored), ("--allow-errored", args.allow_errored),
                                    ("--judge-batch", getattr(args, "judge_batch", False)),
                                    ("--no-cache", getattr(args, "no_cache", False))) if on]
    return command_line([*words, "--resume"])
