"""A summary.json checked against the results.json beside it: what a report or the results index shows of an agent
comes from its results, never from a summary that says otherwise.

An agent's summary is derived from its results (`summarize_agent`); a summary edited afterwards (0.97 where the
results say 0.00), damaged, or holding numbers no result gives (NaN) would otherwise be shown beside statistics
computed from the results. `as_results_say` derives each dataset's numbers again from the results, as the run did
(the headline from the declaration the summary keeps, the dataset's own `metrics` as written: they need its code),
and returns the summary with those numbers, and a line naming what disagreed when the summary is of this version's
format (an older format's numbers follow older rules: they are replaced without a word).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ltm_harness._results.headline import DatasetHeadline, quote
from ltm_harness._results.models import (AgentSummary, DatasetSummary, TestResult, benchmark_score, ltm_score,
                                         summarize_datasets)
from ltm_harness._store.formats import RESULTS_FORMAT


def _requoted(written: DatasetSummary | None, results: list[TestResult]) -> DatasetHeadline | None:
    if written is None or written.headline is None:
        return None
    h, played = written.headline, written.headline.played
    return quote(h.spec, results, h.judged, played.conversations if played else None,
                 played.history_turns if played else 0)


def _numbers(d: DatasetSummary) -> Any:
    return d.model_dump(mode="json", exclude={"metrics"})


def _same(a: Any, b: Any) -> bool:
    """Equal JSON values, a NaN never equal to anything."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and not math.isnan(a)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b) and type(a) is type(b)


def as_results_say(summary: AgentSummary, results: Sequence[TestResult]) -> tuple[AgentSummary, str | None]:
    """`summary` with every number its results give taken from them, and what disagreed (None: nothing did, or the
    summary is of an older format)."""
    written = {d.dataset: d for d in summary.datasets}

    def metrics(name: str, rs: list[TestResult]) -> dict[str, float]:
        return dict(written[name].metrics or {}) if name in written else {}

    datasets = summarize_datasets(list(results), metrics, lambda name, rs: _requoted(written.get(name), rs))
    checked = summary.model_copy(update={
        "datasets": datasets, "benchmark_score": benchmark_score(datasets), "max_benchmark_score": len(datasets),
        "ltm_score": ltm_score(results, "gap"),
        "ltm_score_memory_distance": ltm_score(results, "memory_distance")
        if summary.ltm_score_memory_distance is not None else None})
    if summary.format != RESULTS_FORMAT:
        return checked, None
    differ = [d.dataset for d in datasets if d.dataset not in written or not _same(_numbers(d), _numbers(written[d.dataset]))]
    differ += sorted(set(written) - {d.dataset for d in datasets})
    for field in ("benchmark_score", "max_benchmark_score", "ltm_score", "ltm_score_memory_distance"):
        if not _same(getattr(checked, field), getattr(summary, field)):
            differ.append(field.replace("_", " "))
    if not differ:
        return checked, None
    return checked, (f"agent {summary.agent}: its summary.json disagrees with its results.json on "
                     f"{', '.join(dict.fromkeys(differ))}; shown as results.json gives them")
