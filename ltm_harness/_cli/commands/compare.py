"""`compare`: agents of several runs side by side in one self-contained HTML file, with CSV and JSON tables, and the
comparison table on the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ltm_harness._cli.commands.report import print_written

NAME = "compare"
ORDER = 41
HELP = "compare the agents of several runs in one HTML report (and CSV/JSON tables)"
DESCRIPTION = ("Put the agents of several runs side by side in one self-contained HTML file: the agents x "
               "datasets table, charts, and each test's score per agent; an agent that is in two runs appears "
               "once per run, labelled with the run's name. By default the file is written beside the first run's "
               "folder as compare_<runs>.html. Runs whose tests or judge settings differ from the first run's are "
               "refused (--force compares them anyway and marks them). The comparison table is printed too.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders, or names of runs under --results")
    p.add_argument("-o", "--output", metavar="FILE", help="the HTML file to write (default: compare_<runs>.html beside the first run)")
    p.add_argument("--results", default="results", help="folder where run names are looked up (default: results)")
    p.add_argument("--force", action="store_true",
                   help="compare runs whose tests (test definitions) or judge settings differ; the page marks them")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ltm_harness._cli.tables import report_table
    from ltm_harness._report import resolve_run, write_report

    folders = [resolve_run(run, Path(args.results)) for run in args.runs]
    files = write_report(folders, Path(args.output) if args.output else None, force=args.force)
    for difference in files.differences:
        print(f"warning: compared anyway (--force): {difference.detail}", file=sys.stderr)
    if files.tables_data is not None:
        terminal = sys.stdout.isatty()
        console = Console(width=None if terminal else 120)
        marks: dict[str, str] = {}
        for d in files.differences:
            for row in files.tables_data.agents:
                if row.run == d.run.name:
                    marks[row.label] = ", ".join(filter(None, [marks.get(row.label), f"{d.what} differ"]))
        tables = files.tables_data
        console.print(report_table("headline numbers per dataset, on the tests scored for every agent", tables.agents,
                                   tables.datasets, marks, plain=not terminal, breakdown=tables.breakdown,
                                   metrics=tables.metrics, headline=tables.headline, width=console.width))
    if files.statistics is not None:  # the paired differences and tests (docs/statistics.md)
        from ltm_harness._report.stats_section import MAX_TERMINAL_PAIRS, pair_lines
        lines = pair_lines(files.statistics)
        for line in lines[:MAX_TERMINAL_PAIRS]:
            print(line)
        if len(lines) > MAX_TERMINAL_PAIRS:
            print(f"... and {len(lines) - MAX_TERMINAL_PAIRS} more pairs and datasets in the page and its .pairs.csv")
    print_written(files)
    return 0
