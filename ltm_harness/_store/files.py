"""Reading and writing files, each way once.

* `write_text` writes a whole file or nothing (a temporary file beside it, then a rename), so a crash leaves the
  previous version or none, never half of one. Every file a run writes whole goes through it.
* `writing(path)` turns a failed write (a full disk, a read-only folder) into one `RunFolderWriteError` line naming
  the file and the fix; every write, rename and removal in a run folder goes through it (event logs included).
* `read_run_file` reads a file the harness wrote (summaries, results, configs saved with a run): any problem is a
  `RunFolderError` saying which file and what to do; summaries are checked for their format version first.
* `read_user_json` reads a JSON file a user wrote (prompt files, judge prompts, stored sets): a problem is a
  `DefinitionError` naming the line and column.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ltm_harness._errors import DefinitionError, RunFolderError, RunFolderWriteError, option
from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import NotARegularFile, read_text
from ltm_harness._store.formats import check_summary_format

M = TypeVar("M", bound=BaseModel)


_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)
_NOT_READABLE = (errno.EACCES, errno.EPERM)


def write_failure(path: Path, exc: OSError) -> RunFolderWriteError:
    """One line for a file that could not be written: which, why, and what to do."""
    why = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = "free some disk space"
    elif exc.errno in _NOT_WRITABLE:
        fix = f"make {path.parent} writable (or give another results folder)"
    else:
        fix = "fix the cause"
    return RunFolderWriteError(f"cannot write {path}: {why}; {fix}, then continue with {option('resume')} (what was "
                               "written before is kept whole)")


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Writes to `path` inside this block: a failure (OSError) becomes one RunFolderWriteError line."""
    try:
        yield
    except OSError as exc:
        raise write_failure(path, exc) from None


def write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: a crash or a failed write (full disk, read-only folder: one
    RunFolderWriteError) leaves the previous file (or none), never half of one."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """`write_text` for bytes (a compressed file): whole or nothing."""
    tmp = path.with_name(f".{path.name}.tmp")
    with writing(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            raise


def write_model(path: Path, model: BaseModel) -> None:
    """A pydantic model as indented JSON, written whole or not at all."""
    write_text(path, model.model_dump_json(indent=2) + "\n")


def first_error(exc: ValidationError) -> str:
    """`field.path: message` of a validation error's first problem."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {str(err['msg']).removeprefix('Value error, ')}"


def read_run_json(path: Path) -> Any:
    """The parsed JSON of a file the harness wrote; any problem is one RunFolderError saying what to do."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise RunFolderError(f"{path} is missing: the run did not finish; finish it by resuming it "
                             f"({option('resume')}), or run it again") from None
    except NotARegularFile as exc:  # a FIFO, a device, a folder, or larger than any file this harness writes
        raise RunFolderError(f"cannot read {path}: {exc.strerror}, so not a file this harness wrote; run the run "
                             "again to rewrite it") from None
    except OSError as exc:
        fix = "check the file's permissions" if exc.errno in _NOT_READABLE else "fix the cause"
        raise RunFolderError(f"cannot read {path}: {exc.strerror or exc}; {fix}") from None
    except UnicodeDecodeError:
        raise RunFolderError(f"{path}: not a UTF-8 text file, so not a file this harness wrote; run the run again "
                             "to rewrite it") from None
    try:
        return jsonsafe.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFolderError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); run the run again to "
                             "rewrite it") from None
    except jsonsafe.TooDeep as exc:
        raise RunFolderError(f"{path}: JSON {exc}, so not a file this harness wrote; run the run again to rewrite "
                             "it") from None


def read_run_file(path: Path, model: type[M]) -> M:
    """A file the harness wrote, as `model`; a model with a `format` field (the summaries) has its format version
    checked first."""
    data = read_run_json(path)
    if "format" in model.model_fields:
        check_summary_format(path, data)
    return validate_run_data(path, data, model)


def validate_run_data(path: Path, data: Any, model: type[M]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RunFolderError(f"{path}: {first_error(exc)}; the file is damaged or from another version of the "
                             "harness, run the run again to rewrite it") from None


def read_user_json(path: Path) -> Any:
    """The parsed JSON of a file a user wrote; invalid JSON (or a file that is not UTF-8 text) is a DefinitionError
    naming the line and column, JSON nested too deeply is one too (OSError passes: a FIFO or device is refused
    before opening as an OSError)."""
    try:
        return jsonsafe.loads(read_text(path))
    except jsonsafe.TooDeep as exc:
        raise DefinitionError(f"{path}: JSON {exc}; fix the file") from None
    except json.JSONDecodeError as exc:
        raise DefinitionError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                              "fix the file") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file, so not JSON; give a JSON file") from None


def write_shared_text(path: Path, text: str) -> None:
    """Like `write_text`, for a file several processes may rewrite at the same time (the results index): each
    writes its own temporary file, so the file is always one whole version, the last one renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
