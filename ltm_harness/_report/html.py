"""Small pieces of the report's HTML shared by its sections: escaping, numbers, score shading, breakable labels."""

from __future__ import annotations

from html import escape
from typing import Iterable, Sequence

from ltm_harness._results.marks import KINDS, LEGEND, Kind, Mark


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


def protocol_marks(marks: Sequence[Mark], under: bool = False) -> str:
    """An agent's protocol marks beside its number (ltm_harness/_results/marks.py), each saying for this agent what it
    means when hovered; "" for none. `under`: on a line of their own under the number (a narrow column)."""
    shown = "".join(f'<sup class="pmark" title="{esc(m.detail)}">{esc(m.kind)}</sup>' for m in marks)
    return f"<br>{shown}" if shown and under else shown


def marks_legend(kinds: Iterable[Kind]) -> str:
    """The legend of the protocol marks shown on a page ("" when none is)."""
    shown = set(kinds)
    if not shown:
        return ""
    return ('<p class="note legend-marks">Protocol marks: '
            + "; ".join(f'<sup class="pmark">{k}</sup> {esc(LEGEND[k])}' for k in KINDS if k in shown)
            + ". An agent with a mark is listed after the agents without one.</p>")
