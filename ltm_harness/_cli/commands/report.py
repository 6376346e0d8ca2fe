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
    p.add_argument("run", metavar="RUN", help="a run folder, or the name of a run under --results (or a study's folder "
                                             "or name: its report across cells)")
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

    if _study_report(args):
        return 0
    folder = resolve_run(args.run, Path(args.results))
    files = write_report([folder], Path(args.output) if args.output else None)
    print_written(files)
    return 0


def _study_report(args: argparse.Namespace) -> bool:
    """A study's report when RUN names a study's folder (written by `grid`); False when it names none."""
    from ltm_harness._grid.index import find_study
    from ltm_harness._grid.report import write_study_report

    direct = Path(args.run)
    for path in [direct] + ([Path(args.results) / direct] if not direct.is_absolute() else []):
        study = find_study(path)
        if study is not None:
            files = write_study_report(study, Path(args.output) if args.output else None)
            for warning in files.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            print(f"report in {files.html}")
            stems = sorted({p.name.rsplit(".", 1)[0] for p in files.tables})
            print(f"tables in {files.html.parent}/: " + ", ".join(f"{s}.csv/.json" for s in stems))
            return True
    return False
