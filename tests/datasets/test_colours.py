import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

Colours = known_datasets()["colours"]


def make(seed=0, **params):
    return Colours(memory_span=1000, seed=seed, **params)


def test_generation_is_seeded():
    a, b, c = make(1).generate_examples(4), make(1).generate_examples(4), make(2).generate_examples(4)
    assert [e.model_dump() for e in a] == [e.model_dump() for e in b]
    assert [e.script for e in a] != [e.script for e in c]


def test_shape_and_params():
    ex = make(colour_changes=5).generate_examples(1)[0]
    assert len(ex.script) == 6 and ex.is_question == [False] * 5 + [True]
    assert ex.expected_responses == [ex.extra["stated"][-1]]
    assert [w.percentage_finished for w in ex.waits] == [18.0, 36.0, 54.0, 72.0, 90.0, 0.0]
    with pytest.raises(ValidationError):
        make(colour_change=2)
    with pytest.raises(ValidationError):
        make(colour_changes=0)


@pytest.mark.parametrize("reply, score", [
    ("Your favourite colour is Red.", 1),
    ("red", 1),
    ("It used to be Brown, then Cream, and now it's Red.", 1),  # history is fine if the latest comes last
    ("**Red**!", 1),
    ("Brown.", 0),  # an older colour
    ("Red, or maybe Cream.", 0),  # a rival named after it
    ("I don't know.", 0),
    ("Reddish", 0),  # not the word
    ("", 0),
])
def test_scoring(reply, score):
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": ["Brown", "Cream", "Red"]}})
    got, max_score, reasons = ds.evaluate_example(ex, ex.questions, [reply])
    assert (got, max_score) == (score, 1.0) and reasons


def test_rivals_are_the_test_s_own_colours():
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": ["Brown", "Red"]}})
    # Gold was never stated in this test, so naming it after Red is not a confusion.
    assert ds.evaluate_example(ex, ex.questions, ["Red, like gold."])[0] == 1.0
    # evaluate_correct alone (no example) treats every known colour as a rival.
    assert ds.evaluate_correct(ex.questions, ["Red, like gold."], ["Red"])[0] == 0.0


def test_oracle_answers_score_one():
    ds = make(3)
    for ex in ds.generate_examples(10):
        assert ds.evaluate_example(ex, ex.questions, ex.oracle_answers)[0] == 1.0


async def test_end_to_end(tmp_path):
    summary = await run_config(make_config(["colours"], span=1500, examples=3), tmp_path, ["oracle", "null", "retrieval"])
    score = {a.agent: a.benchmark_score for a in summary.agents}
    assert score["oracle"] == 1.0 and score["null"] == 0.0 and score["retrieval"] > 0.0
