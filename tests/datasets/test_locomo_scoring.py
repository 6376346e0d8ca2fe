"""LoCoMo's reference QA scoring against hand-worked cases of every rule: normalisation, Porter stemming, token F1,
category 1's comma parts, category 3's ';', numbers as answers, empty predictions, category 5's phrases; and the
questions as the agent is asked them."""

from __future__ import annotations

import pytest

from ltm_harness._interop.locomo.data import LocomoQuestion
from ltm_harness._interop.locomo.scoring import (ADVERSARIAL_HINT, SHORT_ANSWER_HINT, TEMPORAL_HINT, normalize_answer,
                                                 question_text, score_answer, token_f1, tokens)


@pytest.mark.parametrize("text, expected", [
    ("The cat, and a dog!", "cat dog"),  # comma, articles, "and", punctuation, case
    ("U.S.A.  in   2023", "usa in 2023"),
    ("Ada's band-mate", "adas bandmate"),
    ("Anderson and the Andes", "anderson andes"),  # only whole words are dropped
    ("Ada\u2019s \u201cbook\u201d", "ada\u2019s \u201cbook\u201d"),  # ASCII punctuation only, as the reference
])
def test_normalisation(text, expected):
    assert normalize_answer(text) == expected


def test_every_word_is_porter_stemmed():
    assert tokens("running marathons") == ["run", "marathon"]
    assert tokens("She adopted two cats") == ["she", "adopt", "two", "cat"]
    assert tokens("ran") == ["ran"]  # Porter does not know irregular verbs


@pytest.mark.parametrize("prediction, gold, expected", [
    ("adopting a cat", "adopted cats", 1.0),  # the same stems
    ("running marathons", "ran a marathon", 0.5),  # run/marathon vs ran/marathon: P = R = 1/2
    ("Pepper", "Pepper the cat", 2 / 3),  # P = 1, R = 1/2
    ("pepper pepper", "pepper", 2 / 3),  # a multiset: the second "pepper" is not matched; P = 1/2, R = 1
    ("May 7, 2023", "7 May 2023", 1.0),  # order does not matter
    ("rock and roll", "rock roll", 1.0),
    ("", "Pepper", 0.0), ("The.", "Pepper", 0.0), ("Pepper", "", 0.0),
])
def test_token_f1(prediction, gold, expected):
    assert token_f1(prediction, gold) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("prediction, gold, expected", [
    ("Paris, London", "london, paris, rome", 2 / 3),  # london 1, paris 1, rome 0
    ("Paris and London", "Paris, London", 2 / 3),  # one prediction part [paris, london] vs each gold part: 2/3
    ("Rome", "Paris, London", 0.0),
    ("", "Paris, London", 0.0),
])
def test_category_1_splits_on_commas(prediction, gold, expected):
    assert score_answer(1, prediction, gold) == pytest.approx(expected, abs=1e-12)


def test_the_worked_category_1_case():
    # gold part "sold two paintings at the market" -> sold two paint at market (5 tokens); best prediction part
    # "sold two at the market" -> sold two at market (4 tokens): 4 shared, P = 1, R = 4/5, F1 = 8/9.
    # gold part "painted a sunset" -> paint sunset; prediction part "painted a sunset": F1 = 1. Mean: (8/9 + 1) / 2.
    assert score_answer(1, "painted a sunset, sold two at the market",
                        "sold two paintings at the market, painted a sunset") == pytest.approx(17 / 18, abs=1e-12)


def test_categories_2_and_4_use_plain_f1_and_ignore_commas():
    assert score_answer(4, "Paris and London", "Paris, London") == 1.0  # commas are dropped, not split on
    assert score_answer(2, "in June 2023", "June, 2023") == pytest.approx(0.8)  # in/june/2023 vs june/2023
    assert score_answer(2, "The week before 9 June 2023", "the week before 9 June, 2023") == 1.0


def test_category_3_keeps_the_gold_before_its_first_semicolon():
    gold = "Likely yes; she ran a half marathon in Lisbon"
    assert tokens("Likely yes") == ["like", "ye"] and tokens("yes") == ["ye"]
    assert score_answer(3, "yes", gold) == pytest.approx(2 / 3)  # ye vs like/ye: P = 1, R = 1/2
    assert score_answer(3, "she ran a half marathon in Lisbon", gold) == 0.0  # the part after ';' does not count
    assert score_answer(4, "she ran a half marathon in Lisbon", gold) > 0.5  # category 4 would have counted it


def test_numbers_given_as_answers_are_scored_as_their_text():
    assert score_answer(4, "2 hours", "2") == pytest.approx(2 / 3)  # the reader turned the int 2 into "2"
    assert score_answer(2, "2022", "2022") == 1.0


@pytest.mark.parametrize("prediction, expected", [
    ("Not mentioned in the conversation.", 1.0),
    ("NO INFORMATION AVAILABLE", 1.0),
    ("That was not mentioned, sorry.", 1.0),
    ("It isn't mentioned", 0.0),  # only the reference's two phrases count
    ("The conversation did not mention it", 0.0),
    ("Pepper", 0.0),
    ("", 0.0),
])
def test_category_5_counts_the_reference_phrases(prediction, expected):
    assert score_answer(5, prediction, None) == expected
    assert score_answer(5, prediction, "No") == expected  # a gold answer, when there is one, is not used


def test_what_cannot_be_scored_is_an_error():
    with pytest.raises(ValueError, match="no question category 6"):
        score_answer(6, "x", "x")
    with pytest.raises(ValueError, match="category 1 question needs a gold answer"):
        score_answer(1, "x", None)


def question(category: int) -> LocomoQuestion:
    return LocomoQuestion(index=0, question=" When did Ada move? ", answer=None if category == 5 else "May 2023",
                          adversarial_answer="June" if category == 5 else None, evidence=["D1:1"], category=category)


def test_questions_are_asked_with_our_wording_of_the_reference_instructions():
    assert question_text(question(4)) == f"When did Ada move? {SHORT_ANSWER_HINT}"
    assert question_text(question(2)) == f"When did Ada move? {SHORT_ANSWER_HINT} {TEMPORAL_HINT}"
    assert question_text(question(5)) == f"When did Ada move? {SHORT_ANSWER_HINT} {ADVERSARIAL_HINT}"
    assert question_text(question(4), not_mentioned_hint="all", short_answer_hint=False) == \
        f"When did Ada move? {ADVERSARIAL_HINT}"
    assert "June" not in question_text(question(5))  # never the tempting wrong answer
    assert score_answer(5, "Not mentioned in the conversation", None) == 1.0  # what the hint asks for scores
    assert '"Not mentioned in the conversation"' in ADVERSARIAL_HINT
