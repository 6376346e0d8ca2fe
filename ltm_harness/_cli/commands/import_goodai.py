"""`import-goodai`: turn the GoodAI LTM Benchmark's test definitions into a run of this harness."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "import-goodai"
ORDER = 30
HELP = "import the GoodAI LTM Benchmark's test definitions (*.def.json) as a run"
DESCRIPTION = ("Convert a folder of the GoodAI LTM Benchmark's test definitions (one folder per dataset, "
               "<id>.def.json files, and the run's config.yml) into definitions and a config of this harness, "
               "in results/<run-name>/. Then `run -c results/<run-name>/config.yml` runs the same tests. "
               "Dataset folders this harness cannot import are reported and skipped. Benchmark 1 and 2 definitions "
               "are read as well as Benchmark 3's (give --span: their configs have no memory span).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="DIR", help="the reference's definitions folder (e.g. data/tests/<run>/definitions)")
    p.add_argument("--run-name", help="name of the run to create (default: goodai-<the reference run's name>)")
    p.add_argument("--results", default="results", help="folder for runs (default: results)")
    p.add_argument("--span", type=int, help="memory span in tokens (default: the one in DIR/config.yml)")
    p.add_argument("--force", action="store_true", help="replace the run's definitions if they exist")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._cli.commands._options import refresh_results_index
    from ltm_harness._interop.goodai import import_goodai
    from ltm_harness._tokens import plural

    console = Console(width=None if sys.stdout.isatty() else 120)
    result = import_goodai(Path(args.source), Path(args.results), args.run_name, args.span, args.force)
    table = Table(title=f"imported into {escape(str(result.run_dir))}", title_justify="left")
    for column in ("reference folder", "dataset", "tests", "status"):
        table.add_column(column)
    for f in result.folders:
        status = f.status if not f.note else f"{f.status}: {f.note}"
        table.add_row(escape(f.folder), escape(f.dataset or "-"), str(f.tests), escape(status))
    console.print(table)
    refresh_results_index(args.results)
    for arg in result.dropped_args:
        print(f"note: {arg} of the reference config is not used by this harness and was left out", file=sys.stderr)
    for f in result.skipped:
        print(f"warning: {f.folder}: skipped ({f.note})", file=sys.stderr)
    extra = "" if args.results == "results" else f" --results {args.results}"
    console.print(f"{plural(result.tests, 'test')}; run them with:  python -m ltm_harness run -c {escape(str(result.config_path))}{escape(extra)}")
    return 1 if result.skipped else 0
