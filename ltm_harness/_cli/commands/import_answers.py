"""`import-answers`: another tool's published answers to LoCoMo or LongMemEval, as a run of their own, scored by the
reference's rules so they sit beside live agents in `compare`, reports and the statistics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "import-answers"
ORDER = 31
HELP = "import published answers to LoCoMo or LongMemEval (mem0's results, jsonl, LongMemEval's .log) as a run"
DESCRIPTION = ("Play BENCHMARK (locomo, longmemeval, or a config playing one, such as longmemeval-s) with an agent "
               "named NAME that answers each question from FILE, and score it by the reference's rules (and a judge "
               "with --judge): a run of its own, to compare with live agents. FILE is mem0's evaluation results or a "
               "jsonl of {sample_id, question_index or question, response} for LoCoMo; a jsonl of {question_id, "
               "hypothesis} or its evaluator's .log (autoeval_label kept as the publisher's verdict) for LongMemEval. "
               "Answers are matched to the questions, never guessed: unmatched and duplicated ones are counted and "
               "listed, and a question with no answer is unscored. The benchmark's data is found as `run` finds it "
               "(the cache, or --data-file). The run goes to results/<config's run name>-NAME/ unless --run-name.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("benchmark", metavar="BENCHMARK", help="locomo, longmemeval (longmemeval-s), longmemeval-m, "
                                                          "longmemeval-oracle, or a config file playing one of them")
    p.add_argument("file", metavar="FILE", help="the answers file")
    p.add_argument("--name", required=True, help="the imported agent's name (e.g. mem0-published)")
    p.add_argument("--run-name", help="name of the run (default: <the config's run name>-NAME)")
    p.add_argument("--results", default="results", help="folder for runs (default: results)")
    p.add_argument("--data-file", metavar="PATH", help="the benchmark's data file (the dataset's args.data_file; "
                                                       "default: the cached download)")
    p.add_argument("--examples", type=int, help="conversations (LoCoMo) or questions (LongMemEval) to play, as run's "
                                                "--examples (use the same as the live run you compare with)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N examples (as run's --limit)")
    p.add_argument("--judge", metavar="MODEL", help="also judge the answers with this LLM (config.judge for its endpoint)")
    p.add_argument("--no-report", action="store_true", help="do not write the run's HTML report")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._api import import_answers
    from ltm_harness._cli.commands._options import report_after_run
    from ltm_harness._cli.tables import print_run
    from ltm_harness._interop.answers.formats import FORMAT_NAMES
    from ltm_harness._tokens import plural

    console = Console(width=None if sys.stdout.isatty() else 120)
    out = import_answers(args.benchmark, Path(args.file), name=args.name, results=args.results, run_name=args.run_name,
                         data_file=args.data_file, examples=args.examples, limit=args.limit, judge=args.judge)
    m = out.match
    console.print(f"imported {escape(str(args.file))} ({escape(FORMAT_NAMES.get(m.file_format, m.file_format))}): "
                  f"{plural(m.answers, 'answer')} for {plural(m.questions, 'question')} of the run; "
                  f"{m.matched} matched, {m.unmatched} unmatched, {m.duplicated} duplicated; "
                  f"{m.unanswered} question{'s' if m.unanswered != 1 else ''} without an answer (unscored)",
                  soft_wrap=True)
    for line in m.unmatched_list:
        print(f"unmatched: {line}", file=sys.stderr)
    for line in m.duplicated_list:
        print(f"duplicated: {line}", file=sys.stderr)
    hidden = m.unmatched - len(m.unmatched_list) + m.duplicated - len(m.duplicated_list)
    if hidden > 0:
        print(f"... and {hidden} more, listed in {out.folder.imported(args.name)}", file=sys.stderr)
    print_run(out.summary, console, folder=out.path)
    agent = next((a for a in out.summary.agents if a.agent == args.name), None)
    if agent is not None:  # the publisher's own numbers beside ours, overall and per category (theirs, not ours)
        from ltm_harness._report.imported_section import benchmark_order, comparisons

        rows = comparisons(m, out.results(args.name), benchmark_order(agent, out.summary.judge is not None))
        if rows:
            console.print("the publisher's scores (imported, not ours), on the questions both scored:")
        for c in rows:
            ours = "not judged" if c.ours != c.ours else f"ours {c.ours:.3f}, {c.disagree} disagree"
            line = f"  {c.what.strip()}: theirs {c.theirs:.3f}, {ours} ({plural(c.questions, 'question')})"
            console.print(escape(line), soft_wrap=True)
    console.print(f"results in {escape(str(out.path))}/")
    if not args.no_report:
        report_after_run(out.path, console)
    return 0
