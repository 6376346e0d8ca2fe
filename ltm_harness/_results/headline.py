"""Each benchmark's own headline: the metrics it is quoted by, declared by its dataset, computed here alone.

A dataset declares a `Headline` (ltm_harness/_scoring/headline.py; a class attribute of its `DatasetInterface`): the
metrics, named as the benchmark names them ("F1", "accuracy"), each a plain description of how it aggregates
per-question results:

* `of`: the rule's score of each result (normalised 0..1, an errored result counting 0) or the judge's verdict
  (the share judged correct, over the results that have a verdict);
* `where` / `unless`: only the results whose labels have (or have not) these values (LongMemEval's abstention
  questions; LoCoMo's categories 1-4);
* `by`: the unweighted mean of the means per value of a label (LongMemEval's task-averaged accuracy over its
  types, BEAM's mean of its ten abilities), each value's mean over its own results; None ("-") when any value the
  results hold has no mean (an average of ten abilities is not quoted over the one a rule could decide);
* `per`: one metric per value of a label, named "<name> · <value>" (F1 per LoCoMo category, accuracy per type).

The declaration is data (pydantic), written into each dataset's summary, so that a report, `compare` or a study
recomputes the same metrics from results.json (over the questions scored for every agent compared, for instance)
without the dataset's code. A mean over no scored result is None (shown "-", written null), never 0; every value
carries how many results it averages (`scored`) of how many it is about (`tests`).
"""

from __future__ import annotations

import statistics
from typing import Iterable, Mapping, Sequence

from pydantic import BaseModel

from ltm_harness._scoring.headline import Basis, Headline, HeadlineResult, Metric
from ltm_harness._tokens import plural

class MetricValue(BaseModel):
    """A metric's value over a set of results: None when none of them was scored."""

    name: str
    value: float | None
    scored: int  # results it averages
    tests: int  # results it is about


class Played(BaseModel):
    """What a dataset's run played: its tests (or conversations) and the history taken in without a reply."""

    conversations: int | None = None  # tests that are conversations of their own (None: the tests share one)
    history_turns: int = 0  # turns of history that needed no reply
    questions: int = 0  # results


class DatasetHeadline(BaseModel):
    """A dataset's headline as written in its summary: the declaration, whether the run was judged, the values."""

    spec: Headline
    judged: bool
    values: list[MetricValue]
    played: Played | None = None


def quote(headline: Headline, results: Sequence[HeadlineResult], judged: bool, conversations: int | None,
          history_turns: int) -> DatasetHeadline:
    """A dataset's headline over one agent's results of it, and what was played (`conversations`: its tests when each
    is a conversation of its own, else None)."""
    played = Played(conversations=conversations, history_turns=history_turns, questions=len(results))
    return DatasetHeadline(spec=headline, judged=judged, values=evaluate(headline, results, judged), played=played)


def _matches(metric: Metric, labels: Mapping[str, str]) -> bool:
    return (all(labels.get(k) == v for k, v in metric.where.items())
            and not any(labels.get(k) in vs for k, vs in metric.unless.items()))


def decided(r: HeadlineResult, of: Basis) -> bool:
    """The result counts in a metric on `of`: scored by the rule (errored counting 0), or given a verdict."""
    if of == "verdict":
        return r.status == "ok" and bool(r.verdicts)
    return r.status != "unscored"


def _value(r: HeadlineResult, of: Basis) -> float:
    if of == "verdict":
        return 1.0 if r.verdicts[0].score >= 1.0 else 0.0
    return r.score / r.max_score if r.status == "ok" and r.max_score > 0 else 0.0


def _mean(name: str, of: Basis, results: Sequence[HeadlineResult]) -> MetricValue:
    values = [_value(r, of) for r in results if decided(r, of)]
    return MetricValue(name=name, value=statistics.fmean(values) if values else None, scored=len(values),
                       tests=len(results))


def _nested(name: str, of: Basis, results: Sequence[HeadlineResult], labels: Sequence[str]) -> MetricValue:
    """The mean of `results`, or with `labels` the unweighted mean of the nested means per value of the first
    label (None when any value has none); results without the label are left out of a nested mean."""
    if not labels:
        return _mean(name, of, results)
    label, rest = labels[0], labels[1:]
    means = [_nested("", of, [r for r in results if (r.labels or {}).get(label) == v], rest)
             for v in _values_of(label, results)]
    whole = bool(means) and all(m.value is not None for m in means)
    return MetricValue(name=name, value=statistics.fmean(m.value for m in means if m.value is not None)
                       if whole else None, scored=sum(m.scored for m in means), tests=len(results))


def _values_of(label: str, results: Iterable[HeadlineResult], order: Sequence[str] = ()) -> list[str]:
    found = list(dict.fromkeys(v for r in results if (v := (r.labels or {}).get(label)) is not None))
    return [v for v in order if v in found] + [v for v in found if v not in order]


def metric_name(headline: Headline, metric: Metric, judged: bool) -> str:
    """The metric's name as shown: "accuracy (rule-decided)" for a score metric of an unjudged run that needs one."""
    if headline.unjudged and not judged and metric.of == "score":
        return f"{metric.name} ({headline.unjudged})"
    return metric.name


def evaluate(headline: Headline, results: Sequence[HeadlineResult], judged: bool,
             only: Mapping[Basis, set[str]] | None = None) -> list[MetricValue]:
    """The headline's values over `results` (one dataset's, one agent's); `only`: per basis, the example ids to
    count (the results scored for every agent compared), the others left out of both counts."""
    out: list[MetricValue] = []
    for metric in headline.metrics:
        if metric.of == "verdict" and not judged:
            continue  # a judge's number, in a run without one: absent, not "-"
        matching = [r for r in results if _matches(metric, r.labels or {})]
        chosen = [r for r in matching if only is None or r.example_id in only.get(metric.of, set())]
        name = metric_name(headline, metric, judged)
        if metric.per is not None:  # every value the results have, even one with nothing compared ("-")
            for value in _values_of(metric.per, matching, metric.order):
                group = [r for r in chosen if (r.labels or {}).get(metric.per) == value]
                out.append(_nested(f"{name} · {value}", metric.of, group, metric.within))
        elif metric.by is not None:  # a mean of every value's mean: none when any value the results have has none
            means = [_nested("", metric.of, [r for r in chosen if (r.labels or {}).get(metric.by) == v], metric.within)
                     for v in _values_of(metric.by, matching, metric.order)]
            whole = bool(means) and all(m.value is not None for m in means)
            out.append(MetricValue(name=name, value=statistics.fmean(m.value for m in means if m.value is not None)
                                   if whole else None, scored=sum(m.scored for m in means), tests=len(chosen)))
        else:
            out.append(_mean(name, metric.of, chosen))
    return out


def common_ids(results_by_agent: Sequence[Sequence[HeadlineResult]]) -> dict[Basis, set[str]]:
    """Per basis, the example ids counted for every agent given (for a comparison on the same questions)."""
    out: dict[Basis, set[str]] = {}
    for of in ("score", "verdict"):
        sets = [{r.example_id for r in rs if decided(r, of)} for rs in results_by_agent]
        out[of] = set.intersection(*sets) if sets else set()
    return out


def count_word(headline: Headline, judged: bool) -> str:
    return "decided" if headline.unjudged and not judged else "scored"


def value_text(v: MetricValue | None, word: str = "scored", digits: int = 2) -> str:
    """A value as a cell: "-" for none, "0.82" over all its results, "0.82 (412 of 500 scored)" over a subset."""
    if v is None or v.value is None:
        return "-"
    text = f"{v.value:.{digits}f}"
    return text if v.scored >= v.tests else f"{text} ({v.scored:,} of {v.tests:,} {word})"


def played_text(p: Played, headline: Headline) -> str:
    """What was played, e.g. "10 conversations, 5,882 history turns, 1,986 questions"."""
    parts = []
    if p.conversations is not None and headline.conversation is not None:
        parts.append(plural(p.conversations, headline.conversation))
    if p.history_turns:
        parts.append(plural(p.history_turns, "history turn"))
    parts.append(plural(p.questions, headline.question))
    return ", ".join(parts)




def compare(headline: Headline, judged: bool, results_by_agent: Sequence[Sequence[HeadlineResult]]
            ) -> tuple[list[list[MetricValue]], dict[Basis, int]]:
    """Each agent's values over the results counted for every agent given (the same questions for all), and how many
    those are per basis."""
    only = common_ids(results_by_agent)
    return [evaluate(headline, rs, judged, only) for rs in results_by_agent], {b: len(s) for b, s in only.items()}
