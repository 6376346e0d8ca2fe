"""Why tests have no score: errored and unscored results grouped by their cause, for the end of a run (terminal)
and the report, so that "199 unscored" comes with what to do about it.

    groups = group_causes(results)            # CauseGroup per (kind, cause), largest first
    for line in cause_lines(groups):          # one line per kind
        print(line)  # "199 unscored: judge gpt-4o-mini: ... answered HTTP 404: ... (199); rescore with --judge MODEL"

A result counts once per kind: `errored` (its status), `unscored` (its status is unscored, or a judge's verdict on
it could not be had while a rule still scored it: LoCoMo's J beside its F1). The cause is the result's reason line
that says why, shortened to what is the same for every result it struck (the advice after "; ", a quoted last reply).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Sequence

from ltm_harness._errors import option
from ltm_harness._guard.limits import cut_words
from ltm_harness._results.models import TestResult
from ltm_harness._scoring.verdict import NOT_JUDGED

Kind = Literal["errored", "unscored"]
MAX_CAUSE = 160  # characters of a cause as shown
MAX_CAUSES = 3  # causes named per line (the rest: "and N more causes")
_LAST_REPLY = re.compile(r";? last reply: .*$")


@dataclass(frozen=True)
class CauseGroup:
    """`count` results of `kind` struck by `cause`; `judge`: the cause is the judge's (a rescore with a judge mends
    it)."""

    kind: Kind
    cause: str
    count: int
    judge: bool


def _short(reason: str) -> str:
    """A reason as a cause: without "unscored: "/"not started: " and the advice after its first "; "."""
    text = _LAST_REPLY.sub("", reason)
    for prefix in ("unscored: ", "not started: "):
        text = text.removeprefix(prefix)
    text = text.split("; ")[0].strip()
    return cut_words(text, MAX_CAUSE)


def _cause(result: TestResult) -> tuple[Kind, str, bool] | None:
    """Why `result` has no score (or no verdict), or None when it has both."""
    judged = next((r for r in result.reasons if NOT_JUDGED in r), None)
    if result.status == "errored":
        return "errored", _short(result.reasons[0] if result.reasons else "no reason recorded"), False
    if judged is not None:
        return "unscored", _short(judged[judged.index(NOT_JUDGED) + len(NOT_JUDGED):]), True
    if result.status == "unscored":
        said = next((r for r in result.reasons if "unscored" in r), result.reasons[-1] if result.reasons else "")
        return "unscored", _short(said.split("unscored: ", 1)[-1] or "no reason recorded"), False
    return None


def group_causes(results: Sequence[TestResult]) -> list[CauseGroup]:
    """The errored and unscored results of `results`, grouped by (kind, cause), the largest group of each kind first
    (errored before unscored)."""
    counts: Counter[tuple[Kind, str, bool]] = Counter(c for r in results if (c := _cause(r)) is not None)
    groups = [CauseGroup(kind, cause, n, judge) for (kind, cause, judge), n in counts.items()]
    return sorted(groups, key=lambda g: (g.kind != "errored", -g.count, g.cause))


def hint(kind: Kind, judge: bool, command: str = "run") -> str | None:
    """What mends the results of a kind: errored tests are done again, verdicts a judge could not give are had by a
    rescore with a judge that answers."""
    if kind == "errored":
        return f"do them again with the same command and {option('retry_errored')}" if command == "run" else None
    return f"rescore with {option('judge', 'MODEL')}" if judge else None


def cause_lines(groups: Sequence[CauseGroup], command: str = "run") -> list[str]:
    """One line per kind: how many, each cause with its count (at most MAX_CAUSES named), and what mends them, e.g.
    `199 unscored: judge gpt-4o-mini: ... 404 ... (199); rescore with --judge MODEL`."""
    lines = []
    for kind in ("errored", "unscored"):
        mine = [g for g in groups if g.kind == kind]
        if not mine:
            continue
        named = ", ".join(f"{g.cause} ({g.count})" for g in mine[:MAX_CAUSES])
        more = len(mine) - MAX_CAUSES
        if more > 0:
            named += f", and {more} more cause{'s' if more != 1 else ''}"
        line = f"{sum(g.count for g in mine)} {kind}: {named}"
        fix = hint(kind, any(g.judge for g in mine), command)
        lines.append(line + (f"; {fix}" if fix else ""))
    return lines
