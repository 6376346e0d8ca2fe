"""MemoryAgentBench's rule scores equal to the reference's (utils/eval_other_utils.py) on the same outputs: its
normalisation, EM / SubEM / F1 best over the golds, the "Answer:" parsing and the routing per family (parsed only for
ICL and EventQA, max(raw, parsed) elsewhere), Recall@5 with movie names snapped by edit distance; and where ours
differs on purpose (a gold that normalises to nothing, blank recommendation lines), the reference's with
`scoring: reference`. The vectors are REFERENCE.md 10.6's and the reference's own functions' behaviour."""

from __future__ import annotations

import pytest

from ltm_harness._interop.mab.recsys import Movies, clean_item, movie_name, recall_at, recommendation_items
from ltm_harness._interop.mab.scoring import best, exact_match, f1, normalize, parse_output, rule_score, substring_match


def test_normalise_deletes_punctuation_without_a_space_and_drops_articles():
    assert normalize("The Eiffel-Tower!") == "eiffeltower"
    assert normalize("label: 43") == "label 43"
    assert normalize("  An   apple,  a Pear and THE end ") == "apple pear and end"
    assert normalize("another theme") == "another theme"  # whole words only


def test_em_is_strict_and_subem_is_a_substring_of_the_normalised_output():
    assert not exact_match("label: 43", "43")
    assert exact_match("43.", "43")
    assert substring_match("It is in Paris, France.", "paris")
    assert not substring_match("Par is", "paris")
    assert substring_match("eiffeltower", "Eiffel-Tower")


def test_parse_output_takes_the_text_after_answer_else_the_first_line():
    assert parse_output("I think.\nAnswer: Paris") == "Paris"
    assert parse_output("Answer: Answer: Rome\nmore") == "Rome"
    assert parse_output("Lyon\nbecause ...") == "Lyon"
    assert parse_output("") == ""


def test_f1_is_zero_for_a_differing_yes_no_and_token_overlap_otherwise():
    assert f1("yes", "no") == 0.0
    assert f1("no", "no") == 1.0
    assert f1("the cat sat", "cat sat down") == pytest.approx(0.8)


def test_best_over_golds_and_the_routing_per_family():
    # max(raw, parsed): the raw output holds the gold though its first line does not
    r = rule_score("ruler_qa", "SubEM", "Let me think.\nThe answer is France", ["France", "France"], "ours")
    assert r.score == 1.0 and "raw output 1, parsed 0" in r.reason
    # ICL: the parsed output alone, EM: "label: 43" is not "43"
    assert rule_score("in_context_learning", "EM", "label: 43", ["43"], "ours").score == 0.0
    assert rule_score("in_context_learning", "EM", "43\nlabel: 43", ["43"], "ours").score == 1.0
    # EventQA: the parsed output alone (the gold only on line 2 does not count), recall over the raw output beside it
    e = rule_score("eventqa", "SubEM", "Hmm.\nHe leaves the city.", ["He leaves the city."], "ours")
    assert e.score == 0.0 and e.extra["eventqa_recall"] == 1.0
    # detective: EM, max(raw, parsed)
    assert rule_score("detective_qa", "EM", "Answer: C. The butler", ["C. The butler"], "ours").score == 1.0


def test_a_gold_that_normalises_to_nothing_is_compared_as_words_ours_and_counts_anything_in_the_references():
    assert normalize("A") == ""
    assert best("SubEM", "I choose B", ["A"], "reference") == 1.0  # the empty string is in every string
    assert best("SubEM", "I choose B", ["A"], "ours") == 0.0
    assert best("SubEM", "I choose a", ["A"], "ours") == 1.0
    assert best("EM", "A.", ["A"], "ours") == 1.0
    unscored = rule_score("ruler_qa", "SubEM", "whatever", ["?!"], "ours")
    assert unscored.score is None and "scoring: reference" in unscored.reason
    assert rule_score("ruler_qa", "SubEM", "whatever", ["?!"], "reference").score == 1.0


ENTITIES = {"<http://dbpedia.org/resource/The_Matrix_(1999)>": 1, "<http://dbpedia.org/resource/Alien_(1979)>": 2,
            "<http://dbpedia.org/resource/Heat_(1995)>": 3, "Toy_Story-2": 4, "<http://x/Up>": 5}


def test_movie_names_and_items_are_cleaned_as_the_reference_cleans_them():
    assert movie_name("<http://dbpedia.org/resource/The_Matrix_(1999)>") == "The Matrix"
    assert movie_name("Toy_Story-2") == "Toy Story 2"
    assert clean_item("3) Heat (1995)") == "Heat"
    assert clean_item("12. - Alien") == "Alien"
    assert recommendation_items("Sure:\n1. Heat\n2. Alien") == ["Heat", "Alien"]
    assert recommendation_items("Heat, Alien") == ["Heat", "Alien"]


def test_recall_at_5_snaps_each_item_to_the_nearest_name():
    movies = Movies.from_entity2id(ENTITIES)
    got = recall_at("1. The Matrx\n2. Aliens\n3. Toy Story 2", ["1", "4"], movies)
    assert not isinstance(got, str)
    recall, snapped, golds = got
    assert snapped[:3] == ["The Matrix", "Alien", "Toy Story 2"] and recall == {1: 0.5, 5: 1.0, 10: 1.0}
    assert recall_at("1. Heat", ["99"], movies) == "gold movie id 99 is not in entity2id.json"


def test_blank_lines_take_places_in_the_references_top_five_and_not_in_ours():
    movies = Movies.from_entity2id(ENTITIES)
    output = "1. Heat\n\n\n\n\n2. Alien"
    ours, theirs = recall_at(output, ["2"], movies), recall_at(output, ["2"], movies, reference=True)
    assert not isinstance(ours, str) and not isinstance(theirs, str)
    assert ours[0][5] == 1.0 and theirs[0][5] == 0.0  # four blank lines snapped to the nearest (shortest) name


# Vectors from a side-by-side check against the reference's own functions on ~30,000 generated cases (its
# normalisation, parsing, EM/SubEM/F1, routing, recommendation parsing and recall, chunking); the values are ours,
# where the two agree.

@pytest.mark.parametrize("text, expected", [
    ("Café-Crème!", "cafécrème"),  # only ASCII punctuation goes; accented letters stay
    ("STRASSE", "strasse"), ("Straße", "straße"),  # lower(), not casefold(): the two never meet
    ("“Paris”", "“paris”"), ("¿Qué?", "¿qué"),  # typographic quotes and ¿ are not ASCII punctuation
    ("U.S.A.", "usa"), ("rock-n-roll", "rocknroll"), ("the_end", "theend"), ("A-team", "ateam"), ("an-the", "anthe"),
    ("tab\there", "tab here"), ("nb\u00a0sp", "nb sp"),  # any whitespace collapses, a no-break space too
    ("zw\u200bsp", "zw\u200bsp"), ("ａｂｃ", "ａｂｃ"),  # a zero-width space is not whitespace; no NFKC
    ("an apple", "apple"), ("A  the\nan", ""),
])
def test_normalise_vectors(text, expected):
    assert normalize(text) == expected


@pytest.mark.parametrize("output, expected", [
    ("answer:Paris", "Paris"), ("Answer:", ""), ("Answer:\nParis", ""),  # the rest of the "Answer:" line only
    ("\nParis", ""), ("   Lyon  \nx", "Lyon"), ("Paris\r\nLyon", "Paris"),  # else the first line, stripped
    ("The answer: Paris", "Paris"), ("ANSWER: paris.\nAnswer: Lyon", "paris."),  # the first "Answer:", any case
    ("x Answer: y Answer: z", "y Answer: z"), ("Answer: Answer:Answer: x", "Answer: x"),  # one repeat dropped
    ("Answer:  answer: Rome", "Rome"), ("Answer\t: x", "Answer\t: x"), ("Answers: Oslo", "Answers: Oslo"),
])
def test_parse_output_vectors(output, expected):
    assert parse_output(output) == expected


def test_em_subem_f1_vectors():
    assert substring_match("“Paris”", "Paris") and not exact_match("“Paris”", "Paris")
    assert substring_match("theend", "the end")  # the gold's "end" inside a word counts, as in the reference
    assert not substring_match("Rock-n-Roll Hall", "rock n roll")  # "rocknroll" holds no "rock n roll"
    assert not exact_match("Straße", "STRASSE")
    assert f1("yes.", "Yes") == 1.0 and f1("yes it is", "yes") == 0.0 and f1("no", "noanswer") == 0.0
    assert f1("the the cat", "cat cat") == pytest.approx(2 / 3)  # token counts, articles gone first


def test_a_single_question_rows_golds_are_every_answer_of_the_row_flattened():
    from ltm_harness._interop.mab.rows import MabRow

    row = MabRow(split="Long_Range_Understanding", index=0, context="x", questions=["Summarise."],
                 answers=[["first summary", "alias"], ["second"]], metadata={"source": "infbench_sum_eng_shots2"})
    assert row.pairs() == [("Summarise.", ["first summary", "alias", "second"])]
    many = MabRow(split="Conflict_Resolution", index=0, context="x", questions=["q0", "q1"],
                  answers=[["a0"], ["a1", "b1"]], metadata={"source": "factconsolidation_sh_262k"})
    assert many.pairs() == [("q0", ["a0"]), ("q1", ["a1", "b1"])]
    # fact consolidation: max(raw, parsed); the parsed line alone holds the gold here
    assert rule_score("factconsolidation", "SubEM", "Based on fact 12\nAnswer: Vale.", ["vale"], "ours").score == 1.0
    # ICL: "label: 43" after "Answer:" is still not "43"
    assert rule_score("in_context_learning", "EM", "Answer: label: 43", ["43"], "ours").score == 0.0


@pytest.mark.parametrize("output, items", [
    ("Top picks: 21. Heat\n22. Alien", ["Heat", "Alien"]),  # "21." holds the first "1."
    ("1、Heat\n2、Alien", ["Heat", "Alien"]), ("1) Heat\n2) Alien", ["Heat", "Alien"]),  # no "1.": lines, numbers off
    ("1.Heat\n2.Alien", ["Heat", "Alien"]), ("1. 1. Heat", ["Heat"]),
    ("1. Heat (1995) (director's cut)\n2. ((Alien))", ["Heat", "()"]),  # innermost parentheses only
    ("Heat - 1995, Alien", ["Heat - 1995", "Alien"]), ("I suggest 2.1 Heat\n3. Alien", ["I suggest 2.1 Heat", "Alien"]),
])
def test_recommendation_item_vectors(output, items):
    assert recommendation_items(output) == items


def test_near_miss_and_unicode_movie_names_snap_as_the_references():
    movies = Movies.from_entity2id({**ENTITIES, "<http://dbpedia.org/resource/Amélie_(2001)>": 6,
                                    "<http://dbpedia.org/resource/The_Matrix_Reloaded>": 7, "Alien": 8})
    got = recall_at("1. Amelie\n2. The Matrix Reloadeds\n3. ALIENS (1986)\n4. Toy Story II", ["6", "7", "8", "2"], movies)
    assert not isinstance(got, str)
    recall, snapped, golds = got
    assert snapped == ["Amélie", "The Matrix Reloaded", "Alien", "Toy Story 2"]
    assert golds == ["Amélie", "The Matrix Reloaded", "Alien", "Alien"]  # two ids, one name: both found by it
    assert recall == {1: 0.25, 5: 1.0, 10: 1.0}
