"""`report`: one run's self-contained HTML report, with its tables as CSV and JSON beside it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "report"
ORDER = 40
HELP = "write a run's HTML report (charts, per-test details) and its tables as CSV/JSON"
DESCRIPTION = ("Write one self-contained HTML file for a run (by default RUN/report.html: no network needed to "
               "open it), with the agents x datasets table, charts and every test's conversation, and the same "
               "tables as CSV and JSON beside it.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="a run folder, or the name of a run under --results")
    p.add_argument("-o", "--output", metavar="FILE", help="the HTML file to write (default: RUN/report.html)")
    p.add_argument("--results", default="results", help="folder where run names are looked up (default: results)")


def print_written(files: object) -> None:
    from ltm_harness._report import ReportFiles

    assert isinstance(files, ReportFiles)
    for warning in files.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"report in {files.html}")
    stems = sorted({p.name.rsplit(".", 1)[0] for p in files.tables})
    print(f"tables in {files.html.parent}/: " + ", ".join(f"{s}.csv/.json" for s in stems))


def main(args: argparse.Namespace) -> int:
    from ltm_harness._report import resolve_run, write_report

    folder = resolve_run(args.run, Path(args.results))
    files = write_report([folder], Path(args.output) if args.output else None)
    print_written(files)
    return 0
