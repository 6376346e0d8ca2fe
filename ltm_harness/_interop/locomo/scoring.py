"""LoCoMo's reference QA scoring (snap-research/locomo, task_eval/evaluation.py), rule for rule, and how its
questions are asked.

Every answer is compared to the gold answer as a bag of words: both are normalised (commas dropped, lower case,
ASCII punctuation stripped, the words a/an/the/and dropped, spaces collapsed), every word Porter-stemmed (NLTK's
`PorterStemmer`, as the reference uses, so the numbers match it exactly; stems made once are kept between runs, see
`stems`), and scored by token F1. Per category:

* 1 multi-hop: prediction and gold are split on commas; the mean, over gold parts, of each part's best F1
  against any prediction part;
* 2 temporal, 4 single-hop: plain F1;
* 3 open-domain: plain F1 against the gold before its first ';';
* 5 adversarial: 1 if the response says "no information available" or "not mentioned" (any case), else 0.

The reference's number is the mean over all questions. Checked against the reference's own code on the published
file: 41,030 predictions (each gold answer, variants of it, other answers, turns of the conversation, the empty
answer) over its 1,986 questions score exactly the same.

The reference appends an instruction to temporal questions (answer with an approximate date, from the
conversation's dates), and offers adversarial questions as a choice whose right option is "Not mentioned in the
conversation"; `question_text` asks them in our own words to the same effect (see its docstring).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Callable, Literal

from ltm_harness._interop.locomo.data import (ADVERSARIAL, CATEGORY_NAMES, MULTI_HOP, OPEN_DOMAIN, TEMPORAL,
                                             LocomoQuestion)
from ltm_harness._interop.locomo.stems import memo

NOT_MENTIONED_PHRASES = ("no information available", "not mentioned")  # what the reference looks for, category 5

SHORT_ANSWER_HINT = "Answer in a few words, with the conversation's own words where you can."
TEMPORAL_HINT = ("Give an approximate date, worked out from the dates of the conversation's sessions (a day, a week "
                 "before or after a session's date, or a month and year).")
ADVERSARIAL_HINT = "If the conversation never says, answer \"Not mentioned in the conversation\"."

_PUNCTUATION = set(string.punctuation)  # ASCII only, as the reference: curly quotes and dashes stay
_DROPPED_WORDS = re.compile(r"\b(a|an|the|and)\b")


def normalize_answer(text: str) -> str:
    """The reference's normalisation: commas dropped, lower case, ASCII punctuation stripped, a/an/the/and
    dropped, whitespace collapsed."""
    text = "".join(ch for ch in text.replace(",", "").lower() if ch not in _PUNCTUATION)
    return " ".join(_DROPPED_WORDS.sub(" ", text).split())


def tokens(text: str, stem: Callable[[str], str] | None = None) -> list[str]:
    """The stemmed words of `text` after normalisation."""
    stem = stem or memo().stem
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """F1 of the stemmed word multisets; 0 when they share no word (an empty side included)."""
    stem = memo().stem
    pred, want = tokens(prediction, stem), tokens(gold, stem)
    same = sum((Counter(pred) & Counter(want)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(want)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: the mean over the gold's comma-separated parts of the best F1 against any part of the
    prediction."""
    parts = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in parts) for g in golds) / len(golds)


def says_not_mentioned(prediction: str) -> bool:
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in NOT_MENTIONED_PHRASES)


def score_answer(category: int, prediction: str, gold: str | None) -> float:
    """The reference's score (0..1) of `prediction` for a question of `category` whose gold answer is `gold`
    (None only for category 5, which does not use it)."""
    if category == ADVERSARIAL:
        return 1.0 if says_not_mentioned(prediction) else 0.0
    if category not in CATEGORY_NAMES:
        raise ValueError(f"LoCoMo has no question category {category}; categories are 1 to 5")
    if gold is None:
        raise ValueError(f"a category {category} question needs a gold answer to be scored")
    if category == MULTI_HOP:
        return multi_answer_f1(prediction, gold)
    if category == OPEN_DOMAIN:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)


def question_text(question: LocomoQuestion, *, not_mentioned_hint: Literal["adversarial", "all"] = "adversarial",
                  short_answer_hint: bool = True) -> str:
    """The question as the agent is asked it, with our wording of the reference's instructions.

    The reference asks every question for a short phrase in the conversation's words (F1 punishes long answers),
    adds the approximate-date instruction to temporal questions, and offers each adversarial question as a choice
    between "Not mentioned in the conversation" and the tempting wrong answer. The choice would show the agent
    the wrong answer (and that the question is adversarial); instead `ADVERSARIAL_HINT` names the phrase the
    scorer looks for. On adversarial questions only ("adversarial", as the reference singles them out), or on
    every question ("all": the hint then says nothing about the category, and the other categories can lose
    points to an agent that gives up too soon).
    """
    hints = [SHORT_ANSWER_HINT] if short_answer_hint else []
    if question.category == TEMPORAL:
        hints.append(TEMPORAL_HINT)
    if question.category == ADVERSARIAL or not_mentioned_hint == "all":
        hints.append(ADVERSARIAL_HINT)
    return " ".join([question.question.strip(), *hints])
