"""Exit codes, the same for every command that runs agents (`run`, `aiq`, `suite`, `syllabus run`, `grid`); the
table users read is docs/exit-codes.md."""

from __future__ import annotations

import argparse

OK = 0  # done, and every test has a result
AGENT_FAILED = 1  # an agent failed or stopped early (or a study cell did): resumable
ERROR = 2  # an error, said in one line (ltm_harness._cli.main prints it)
TESTS_ERRORED = 3  # done, but some tests errored (0 with --allow-errored)
INTERRUPTED = 130  # Ctrl-C


def add_allow_errored_argument(p: argparse.ArgumentParser, tests: str = "tests") -> None:
    """--allow-errored: exit 0 rather than 3 when the command finished but some of its `tests` errored."""
    p.add_argument("--allow-errored", action="store_true",
                   help=f"exit 0, not 3, when the command finished but some {tests} errored")


def exit_status(agent_failed: bool, tests_errored: bool, allow_errored: bool) -> int:
    """AGENT_FAILED when an agent failed or stopped early (whatever else happened), TESTS_ERRORED when all finished
    but some tests errored (OK with --allow-errored), else OK."""
    if agent_failed:
        return AGENT_FAILED
    if tests_errored and not allow_errored:
        return TESTS_ERRORED
    return OK


def describe(again: str = "--resume continues it", retry: str = "") -> str:
    """The exit codes as a command's --help says them: `again` how the agent's run goes on after 1, `retry` what
    does errored tests again after 3 (if anything does)."""
    return (f"Exit status: 0 done; 1 an agent failed or stopped early ({again}); 2 an error (one line says which); "
            f"3 done, but some tests errored ({retry + '; ' if retry else ''}--allow-errored exits 0 then); "
            "130 interrupted.")
