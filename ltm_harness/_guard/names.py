"""Names that become parts of paths, and paths that must stay inside their folder.

A name (a dataset name, an example id) is 1 to `MAX_NAME` characters of a fixed safe alphabet: ASCII letters,
digits, space and `._-()[]{}=,+:@%#~!` (environment tests are named like `bandit(arms=3,probabilities=[0.2,0.8])`),
starting with a letter, digit, `_` or `(`: no path separator, no control character, never `.` or `..`. `inside`
resolves a path (symlinks followed) and refuses one that leaves its folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from ltm_harness._guard.limits import clip

MAX_NAME = 200
SAFE_NAME = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9 ._\-()\[\]{}=,+:@%#~!]*")
ALPHABET = "letters, digits, spaces and ._-()[]{}=,+:@%#~!"


class UnsafeName(ValueError):
    """A name that cannot be part of a path."""


class OutsideFolder(ValueError):
    """A path that leaves the folder it must stay in."""


def check_name(name: object, what: str) -> str:
    """`name` if it is safe as one part of a path, else UnsafeName saying what is wrong ("dataset name", ...)."""
    if not isinstance(name, str):
        raise UnsafeName(f"{what} {clip(name)} is not text")
    if not 1 <= len(name) <= MAX_NAME:
        raise UnsafeName(f"{what} {clip(name)} must be 1 to {MAX_NAME} characters long")
    if not SAFE_NAME.fullmatch(name) or name.endswith((" ", ".")):
        raise UnsafeName(f"{what} {clip(name)} may only hold {ALPHABET} (no '/' or '\\'), start with a letter, "
                         "digit, '_' or '(' and not end with '.' or a space")
    return name


def inside(folder: Path, path: Path) -> Path:
    """`path` resolved (symlinks followed), if it is `folder` or inside it; else OutsideFolder."""
    base = folder.resolve()
    resolved = path.resolve()
    if resolved != base and base not in resolved.parents:
        raise OutsideFolder(f"{path} is outside {folder}")
    return resolved
