"""`grid`: run a study (agents x spans x seeds x datasets or configs), locally or on Ray, resumably."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ltm_harness._cli.commands._options import add_selection_arguments, selection_of
from ltm_harness._cli.exit_codes import add_allow_errored_argument, describe, exit_status

if TYPE_CHECKING:
    from ltm_harness._grid.results import ScoreRow

NAME = "grid"
ORDER = 15
HELP = "run a study: every cell of agents x spans x seeds (x datasets or configs), locally or on Ray"
DESCRIPTION = ("Run every cell of a study file (a base config crossed with lists of agents, spans, seeds, datasets "
               "or configs; see docs/grid.md), each cell an ordinary run folder under results/<study>/cells/. Run it "
               "again to go on: finished cells are skipped, interrupted ones resumed from their event logs, the "
               "rest started. Cells run concurrently on this process (default) or as Ray tasks (--ray). At the end "
               "the study's report (score against span, per agent) is written to results/<study>/report.html. A "
               "cell that failed or was interrupted counts as an agent that failed, its errored tests as errored "
               "tests. " + describe(again="running the study again resumes it"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("study", metavar="STUDY.yml", help="the study file")
    p.add_argument("--results", default="results", help="folder for the outputs, which go to RESULTS/<study>/ "
                                                         "(default: results)")
    p.add_argument("--ray", action="store_true", help="run each cell as a Ray task (pip install 'ltm-harness[ray]'); "
                                                      "joins --ray-address or RAY_ADDRESS, else starts Ray here")
    p.add_argument("--ray-address", metavar="ADDRESS", help="the Ray cluster to join (e.g. 10.0.0.1:6379; implies "
                                                            "--ray)")
    p.add_argument("--concurrency", type=int, metavar="N", help="cells at a time (overrides the study file's "
                                                                 "`concurrency`)")
    p.add_argument("--no-report", action="store_true", help="do not write the study's report")
    p.add_argument("--quiet", action="store_true", help="print only the final table")
    add_allow_errored_argument(p, "tests of the cells")
    add_selection_arguments(p)


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._cli.progress import StudyProgress
    from ltm_harness._errors import ConfigError, LTMError
    from ltm_harness._grid.driver import StudyRun, run_study
    from ltm_harness._grid.executors import check_reachable, import_ray
    from ltm_harness._grid.report import write_study_report
    from ltm_harness._grid.study import load_study
    from ltm_harness._tokens import plural

    console = Console(width=None if sys.stdout.isatty() else 120)
    use_ray = args.ray or bool(args.ray_address)
    if use_ray:
        import_ray()  # said now, in one line, when Ray is not installed
        address = args.ray_address or os.environ.get("RAY_ADDRESS")
        if address:
            check_reachable(address)  # before anything is written
    selection = selection_of(args)
    study = load_study(args.study, selection if selection.flags() else None)
    if args.concurrency is not None:
        if args.concurrency < 1:
            raise ConfigError(f"--concurrency {args.concurrency}: give 1 or more")
        study.spec.concurrency = args.concurrency
    started = time.perf_counter()
    progress = None if args.quiet else StudyProgress(console, len(study.cells))
    entered = False

    def ready(run: StudyRun) -> None:
        nonlocal entered
        for note in run.notes:
            print(f"note: {note}", file=sys.stderr)
        if progress is None:
            return
        console.print(f"study [b]{escape(study.name)}[/b]: {plural(len(study.cells), 'cell')}, {len(run.skipped)} finished "
                      f"before, {len(run.ran)} to run {'on Ray' if use_ray else 'here'}; index in "
                      f"{escape(str(run.folder.index))}", soft_wrap=True)
        progress.done = len(run.skipped)
        progress.__enter__()
        entered = True

    try:
        run = run_study(study, Path(args.results), "ray" if use_ray else "local", address=args.ray_address,
                        events=progress, on_ready=ready)
    finally:
        if progress is not None and entered:
            progress.__exit__(None, None, None)
    index = run.index
    counts = index.counts()
    if not args.no_report:
        try:
            report = write_study_report(run.folder)
        except LTMError as exc:
            print(f"warning: no report written: {exc}", file=sys.stderr)
        else:
            table = Table(title="mean score over seeds, all datasets [95% t interval]", title_justify="left")
            spans = sorted({r.span for r in report.rows if r.dataset == "all datasets"})
            table.add_column("agent")
            for span in spans:
                table.add_column(f"span {span:,}", justify="right")
            labels = list(dict.fromkeys((r.agent, r.config) for r in report.rows))
            for agent, config in labels:
                by_span = {r.span: r for r in report.rows
                           if r.dataset == "all datasets" and (r.agent, r.config) == (agent, config)}
                table.add_row(escape(agent if config is None else f"{agent} · {config}"),
                              *[_cell(by_span.get(s)) for s in spans])
            console.print(table)
            console.print(f"report in {escape(str(report.html))}", soft_wrap=True)
    console.print(f"study {escape(study.name)}: {counts['finished']}/{len(index.cells)} cells finished, "
                  f"{counts['failed']} failed ({time.perf_counter() - started:.1f} s); cells in "
                  f"{escape(str(run.folder.cells))}/", soft_wrap=True)
    errored = [e for e in index.cells if e.state == "finished" and e.errored]
    for entry in errored:
        print(f"warning: cell {entry.cell.id}: {plural(entry.errored, 'test')} errored (the reasons are in "
              f"{run.folder.cell(entry.cell.id).path}/)", file=sys.stderr)
    for entry in index.cells:
        if entry.state == "failed":
            print(f"error: cell {entry.cell.id}: {entry.error}", file=sys.stderr)
    return exit_status(bool(counts["failed"] or counts["interrupted"]), bool(errored), args.allow_errored)


def _cell(row: "ScoreRow | None") -> str:
    if row is None:
        return "-"
    interval = "" if row.ci_low is None or row.ci_high is None else f" [{row.ci_low:.2f}, {row.ci_high:.2f}]"
    return f"{row.mean:.2f}{interval}"

