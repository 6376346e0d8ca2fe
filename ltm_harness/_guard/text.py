"""Text at the boundary: lone surrogates (which no UTF-8 file can hold) replaced, spreadsheet formulas neutralised."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def sanitize(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate replaced by U+FFFD, and how many were replaced (0: `text` itself)."""
    if text.isascii():
        return text, 0
    out, n = _SURROGATE.subn(REPLACEMENT, text)
    return out, n


def csv_cell(value: object) -> object:
    """A value safe in a spreadsheet cell: text starting with =, +, -, @, tab or CR gets a leading `'`, as OWASP
    advises against formula injection (numbers stay numbers)."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
