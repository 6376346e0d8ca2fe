"""`import-answers`: another tool's published answers to LoCoMo, LongMemEval or MemoryAgentBench, as a run of their
own, scored by the reference's rules so they sit beside live agents in `compare`, reports and the statistics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "import-answers"
ORDER = 31
HELP = ("import published answers to LoCoMo, LongMemEval or MemoryAgentBench (mem0's results, jsonl, LongMemEval's "
        ".log, MemoryAgentBench's output files) as a run")
DESCRIPTION = ("Play BENCHMARK (locomo, longmemeval, or a config playing one, such as longmemeval-s) with an agent "
               "named NAME that answers each question from FILE, and score it by the reference's rules (and a judge "
               "with --judge): a run of its own, to compare with live agents. FILE is mem0's evaluation results or a "
               "jsonl of {sample_id, question_index or question, response} for LoCoMo; a jsonl of {question_id, "
               "hypothesis} or its evaluator's .log (autoeval_label kept as the publisher's verdict) for LongMemEval; the "
               "output file MemoryAgentBench's main.py writes (one source; matched by query_id) for memoryagentbench. "
               "Answers are matched to the questions, never guessed: unmatched and duplicated ones are counted and "
               "listed, and a question with no answer is unscored. The benchmark's data is found as `run` finds it "
               "(the cache, or --data-file; for memoryagentbench the folder laid out like the hub's repository). The "
               "run goes to results/<config's run name>-NAME/ unless --run-name; interrupted (or stopped by "
               "--max-cost), it is continued with the same command and --resume (or started again with --overwrite).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ltm_harness._cli.commands._options import add_judge_cost_arguments

    p.add_argument("benchmark", metavar="BENCHMARK", help="locomo, longmemeval (longmemeval-s), longmemeval-m, "
                                                          "longmemeval-oracle, memoryagentbench (mab), or a config "
                                                          "file playing one of them")
    p.add_argument("file", metavar="FILE", help="the answers file")
    p.add_argument("--name", required=True, help="the imported agent's name (e.g. mem0-published)")
    p.add_argument("--run-name", help="name of the run (default: <the config's run name>-NAME)")
    from ltm_harness._cli.commands._options import add_results_arguments

    add_results_arguments(p, "results/<run name>/")
    p.add_argument("--data-file", metavar="PATH", help="the benchmark's data file (the dataset's args.data_file; "
                                                       "default: the cached download)")
    p.add_argument("--examples", type=int, help="conversations (LoCoMo) or questions (LongMemEval) to play, as run's "
                                                "--examples (use the same as the live run you compare with)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N examples (as run's --limit)")
    p.add_argument("--judge", metavar="MODEL", help="also judge the answers with this LLM (config.judge for its endpoint)")
    p.add_argument("--no-report", action="store_true", help="do not write the run's HTML report")
    add_judge_cost_arguments(p)
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="stop before the judge's calls could cost more than USD in all (the run stops resumable)")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._api import import_answers
    from ltm_harness._cli.commands._options import judge_batch_progress, max_cost, report_after_run, say_causes
    from ltm_harness._cli.exit_codes import INTERRUPTED
    from ltm_harness._llm.ledger import BudgetReached
    from ltm_harness._cli.tables import print_run
    from ltm_harness._guard.redact import redact
    from ltm_harness._interop.answers.formats import FORMAT_NAMES
    from ltm_harness._tokens import plural

    console = Console(width=None if sys.stdout.isatty() else 120)
    claimed: list[str] = []  # the run's name once its folder is claimed (for the resume hint)
    try:
        out = import_answers(args.benchmark, Path(args.file), name=args.name, results=args.results,
                             run_name=args.run_name, data_file=args.data_file, examples=args.examples,
                             limit=args.limit, judge=args.judge, resume=args.resume, overwrite=args.overwrite,
                             on_claimed=claimed.append,
                             max_cost=None if args.max_cost is None else max_cost(args.max_cost),
                             judge_batch=args.judge_batch, no_cache=args.no_cache,
                             on_judge_batch=judge_batch_progress(console))
    except BudgetReached as stop:
        print(f"{stop}; go on with the same command, a higher --max-cost and --resume (nothing is paid twice)",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if not claimed:
            print("interrupted before any answer was played; nothing was kept", file=sys.stderr)
        else:
            print(f"interrupted: every answer played is kept in {Path(args.results) / claimed[-1]}; continue with\n  "
                  f"{resume_command(args, claimed[-1])}", file=sys.stderr)
        return INTERRUPTED
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
    for line in m.invalid_list:
        print(f"invalid: {line}", file=sys.stderr)
    hidden = (m.unmatched - len(m.unmatched_list) + m.duplicated - len(m.duplicated_list) + m.invalid_scores
              - len(m.invalid_list))
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
    say_causes(out, NAME)
    console.print(f"results in {escape(str(out.path))}/")
    if not args.no_report:
        report_after_run(out.path, console)
    for error in out.summary.errors.values():  # stopped early (a judge that fails every call): never exit 0
        print(f"error: {redact(error)}", file=sys.stderr)
    return 1 if out.summary.errors else 0


def resume_command(args: argparse.Namespace, run_name: str) -> str:
    """The exact command that continues this import, as the user started it: its own arguments, the folder it
    claimed, and --resume."""
    from ltm_harness._cli.again import command_line

    words = [NAME, args.benchmark, args.file, "--name", args.name, "--run-name", run_name]
    for flag, value in (("--data-file", args.data_file), ("--examples", args.examples), ("--limit", args.limit),
                        ("--judge", args.judge), ("--max-cost", args.max_cost)):
        if value is not None:
            words += [flag, str(value)]
    if args.results != "results":
        words += ["--results", args.results]
    words += [flag for flag, on in (("--no-report", args.no_report), ("--judge-batch", args.judge_batch),
                                    ("--no-cache", args.no_cache)) if on]
    return command_line([*words, "--resume"])
