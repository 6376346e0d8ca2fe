"""The command that continues an interrupted or stopped command, as the user started it: `./ltm run ...` through the
set-up script (which says so in LTM_LAUNCHER), `ltm-harness ...` through the installed entry point, else
`python -m ltm_harness ...` with the Python that runs now (its full path when `python` on PATH is another one, so the
printed command works as it is)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

LAUNCHER = "LTM_LAUNCHER"  # set by ./ltm to the path it was started by


def program() -> list[str]:
    """The words that start this command line again, as the user started it."""
    launcher = os.environ.get(LAUNCHER, "").strip()
    if launcher:
        return [launcher]
    if Path(sys.argv[0]).name == "ltm-harness":
        return ["ltm-harness"]
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found and os.path.abspath(found) == os.path.abspath(sys.executable):
            return [name, "-m", "ltm_harness"]
    return [sys.executable, "-m", "ltm_harness"]


def command_line(words: list[str]) -> str:
    """`words` (a command and its arguments) as a command the user can paste."""
    return shlex.join([*program(), *words])
