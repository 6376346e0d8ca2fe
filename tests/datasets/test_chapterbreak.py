"""The chapterbreak dataset: a user-supplied data file (here a small synthetic one), the chapter read page by
page, the options late in the span, and the answer an option number."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._errors import LTMError
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import all_dataset_names, make_config, run_config
from ltm_harness._tokens import get_tokenizer
from ltm_harness._scoring.verdict import JudgeVerdict

ChapterBreak = known_datasets()["chapterbreak"]
mod = sys.modules[ChapterBreak.__module__]
count = get_tokenizer().count


class FakeJudge:
    model = "fake-judge"

    def __init__(self, score: float) -> None:
        self.score, self.calls = score, []

    async def grade(self, question, expected, response, *, context=""):
        self.calls.append((expected, context))
        return JudgeVerdict(question=question, score=self.score, reason="fake", model=self.model,
                            prompt_hash="0" * 16, raw="")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """A small file in ChapterBreak's format, with made-up text."""
    folder = tmp_path_factory.mktemp("chapterbreak")
    data = mod.synthetic_data(seed=1, books=2, chapters=2, ctx_tokens=2500, option_tokens=120)
    (folder / mod.DEFAULT_FILE).write_text(json.dumps(data))
    return folder


def dataset(data_dir: Path, **params) -> object:
    return ChapterBreak(memory_span=16000, seed=params.pop("seed", 0), data_dir=str(data_dir), **params)


def test_a_missing_file_says_how_to_get_it(tmp_path):
    with pytest.raises(LTMError) as err:
        ChapterBreak(data_dir=str(tmp_path)).generate_examples(1)
    message = str(err.value)
    assert str(tmp_path / "chapterbreak_ctx_8192.json") in message and "is missing" in message
    assert "github.com/SimengSun/ChapterBreak" in message and "data_dir" in message
    # The default location is inside the project; `config` (as AIQ tests name it) points elsewhere.
    assert ChapterBreak().data_path == Path(mod.__file__).parent / "data" / "chapterbreak" / mod.DEFAULT_FILE
    assert ChapterBreak(config=str(tmp_path)).data_path == tmp_path / mod.DEFAULT_FILE


def test_it_is_left_out_of_the_datasets_that_run_without_user_files():
    assert "chapterbreak" not in all_dataset_names() and "colours" in all_dataset_names()


@pytest.mark.parametrize("content, message", [
    ("not json", "not a JSON file"),
    (json.dumps({"pg19": {}}), "has no 'ao3' section"),
    (json.dumps({"ao3": {"b1": {"ctx": "x"}}}), "ao3.b1: must be a list"),
    (json.dumps({"ao3": {"b1": [{"ctx": "x", "pos": "y"}]}}), r"ao3.b1\[0\].negs: Field required"),
    (json.dumps({"ao3": {"b1": [{"ctx": "x", "pos": "y", "negs": ["z"] * 9}]}}), r"ao3.b1\[0\].negs"),
])
def test_malformed_files_are_reported_with_where(tmp_path, content, message):
    (tmp_path / mod.DEFAULT_FILE).write_text(content)
    with pytest.raises(LTMError, match=message):
        ChapterBreak(data_dir=str(tmp_path)).generate_examples(1)


def test_too_few_samples(data_dir):
    with pytest.raises(LTMError, match="has 4 samples but the config asks for 5"):
        dataset(data_dir).generate_examples(5)
    assert len(dataset(data_dir, split="all").generate_examples(8)) == 8


def test_params_are_validated():
    with pytest.raises(ValidationError):
        ChapterBreak(split="wiki")
    with pytest.raises(ValidationError):
        ChapterBreak(page_tokens=10)
    with pytest.raises(ValidationError):
        ChapterBreak(options_at=50)


def test_generated_examples(data_dir):
    raw = json.loads((data_dir / mod.DEFAULT_FILE).read_text())
    samples = {f"{b}_{i}": s for b, chapters in raw["ao3"].items() for i, s in enumerate(chapters)}
    ds = dataset(data_dir, page_tokens=500)
    examples = ds.generate_examples(4)
    assert sorted(e.extra["sample"] for e in examples) == sorted(samples)
    for ex in examples:
        sample = samples[ex.extra["sample"]]
        last_page = ex.extra["answer_line"]
        pages = ex.script[1:last_page + 1]
        assert all(p.startswith(f"Page {k} of {len(pages)}:\n\n") for k, p in enumerate(pages, start=1))
        texts = [p.split("\n\n", 1)[1] for p in pages]
        assert all(count(t) <= 500 for t in texts) and len(pages) >= 5
        assert " ".join(texts).split() == sample["ctx"].split()  # the whole chapter end, in order
        options = ex.script[last_page + 2:-1]
        assert ex.extra["options"] == len(options) == 6
        bodies = [o.split("\n\n", 1)[1] for o in options]
        assert sorted(bodies) == sorted([sample["pos"], *sample["negs"]])
        assert bodies[int(ex.expected_responses[0]) - 1] == sample["pos"]
        assert ex.oracle_answers == ex.expected_responses and ex.is_question == [False] * (len(ex.script) - 1) + [True]
        # The options come at 90% of the span; every other line follows at once.
        assert [w.percentage_finished for w in ex.waits] == [90.0 if i == last_page else 0.0 for i in range(len(ex.script))]
        assert ds.answer_statement_idx(ex) == (last_page, len(ex.script[last_page]))
    assert {e.expected_responses[0] for e in dataset(data_dir, split="all").generate_examples(8)} != {"1"}
    back_to_back = dataset(data_dir, options_at_percent=0).generate_examples(1)[0]
    assert all(w.is_empty for w in back_to_back.waits)
    assert [e.model_dump() for e in dataset(data_dir, seed=3).generate_examples(3)] == \
        [e.model_dump() for e in dataset(data_dir, seed=3).generate_examples(3)]


def test_a_sentence_longer_than_a_page_is_cut_between_words():
    long_sentence = " ".join(["word"] * 300) + "."
    pages = mod.split_pages(f"Short one. {long_sentence} Another short one.", 100)
    assert all(count(p) <= 100 for p in pages) and len(pages) >= 3
    assert " ".join(pages).split() == f"Short one. {long_sentence} Another short one.".split()


def test_answer_line_without_extra_is_found_from_the_options():
    ds = ChapterBreak()
    script = ["intro", "page 1", "page 2", "Now options.", "Option 1:\n\na", "Option 2:\n\nb", "Which?"]
    ex = ds.make_example(0, script, [False] * 6 + [True], ["2"])
    assert ds.answer_statement_idx(ex) == (2, len("page 2"))


@pytest.mark.parametrize("reply, expected, conclusive", [
    ("2", 1.0, True),
    ("Option 2.", 1.0, True),
    ("I think it is option two.", 1.0, True),
    ("**2**", 1.0, True),
    ("5", 0.0, True),
    ("Option 4, clearly.", 0.0, True),
    ("Either 2 or 5.", 0.0, False),
    ("The one where the captain opens the letter.", 0.0, False),
    ("I don't know.", 0.0, False),
])
def test_scoring(reply, expected, conclusive):
    s, max_score, reasons = ChapterBreak().evaluate_correct(["Which?"], [reply], ["2"])
    assert (s, max_score) == (expected, 1.0)
    assert ("Inconclusive" not in reasons[0]) == conclusive, reasons


async def test_the_judge_decides_only_replies_the_rules_cannot_read(data_dir):
    ds = dataset(data_dir)
    ex = ds.generate_examples(1)[0]
    right = ex.expected_responses[0]
    judge = FakeJudge(score=1.0)
    sure = await ds.evaluate_with_judge(ex, ["Which?"], [right], judge)
    assert sure.score == 1.0 and not judge.calls
    unsure = await ds.evaluate_with_judge(ex, ["Which?"], ["The one with the lantern."], judge)
    assert unsure.score == 1.0 and len(unsure.verdicts) == 1
    assert judge.calls[0][0] == f"Option {right}" and "numbered 1 to 6" in judge.calls[0][1]


async def test_a_run_scores_and_later_runs_need_no_file(tmp_path, data_dir):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / mod.DEFAULT_FILE).write_text((data_dir / mod.DEFAULT_FILE).read_text())
    cfg = make_config([{"name": "chapterbreak", "args": {"data_dir": str(folder)}}], span=16000, examples=2)
    summary = await run_config(cfg, tmp_path / "r", ["oracle", "null"])
    scores = {a.agent: a.datasets[0].score for a in summary.agents}
    assert scores == {"oracle": 1.0, "null": 0.0}
    (folder / mod.DEFAULT_FILE).unlink()
    again = await run_config(cfg, tmp_path / "r", ["oracle"])  # definitions reused: the file is not read
    assert again.agents[0].datasets[0].score == 1.0
