"""Command line: `python -m ltm_harness COMMAND` (each command is a module of ltm_harness/_cli/commands/, listed in its COMMANDS)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator

from ltm_harness._agents.lingering import stop_lingering
from ltm_harness._cli.commands import command_modules
from ltm_harness._cli.exit_codes import ERROR, INTERRUPTED
from ltm_harness._errors import LTMError, speaking_to
from ltm_harness._guard.limits import clip_text
from ltm_harness._guard.redact import redact

MAX_LINE = 2000  # an error line longer than this is cut: whatever input it echoes shows a prefix only


def one_line(message: str) -> str:
    """An error as the terminal shows it: secrets redacted, each line at most MAX_LINE characters."""
    return "\n".join(clip_text(line, MAX_LINE)
                     for line in redact(message).splitlines())


def _parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    p = argparse.ArgumentParser(prog="ltm-harness", description="Test the long-term memory of conversational agents.")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    commands = {}
    for mod in command_modules():
        cp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.DESCRIPTION)
        mod.add_arguments(cp)
        cp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
        commands[mod.NAME] = mod
    return p, commands


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM (a `kill`, a scheduler ending a job) is taken as Ctrl-C: the run stops the same
    way, keeps every answered turn and prints the command that resumes it. Only in the main thread (signal handlers
    live there); the previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: signal.raise_signal(signal.SIGINT))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    parser, commands = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return ERROR
    try:
        with speaking_to("command line"), terminate_as_interrupt():  # errors name options as flags (--overwrite)
            code: int = commands[args.command].main(args)
        return code
    except LTMError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        stop_lingering()  # what a user's agent opened and left open must not keep the process alive
