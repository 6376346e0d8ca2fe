"""`list`: datasets, agents and shipped configs."""

from __future__ import annotations

import argparse

NAME = "list"
ORDER = 20
HELP = "list datasets, agents and shipped configs"
DESCRIPTION = "List what can be run."


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._agents.specs import AGENT_KINDS
    from ltm_harness._runner.config import CONFIG_DIR
    from ltm_harness._registry.datasets import discover

    console = Console()
    datasets = Table(title="datasets", title_justify="left")
    datasets.add_column("name")
    datasets.add_column("description")
    for name, cls in sorted(discover().items()):
        datasets.add_row(escape(name), escape(cls.description))
    console.print(datasets)
    agents = Table(title="agents", title_justify="left")
    agents.add_column("spec")
    agents.add_column("description")
    for kind, (_, _, desc) in AGENT_KINDS.items():
        agents.add_row(kind, escape(desc))
    console.print(agents)
    console.print("configs: " + ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yml"))))
    return 0
