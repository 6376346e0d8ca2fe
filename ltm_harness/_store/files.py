"""Reading a user's JSON file into a pydantic model, with one-line errors that name the file and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ltm_harness._errors import DefinitionError


def read_json(path: Path) -> Any:
    """The parsed JSON of `path`; invalid JSON (or a file that is not UTF-8 text) is a DefinitionError naming the line
    and column (OSError passes)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DefinitionError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); fix the file") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file, so not JSON; give a JSON file") from None


def first_error(exc: ValidationError) -> str:
    """`field.path: message` of a validation error's first problem."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {str(err['msg']).removeprefix('Value error, ')}"
