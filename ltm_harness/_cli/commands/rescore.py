"""`rescore`: score a finished run again (e.g. with a judge) without calling its agents."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "rescore"
ORDER = 30
HELP = "score a finished run again, optionally with an LLM judge, without calling the agents"
DESCRIPTION = ("Replay a finished run from its event logs: the agents' recorded replies are scored again by the "
               "datasets' rules, or by the LLM judge given with --judge (responses are cached on disk, so a second "
               "rescore makes no calls). Results and summaries in the run folder are replaced.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ltm_harness._cli.commands._options import add_judge_cost_arguments

    p.add_argument("run", metavar="RUN", help="a run folder, or the name of a run under --results")
    p.add_argument("--judge", metavar="MODEL", help="judge model (default: the run's config.judge.model)")
    p.add_argument("--no-judge", action="store_true", help="score by rules only, even if the run had a judge")
    add_judge_cost_arguments(p)
    p.add_argument("--reference-prompts", metavar="PATH",
                   help="a LongMemEval (BEAM) checkout: judge the run's longmemeval (beam) datasets with the "
                        "reference's own prompt texts (parsed, never run)")
    p.add_argument("--results", default="results", help="folder of runs, for RUN given by name (default: results)")
    p.add_argument("-c", "--config", metavar="CONFIG",
                   help="a config whose dataset_dirs and dataset specs may be loaded (dataset code is never taken from "
                        "the run folder: by default only built-in and installed datasets are)")
    p.add_argument("--dataset-dir", action="append", default=[], metavar="FOLDER",
                   help="a folder of dataset code to load (repeatable)")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="stop before the judge's calls could cost more than USD; the run is then left as it was, and "
                        "the verdicts paid for are cached, so a rescore with a higher --max-cost pays nothing twice")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._api import rescore_async, run_to_end
    from ltm_harness._cli.heap import settle
    from ltm_harness._cli.commands._options import judge_batch_progress, max_cost, say_causes
    from ltm_harness._llm.ledger import BudgetReached
    from ltm_harness._cli.tables import print_run
    from ltm_harness._errors import LTMError
    from ltm_harness._guard.redact import redact
    from ltm_harness._report import resolve_run

    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        settle()  # the collector for a long run: what is loaded now is never walked again
        output = run_to_end(rescore_async(resolve_run(args.run, Path(args.results)), judge=args.judge,
                                           no_judge=args.no_judge, reference_prompts=args.reference_prompts,
                                           config=args.config, dataset_dirs=args.dataset_dir,
                                           max_cost=None if args.max_cost is None else max_cost(args.max_cost),
                                           judge_batch=args.judge_batch, no_cache=args.no_cache,
                                           on_judge_batch=judge_batch_progress(console)))
    except BudgetReached as stop:
        print(f"{stop}; the run is left as it was, and the verdicts paid for are cached: rescore again with a higher "
              "--max-cost to go on (nothing is paid twice)", file=sys.stderr)
        return 1
    summary = output.summary
    for note in output.notes:  # where dataset code came from
        console.print(escape(note), soft_wrap=True)
    print_run(summary, console, {a: output.results(a) for a in output.agents} if len(output.agents) > 1 else None,
              output.path)
    judged = f" with judge {summary.judge}" if summary.judge else " by rules"
    console.print(f"re-scored{escape(judged)}: results in {escape(str(output.path))}/")
    if output.folder.report.exists():  # the old report shows the old scores: write it again
        from ltm_harness._report import write_report

        try:
            console.print(f"report in {escape(str(write_report([output.path]).html))}", soft_wrap=True)
        except LTMError as exc:
            print(f"warning: the report was not rewritten: {redact(str(exc))}", file=sys.stderr)
    say_causes(output, NAME)
    for error in summary.errors.values():
        print(f"error: {redact(error)}", file=sys.stderr)
    return 1 if summary.errors else 0
