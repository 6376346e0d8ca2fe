"""Errors meant for users: one clear sentence naming the file or field and the fix, shown without a traceback.

Every error the harness raises for a user to act on is an `LTMError`; the subclass says what is wrong, so
callers branch on the type, never on the message:

* `ConfigError`: a run config, a command-line option or a setting (and an unknown name in one of them);
* `DefinitionError`: what defines tests: dataset code, prompt files, definitions on disk, syllabi, suites,
  environments, imported reference tests;
* `AgentError`: an agent spec, or an agent that cannot be reached or used;
* `LLMError`: an LLM endpoint (agents, the judge, generation, test programs);
* `RunFolderError`: a results folder: missing, damaged, from another version, in use, or not writable.
"""

from __future__ import annotations


class LTMError(Exception):
    """Base of every error meant for users. The message is one sentence that says what to do.

    `fatal` marks an error no retry can fix (a wrong key, an unknown model): an agent that raises one on a
    turn is stopped at once instead of being retried turn after turn."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


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
