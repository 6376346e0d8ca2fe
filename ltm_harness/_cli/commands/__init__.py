"""CLI commands: one module per command.

A command module defines NAME, ORDER (its place in `--help`), HELP, DESCRIPTION, `add_arguments(parser)` and
`main(args) -> exit code`; `COMMANDS` lists them.
"""

from __future__ import annotations

from types import ModuleType

from ltm_harness._cli.commands import aiq, compare, estimate, generate, grid, import_answers, import_goodai, mock_llm, report, rescore
from ltm_harness._cli.commands import list as list_command
from ltm_harness._cli.commands import run, suite, syllabus

COMMANDS: tuple[ModuleType, ...] = (run, estimate, list_command, syllabus, rescore, aiq, suite, report, compare,
                                    generate, import_goodai, import_answers, mock_llm, grid)


def command_modules() -> list[ModuleType]:
    return sorted(COMMANDS, key=lambda m: (m.ORDER, m.NAME))
