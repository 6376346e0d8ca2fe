"""Reading and writing files, each way once.

* `write_text` writes a whole file or nothing (a temporary file beside it, then a rename), so a crash leaves the
  previous version or none, never half of one. Every file a run writes whole goes through it.
* `read_run_file` reads a file the harness wrote (summaries, results, configs saved with a run): any problem is a
  `RunFolderError` saying which file and what to do; summaries are checked for their format version first.
* `read_user_json` reads a JSON file a user wrote (prompt files, judge prompts, stored sets): a problem is a
  `DefinitionError` naming the line and column.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ltm_harness._errors import DefinitionError, RunFolderError
from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import read_text
from ltm_harness._store.formats import check_summary_format

M = TypeVar("M", bound=BaseModel)


def write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: a crash mid-write leaves the previous file (or none), never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
        raise RunFolderError(f"{path} is missing: the run did not finish; finish it with `run --resume` "
                             "(or run it again)") from None
    except OSError as exc:
        raise RunFolderError(f"cannot read {path}: {exc.strerror or exc}; check the file's permissions") from None
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
