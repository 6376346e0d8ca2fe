"""A benchmark's results by label (category, question type) and its own named metrics, as text: what the terminal
tables, the report's page and its CSV/JSON tables say alike.

A dataset's summary holds a `breakdown` (one `LabelSummary` per label and value, e.g. category = temporal) and
`metrics` (name -> number, e.g. LoCoMo's "J (lenient judge, categories 1-4)"). Metrics whose name starts with
`data: ` count something in the benchmark's data file (e.g. LoCoMo's answers given as numbers, malformed evidence
ids), the same whatever the agent answered; they are shown apart from the agent's numbers.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ltm_harness._results.models import AgentSummary, DatasetSummary, LabelSummary
from ltm_harness._scoring.headline import Headline

DATA_PREFIX = "data: "  # a metric named so counts something in the data file, not in the agent's answers


def split_metrics(metrics: Mapping[str, float] | None) -> tuple[dict[str, float], dict[str, float]]:
    """The agent's numbers and the data file's counts, each in the order the dataset gives them."""
    own = {k: v for k, v in (metrics or {}).items() if not k.startswith(DATA_PREFIX)}
    data = {k: v for k, v in (metrics or {}).items() if k.startswith(DATA_PREFIX)}
    return own, data


def metric_text(value: float | None) -> str:
    """An agent's metric as shown: a share or score with two decimals, as every headline number ("1.00", "0.73", never
    "1"); a whole number above 1 as a count ("8", "1,540"); none as "-"."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value > 1 and value == int(value) else f"{value:.2f}"


def count_text(value: float | None) -> str:
    """A count in the data file as shown: a whole number (1,540), a fraction to three decimals; none as "-"."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.3f}".rstrip("0").rstrip(".")


def label_order(spec: Headline | None, label: str) -> list[str]:
    """The benchmark's own order of a label's values (LoCoMo's categories 1 to 5, BEAM's ten abilities), as its
    headline declares it (empty: none declared)."""
    return next((list(m.order) for m in (spec.metrics if spec is not None else []) if label in (m.per, m.by)), [])


def value_orders(summary: AgentSummary, judged: bool) -> dict[str, list[str]]:
    """Per dataset of an agent, its label values in the benchmark's own order (its headline's: LoCoMo's categories 1
    to 5, BEAM's ten abilities)."""
    return {d.dataset: [v for m in d.quoted(judged).spec.metrics if m.per or m.by for v in m.order]
            for d in summary.datasets}


def in_order(values: Iterable[str], order: Sequence[str]) -> list[str]:
    """`values` in `order` first, the others after in the order given."""
    found = list(dict.fromkeys(values))
    return [v for v in order if v in found] + [v for v in found if v not in order]


def by_label(breakdown: Iterable[LabelSummary], spec: Headline | None = None) -> dict[str, list[LabelSummary]]:
    """The breakdown grouped by label name (category, type, abstention), names in the order given, values in the
    benchmark's own order (`spec`: its headline), else in the order given."""
    out: dict[str, list[LabelSummary]] = {}
    for b in breakdown:
        out.setdefault(b.label, []).append(b)
    for label, found in out.items():
        rank = {v: i for i, v in enumerate(in_order((b.value for b in found), label_order(spec, label)))}
        found.sort(key=lambda b: rank[b.value])
    return out


def unscored_note(d: DatasetSummary, judged: bool) -> str | None:
    """What a reader must know when a dataset's results are partly unscored (None: all were scored), each cause said
    apart, e.g. "446 of 1,986 unscored (left out of the scores): 446 not answered in the imported file (see Imported
    answers)" or "412 of 500 unscored (...): run with --judge MODEL, or rescore the run with it"."""
    if not d.unscored:
        return None
    causes = []
    missing = d.not_answered or 0
    if missing:
        causes.append(f"{missing:,} not answered in the imported file (the publisher gave no answer to "
                      f"{'it' if missing == 1 else 'them'} that matched; see Imported answers)")
    rest = d.unscored - missing
    if rest and not judged:
        causes.append(f"{rest:,} need a judge: run with --judge MODEL, or rescore the run with it"
                      if missing else "run with --judge MODEL, or rescore the run with it")
    elif rest:
        causes.append(f"{rest:,} the judge gave no usable verdict (see their reasons)" if missing
                      else "the judge gave no usable verdict (see their reasons)")
    return f"{d.unscored:,} of {d.tests:,} unscored (left out of the scores): " + "; ".join(causes)
