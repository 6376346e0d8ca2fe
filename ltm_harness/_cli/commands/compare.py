"""`compare`: agents of several runs side by side in one self-contained HTML file, with CSV and JSON tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from ltm_harness._cli.commands.report import print_written

NAME = "compare"
ORDER = 41
HELP = "compare the agents of several runs in one HTML report (and CSV/JSON tables)"
DESCRIPTION = ("Put the agents of several runs side by side in one self-contained HTML file: the agents x "
               "datasets table, charts, and each test's score per agent; an agent that is in two runs appears "
               "once per run, labelled with the run's name. By default the file is written beside the first run's "
               "folder as compare_<runs>.html.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders, or names of runs under --results")
    p.add_argument("-o", "--output", metavar="FILE", help="the HTML file to write (default: compare_<runs>.html beside the first run)")
    p.add_argument("--results", default="results", help="folder where run names are looked up (default: results)")


def main(args: argparse.Namespace) -> int:
    from ltm_harness._report import resolve_run, write_report

    folders = [resolve_run(run, Path(args.results)) for run in args.runs]
    files = write_report(folders, Path(args.output) if args.output else None)
    print_written(files)
    return 0
