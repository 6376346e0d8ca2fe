"""The points of the score panels: each scored test of an agent, per dataset, with the token quantities it can be
drawn against (the x axis of a panel is a parameter, a `Quantity`).

The points come from the agent's summary (each dataset's `curve`, one `GapPoint` per scored test), or, for runs
written before summaries held curves, from its results through the same function that makes the curves.
"""

from __future__ import annotations

from dataclasses import dataclass

from ltm_harness._report.load import AgentData
from ltm_harness._results.models import GapPoint, gap_curve

MAX_POINTS = 2500  # test points drawn in a score panel; beyond this only the means per range of x are drawn


@dataclass(frozen=True)
class Quantity:
    """A per-test token quantity a score panel puts on its x axis: a field of `GapPoint`."""

    field: str  # the GapPoint field
    name: str  # for titles: "score against <name>"
    short: str  # for the small panels' titles: "<dataset>: score vs <short>"
    axis: str  # the x axis' caption
    missing: str  # said in a panel with no point

    def of(self, point: GapPoint) -> float | None:
        value = getattr(point, self.field, None)  # a field a later results format adds is used once it is there
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


GAP = Quantity("achieved_gap", "achieved information gap", "gap", "achieved information gap (tokens, log scale)",
               "no information gaps were measured")
MEMORY_DISTANCE = Quantity("memory_distance", "memory distance", "distance", "memory distance (tokens, log scale)",
                           "no memory distances were measured")
QUANTITIES = (GAP, MEMORY_DISTANCE)


def dataset_points(agent: AgentData) -> dict[str, list[GapPoint]]:
    """Dataset name -> the agent's scored tests of it as curve points (errored tests count 0, as in the scores)."""
    out: dict[str, list[GapPoint]] = {}
    for d in agent.summary.datasets:
        if d.curve:
            out[d.dataset] = list(d.curve)
        else:
            out[d.dataset] = gap_curve([r for r in agent.results if r.dataset == d.dataset])[0]
    return out


def label_points(agent: AgentData, dataset: str, by: str, value: str) -> dict[str, list[GapPoint]]:
    """Dataset name -> the agent's scored tests of it whose label `by` is `value` (e.g. category = temporal)."""
    return {dataset: gap_curve([r for r in agent.results if r.dataset == dataset and (r.labels or {}).get(by) == value])[0]}


def xy(points_by_dataset: dict[str, list[GapPoint]], quantity: Quantity,
       dataset: str | None = None) -> list[tuple[float, float, str]]:
    """(x, score, "dataset/id") of the points that have the quantity, of one dataset or (None) all of them."""
    out = []
    for name, points in sorted(points_by_dataset.items()):
        if dataset is not None and name != dataset:
            continue
        for p in points:
            x = quantity.of(p)
            if x is not None:
                out.append((x, p.score, f"{name}/{p.example_id}"))
    return out


def has_values(points_by_agent: list[dict[str, list[GapPoint]]], quantity: Quantity) -> bool:
    return any(quantity.of(p) is not None for by in points_by_agent for points in by.values() for p in points)
