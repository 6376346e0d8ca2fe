"""CLI commands: one module per command, found by name.

A command module defines NAME, ORDER (its place in `--help`), HELP, DESCRIPTION,
`add_arguments(parser)` and `main(args) -> exit code`. Adding a module here adds a command.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def command_modules() -> list[ModuleType]:
    mods = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
            if not info.name.startswith("_")]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: (m.ORDER, m.NAME))
