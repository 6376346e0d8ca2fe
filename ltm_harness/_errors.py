"""Errors meant for users: one clear sentence naming the file or field and the fix, shown without a traceback.

Every error the harness raises for a user to act on is an `LTMError`; the subclass says what is wrong, so
callers branch on the type, never on the message:

* `ConfigError`: a run config, a command-line option or a setting (and an unknown name in one of them);
* `DefinitionError`: what defines tests: dataset code, prompt files, definitions on disk, syllabi, suites,
  environments, imported reference tests;
* `AgentError`: an agent spec, or an agent that cannot be reached or used;
* `LLMError`: an LLM endpoint (agents, the judge, generation, test programs);
* `RunFolderError`: a results folder: missing, damaged, from another version, in use, or not writable.

A message that names an option the user can give says it as that user gives it: `option("overwrite")` is
`--overwrite` in a message the command line prints and `overwrite=True` in one raised to a caller of the library
(`run`, `run_async`, ...). The library is the default audience; the command line speaks to its own (`speaking_to`)
for as long as a command runs, so every message is written once and read in the words of whoever reads it.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Literal

Audience = Literal["library", "command line"]
_AUDIENCE: ContextVar[Audience] = ContextVar("ltm_harness_audience", default="library")
# Options whose flag is not `--` and the argument's name with `-` for `_`
_FLAGS = {"config": "-c/--config", "dataset_dirs": "--dataset-dir"}
_NO_VALUE = object()


def audience() -> Audience:
    """Who reads the errors raised now: a caller of the library (the default) or a user of the command line."""
    return _AUDIENCE.get()


@contextmanager
def speaking_to(who: Audience) -> Iterator[None]:
    """Errors raised inside name options as `who` gives them (asyncio tasks started inside inherit it)."""
    token = _AUDIENCE.set(who)
    try:
        yield
    finally:
        _AUDIENCE.reset(token)


def option(name: str, value: object = _NO_VALUE) -> str:
    """The option `name` (the library's argument name) as the reader gives it: with no value, a switch turned on
    (`--resume` / `resume=True`); with one, the option given that value (`--limit 0` / `limit=0`, a list as
    `--datasets a,b` / `datasets=['a', 'b']`)."""
    if _AUDIENCE.get() == "command line":
        flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
        if value is _NO_VALUE:
            return flag
        return f"{flag} {','.join(map(str, value)) if isinstance(value, (list, tuple)) else value}"
    return f"{name}={True if value is _NO_VALUE else list(value) if isinstance(value, tuple) else value!r}"


def option_name(name: str) -> str:
    """The option `name` without a value: `--datasets` on the command line, `datasets` in the library."""
    return _FLAGS.get(name, "--" + name.replace("_", "-")) if _AUDIENCE.get() == "command line" else name


class LTMError(Exception):
    """Base of every error meant for users. The message is one sentence that says what to do.

    `fatal` marks an error no retry can fix (a wrong key, an unknown model): an agent that raises one on a
    turn is stopped at once instead of being retried turn after turn."""

    def __init__(self, message: str, *, fatal: bool = False, retry: bool = True) -> None:
        super().__init__(message)
        self.fatal = fatal
        self.retry = retry  # False: asking again gives the same error (a prompt longer than the model's context)


class ConfigError(LTMError):
    """A run config, command-line option or setting is wrong (or names something unknown)."""


class DefinitionError(LTMError):
    """What defines tests is wrong: dataset code, prompt files, definitions, syllabi, suites, environments."""


class AgentError(LTMError):
    """An agent spec is wrong, or the agent cannot be reached or used."""


class LLMError(LTMError):
    """An LLM endpoint failed or refused a call; the message names the endpoint, model and status."""


class RunFolderError(LTMError):
    """A results folder is missing, damaged, written by another version, in use by another process, or not
    writable."""


class RunFolderWriteError(RunFolderError):
    """A file of a results folder could not be written (a full disk, a read-only folder): nothing was left half
    written, and the run can be continued with `--resume` once the cause is fixed."""
