"""MemoryAgentBench's rule scores, equal to the reference's (utils/eval_other_utils.py) on the same outputs:

* `normalize`: lower case, every ASCII punctuation character deleted (no space put in its place: "Eiffel-Tower"
  -> "eiffeltower"), the whole words a/an/the replaced by a space, whitespace collapsed;
* EM: the normalised texts are equal; SubEM: the normalised gold is in the normalised output; F1: token F1 (0 when
  either side is yes/no/noanswer and they differ); each the best over the accepted golds (`max` over the list);
* `parse_output`: the text after the first "Answer:" (any case) to the end of its line, else the first line,
  stripped, a repeated "Answer:" dropped;
* routing by the source's family: ICL, the parsed output alone (EM; "label: 43" is not "43"); EventQA, the parsed
  output alone (SubEM), with `eventqa_recall` (1 when every gold is in the raw output, case-insensitively) beside
  it; every other rule-scored family, each metric the larger of the raw and the parsed output's.

Where ours differs on purpose (`args: {scoring: reference}` gives the reference's arithmetic):

* a gold that normalises to nothing (the answer "A", all articles or punctuation): the reference's SubEM counts
  every output right (the empty string is in every string) and its EM only an empty output. Ours compares such a
  gold without dropping the articles (so "A" is the word "a") as whole words, and leaves a gold that is still
  empty out; a question with no gold left is unscored, never counted right.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

Scoring = Literal["ours", "reference"]
_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ANSWER = re.compile(r"(?:Answer:)(.*)(?:\n|$)", flags=re.IGNORECASE)
_FIRST_LINE = re.compile(r"(?:^)(.*)(?:\n|$)")
_PREFIX = re.compile(r"^Answer:", flags=re.IGNORECASE)


def strip_punctuation(text: str) -> str:
    return "".join(c for c in text.lower() if c not in _PUNCT)


def normalize(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", strip_punctuation(text)).split())


def parse_output(text: str) -> str:
    """The answer part of an output (module docstring)."""
    for pattern in (_ANSWER, _FIRST_LINE):
        found = pattern.search(text)
        if found:
            return _PREFIX.sub("", found[1].strip()).strip()
    return ""  # unreachable: the first-line pattern matches every string


def exact_match(prediction: str, gold: str) -> bool:
    return normalize(prediction) == normalize(gold)


def substring_match(prediction: str, gold: str) -> bool:
    return normalize(gold) in normalize(prediction)


def f1(prediction: str, gold: str) -> float:
    pred, truth = normalize(prediction), normalize(gold)
    special = {"yes", "no", "noanswer"}
    if (pred in special or truth in special) and pred != truth:
        return 0.0
    common = sum((Counter(pred.split()) & Counter(truth.split())).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred.split()), common / len(truth.split())
    return 2 * precision * recall / (precision + recall)


def _words_match(prediction: str, gold: str, whole: bool) -> bool:
    """Ours for a gold that normalises to nothing: compared with its articles kept, as whole words."""
    pred, truth = " ".join(strip_punctuation(prediction).split()), " ".join(strip_punctuation(gold).split())
    return pred == truth if whole else f" {truth} " in f" {pred} "


Rule = Literal["EM", "SubEM", "F1"]
_RULES: dict[Rule, Callable[[str, str], float]] = {
    "EM": lambda p, g: float(exact_match(p, g)), "SubEM": lambda p, g: float(substring_match(p, g)), "F1": f1}


def usable_golds(golds: Sequence[str], scoring: Scoring) -> list[str]:
    """The golds a rule compares with: all of them in the reference's arithmetic; ours leaves out a gold that is
    empty even with its articles kept."""
    if scoring == "reference":
        return list(golds)
    return [g for g in golds if normalize(g) or strip_punctuation(g).strip()]


def best(rule: Rule, prediction: str, golds: Sequence[str], scoring: Scoring) -> float:
    """The rule's best score over the golds (none: 0)."""
    scores = []
    for gold in usable_golds(golds, scoring):
        if scoring == "ours" and not normalize(gold) and rule != "F1":
            scores.append(float(_words_match(prediction, gold, whole=rule == "EM")))
        else:
            scores.append(_RULES[rule](prediction, gold))
    return max(scores, default=0.0)


@dataclass
class RuleScore:
    score: float | None  # None: unscored (no usable gold)
    reason: str
    extra: dict[str, float] = field(default_factory=dict)


def rule_score(family: str, rule: Rule, output: str, golds: Sequence[str], scoring: Scoring) -> RuleScore:
    """A question's score by the reference's routing (module docstring)."""
    if not usable_golds(golds, scoring):
        return RuleScore(None, f"unscored: no gold answer is left once normalised ({list(golds)[:3]!r}); the "
                               "reference's SubEM would count any output right (args: {scoring: reference})")
    parsed = parse_output(output)
    if family in ("in_context_learning", "eventqa"):
        score = best(rule, parsed, golds, scoring)
        out = RuleScore(score, f"{rule} {score:g} of the parsed output {_short(parsed)}")
        if family == "eventqa":
            recall = float(all(g.lower() in output.lower() for g in golds)) if golds else 0.0
            out.extra["eventqa_recall"] = recall
            out.reason += f"; eventqa_recall {recall:g}"
        return out
    raw, cut = best(rule, output, golds, scoring), best(rule, parsed, golds, scoring)
    return RuleScore(max(raw, cut), f"{rule} {max(raw, cut):g} (raw output {raw:g}, parsed {cut:g} of "
                                    f"{_short(parsed)})")


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[:n] + "...")
