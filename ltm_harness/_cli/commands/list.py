"""`list`: everything a run can name (datasets, agents, environments, judge prompts, suites), where each comes
from, and the shipped configs and syllabi."""

from __future__ import annotations

import argparse

NAME = "list"
ORDER = 20
HELP = "list datasets, agents, environments, judge prompts, suites, configs and syllabi, and where each comes from"
DESCRIPTION = ("List what can be run: the built-in datasets, agents, environments, judge prompts and suites, those "
               "registered by installed packages (entry points), and the shipped configs and syllabi.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset-dir", action="append", default=[], metavar="DIR",
                   help="also list the datasets of this folder (as a config's dataset_dirs), repeatable")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._agents.specs import AGENTS
    from ltm_harness._authoring.catalog import known_datasets
    from ltm_harness._envs.catalog import ENVIRONMENTS
    from ltm_harness._llm.judge import JUDGE_PROMPTS
    from ltm_harness._protocols.aivle.catalog import SUITES
    from ltm_harness._resources import shipped

    console = Console()
    for title, entries in (("datasets", known_datasets([Path(d) for d in args.dataset_dir]).entries()),
                           ("agents", AGENTS.entries()), ("environments", ENVIRONMENTS.entries()),
                           ("judge prompts", JUDGE_PROMPTS.entries()), ("suites", SUITES.entries())):
        table = Table(title=title, title_justify="left")
        for column in ("name", "from", "description"):
            table.add_column(column)
        for entry in entries:
            table.add_row(escape(entry.name), escape(entry.source), escape(entry.description))
        console.print(table)
    console.print("configs: " + ", ".join(sorted(p.stem for p in shipped("configs").glob("*.yml"))))
    console.print("syllabi: " + ", ".join(sorted(p.stem for p in shipped("syllabi").glob("*.json"))))
    return 0
