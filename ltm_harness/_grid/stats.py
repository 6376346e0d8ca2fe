"""A study's statistics: every cell's means with their intervals (by question and by conversation), and the agents
of each (config, span, seed) compared in pairs on the questions they share (ltm_harness/_stats, laid out by
ltm_harness/_report/stats_section)."""

from __future__ import annotations

from typing import Sequence

from ltm_harness._grid.results import CellData
from ltm_harness._stats import Scored, Statistics, compute_statistics


def _label(cell: CellData) -> str:
    parts = [cell.agent] + ([cell.config] if cell.config else []) + \
        ([f"span {cell.span}"] if cell.span is not None else []) + [f"seed {cell.seed}"]
    return " · ".join(parts)


def study_statistics(cells: Sequence[CellData]) -> Statistics:
    """Intervals for every finished cell; pairs of agents among the cells that played the same tests (same config,
    span and seed)."""
    groups: dict[tuple[str | None, int | None, int], list[CellData]] = {}
    for cell in cells:
        groups.setdefault((cell.config, cell.span, cell.seed), []).append(cell)
    out = Statistics([], [], [])
    for group in groups.values():
        stats = compute_statistics([Scored(_label(c), c.cell_id, c.agent, c.results) for c in group])
        out.intervals += stats.intervals
        out.pairs += stats.pairs
        out.outcomes += stats.outcomes
    return out
