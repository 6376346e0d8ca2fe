"""Small pieces of the report's HTML shared by its sections: escaping, numbers, score shading, breakable labels."""

from __future__ import annotations

from html import escape


def esc(value: object) -> str:
    """Any value as HTML text, quotes escaped too (safe in attributes)."""
    return escape(str(value), quote=True)


def num(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def score_class(value: float) -> str:
    """The CSS class that shades a cell by its score (s0 .. s10)."""
    return f"s{max(0, min(10, round(value * 10)))}"


def breakable(text: str) -> str:
    """An agent's label that may break after its separators (`·`, `:`, `/`, `_`, `@`), so narrow columns wrap it."""
    out = esc(text)
    for sep in ("·", ":", "/", "_", "@", "-"):
        out = out.replace(sep, sep + "<wbr>")
    return out
