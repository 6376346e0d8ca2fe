"""The GPT-generated datasets shipped in prompts/: valid prompt files, and stored sets that make sound tests.

Every prompts/*.json must load, and so must its examples file. Each stored set is checked for what makes it a
fair memory test: statements said, questions asked, and keywords (the offline scorer's evidence) that a right
reply holds and that were actually said (or, for how_to_think, that had to be worked out). The checker itself
is tested on broken sets, so each of its checks is known to fire.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._authoring.gpt_generated import (
    PROMPTS_DIR,
    GeneratedSet,
    examples_path,
    load_examples,
    load_prompt_file,
    prompt_files,
)
from ltm_harness._llm.counted import asked_count
from ltm_harness._scoring.rules import contains_phrase, normalize


@dataclass(frozen=True)
class Shape:
    content: tuple[int, int]  # inclusive range of content lines
    questions: tuple[int, int]
    recall: bool  # the keywords are facts that were said (not results that must be worked out)


SHIPPED = {
    "delayed_recall": Shape(content=(5, 5), questions=(5, 5), recall=True),
    "instruction_recall": Shape(content=(5, 7), questions=(3, 4), recall=True),  # intro + 4-6 steps
    "conflicting_personal_info": Shape(content=(4, 6), questions=(2, 3), recall=True),
    "how_to_think": Shape(content=(2, 6), questions=(2, 3), recall=False),
}
SETS_PER_FILE = 8
COMMON_WORDS = frozenset("a an and are at be but by for he i in is it me my no not of on or she the they to was "
                         "we yes you your".split())
# a line that changes an earlier personal fact says so with one of these
CORRECTION_CUES = ("actually", "now", "no longer", "anymore", "any more", "no more", "changed", "instead",
                   "correction", "update", "switched", "moved", "these days")


def _has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def _is_correction(line: str) -> bool:
    return any(contains_phrase(line, cue) for cue in CORRECTION_CUES)


def _first_said_in_correction(content: list[str], word: str) -> bool:
    """Whether the first line that says `word` is a later line correcting an earlier fact."""
    first = next((i for i, line in enumerate(content) if contains_phrase(line, word)), None)
    return first is not None and first > 0 and _is_correction(content[first])


def _names_in(question: str) -> list[str]:
    """Capitalised words of a question, other than its first word and "I": the names it refers to."""
    words = re.findall(r"[A-Za-z][\w'-]*", question)
    return [w for w in words[1:] if w[0].isupper() and w != "I"]


def set_problems(dataset: str, s: GeneratedSet) -> list[str]:
    """Everything wrong with one stored set of `dataset` ([] when it is a sound test)."""
    problems: list[str] = []
    content = " ".join(s.content)
    if not 1 <= len(s.content) <= 10:
        problems.append(f"{len(s.content)} content lines (1-10 allowed)")
    for i, line in enumerate(s.content):
        if "?" in line:
            problems.append(f"content line {i} is a question, not a statement")
    for i, q in enumerate(s.questions):
        if not q.rstrip().endswith("?"):
            problems.append(f"question {i} does not end with '?'")
    shape = SHIPPED.get(dataset)
    if shape is not None:
        lo, hi = shape.content
        if not lo <= len(s.content) <= hi:
            problems.append(f"{len(s.content)} content lines ({lo}-{hi} expected)")
        lo, hi = shape.questions
        if not lo <= len(s.questions) <= hi:
            problems.append(f"{len(s.questions)} questions ({lo}-{hi} expected)")
    if s.keywords is None:
        return problems + ["no keywords (offline scoring needs them)"]
    for i, (question, answer, words) in enumerate(zip(s.questions, s.answers, s.keywords)):
        if not 1 <= len(words) <= 3:
            problems.append(f"answer {i} has {len(words)} keywords (1-3 allowed)")
        for w in words:
            if normalize(w) in COMMON_WORDS:
                problems.append(f"keyword {w!r} of answer {i} is a common word")
            if not contains_phrase(answer, w):
                problems.append(f"keyword {w!r} is not in answer {i}")
        if shape is None:
            continue
        if dataset != "conflicting_personal_info" and not any(contains_phrase(content, n) for n in _names_in(question)):
            problems.append(f"question {i} names nothing from the content (it must name the world, device or setting)")
        if shape.recall:
            for w in words:
                if not contains_phrase(content, w):
                    problems.append(f"keyword {w!r} of answer {i} was never said in the content")
        else:
            for w in words:
                if _has_digit(w) and contains_phrase(content, w):
                    problems.append(f"result {w!r} of answer {i} is copied from the content, not worked out")
            if normalize(answer) in normalize(content):
                problems.append(f"answer {i} restates the content")
        if dataset == "conflicting_personal_info":
            if not (contains_phrase(question, "my") or contains_phrase(question, "I")):
                problems.append(f"question {i} is not in the user's voice")
            if not any(_first_said_in_correction(s.content, w) for w in words):
                problems.append(f"answer {i} is not a value the user changed (no keyword first said in a correction)")
    return problems


# ---- the shipped files ----

PROMPT_PATHS = prompt_files()


def test_the_four_datasets_are_shipped():
    assert set(SHIPPED) <= {p.stem for p in PROMPT_PATHS}
    assert all(p.parent == PROMPTS_DIR for p in PROMPT_PATHS)  # judge prompts (prompts/judge/) are not datasets


@pytest.mark.parametrize("path", PROMPT_PATHS, ids=lambda p: p.stem)
def test_prompt_file_and_examples_are_valid(path: Path):
    prompt = load_prompt_file(path)
    assert prompt.name in (None, path.stem)
    stored = examples_path(path, prompt)
    assert stored.is_file(), f"{path.name}: examples file {stored.name} is missing"
    examples = load_examples(stored)
    assert examples.sets and examples.generated_by
    for n, s in enumerate(examples.sets):
        assert set_problems(path.stem, s) == [], f"{stored.name} set {n}"
    # the sets have as many items as the prompts ask for, as `generate` demands of generated sets
    for field, text in (("content", prompt.content), ("questions", prompt.question), ("answers", prompt.answer)):
        wanted = asked_count(text)
        if wanted is not None:
            assert {len(getattr(s, field)) for s in examples.sets} == {wanted}, f"{path.name}: {field}"
    texts = [q for s in examples.sets for q in s.questions]
    assert len(texts) == len(set(texts)), f"{stored.name}: a question is repeated"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_dataset_details(name: str):
    path = PROMPTS_DIR / f"{name}.json"
    prompt = load_prompt_file(path)
    assert prompt.name == name and prompt.description and prompt.scoring == "judge"
    assert prompt.examples == f"{name}.examples.json"
    examples = load_examples(examples_path(path, prompt))
    assert "hand-written" in examples.generated_by
    assert len(examples.sets) >= SETS_PER_FILE
    first_lines = [s.content[0] for s in examples.sets]
    assert len(set(first_lines)) == len(first_lines)  # no set is stored twice


def test_delayed_recall_prompts_ask_for_five():
    prompt = load_prompt_file(PROMPTS_DIR / "delayed_recall.json")
    assert [asked_count(t) for t in (prompt.content, prompt.question, prompt.answer)] == [5, 5, 5]


@pytest.mark.parametrize("name", ["instruction_recall", "conflicting_personal_info", "how_to_think"])
def test_variable_length_prompts_name_no_fixed_count(name: str):
    # `generate` rejects output whose length differs from a count the prompt names; these vary by design
    prompt = load_prompt_file(PROMPTS_DIR / f"{name}.json")
    assert [asked_count(t) for t in (prompt.content, prompt.question, prompt.answer)] == [None, None, None]


# ---- the checker catches broken sets ----

GOOD_RECALL = GeneratedSet(
    content=["Let me tell you about the town of Brisk: its bell is called Old Tamsin.",
             "Brisk holds a fair every 44 days.",
             "The mayor of Brisk is a retired diver named Osk Pellamy.",
             "In Brisk, bread is baked with crushed blue thistle.",
             "The river through Brisk is called the Wendle."],
    questions=["What is the bell of Brisk called?", "How often does Brisk hold a fair?",
               "Who is the mayor of Brisk?", "What is the bread of Brisk baked with?",
               "What is the river through Brisk called?"],
    answers=["Old Tamsin.", "Every 44 days.", "Osk Pellamy, a retired diver.", "Crushed blue thistle.",
             "The Wendle."],
    keywords=[["Tamsin"], ["44"], ["Pellamy"], ["thistle"], ["Wendle"]],
)
GOOD_CONFLICT = GeneratedSet(
    content=["I'm Ola, I live in Lisbon and I work as a librarian.", "My dog is called Rex.",
             "Actually, I moved: I now live in Porto.", "And I switched jobs: I'm a ferry pilot these days."],
    questions=["Where do I live now?", "What is my job now?"],
    answers=["Porto.", "Ferry pilot."],
    keywords=[["Porto"], ["ferry"]],
)
GOOD_THINK = GeneratedSet(
    content=["In the land of Pell, 1 grob is 7 nits.", "So 2 grobs are 14 nits."],
    questions=["In Pell, how many nits are 3 grobs?", "In Pell, how many nits are 5 grobs?"],
    answers=["21 nits.", "35 nits."],
    keywords=[["21"], ["35"]],
)


def test_good_examples_pass():
    assert set_problems("delayed_recall", GOOD_RECALL) == []
    assert set_problems("conflicting_personal_info", GOOD_CONFLICT) == []
    assert set_problems("how_to_think", GOOD_THINK) == []


def _with(s: GeneratedSet, **changes: object) -> GeneratedSet:
    return GeneratedSet.model_validate({**s.model_dump(), **changes})


def _swap(s: GeneratedSet, field: str, index: int, value: object) -> GeneratedSet:
    """`s` with item `index` of `field` replaced by `value`."""
    items = list(getattr(s, field))
    items[index] = value
    return _with(s, **{field: items})


BROKEN = [
    ("delayed_recall", _swap(GOOD_RECALL, "content", 0, "Is the bell of Brisk called Old Tamsin?"),
     "content line 0 is a question"),
    ("delayed_recall", _swap(GOOD_RECALL, "questions", 0, "Name the bell of Brisk."), "question 0 does not end"),
    ("delayed_recall", _with(GOOD_RECALL, keywords=None), "no keywords"),
    ("delayed_recall", _swap(GOOD_RECALL, "keywords", 1, ["45"]), "keyword '45' is not in answer 1"),
    ("delayed_recall", _swap(_swap(GOOD_RECALL, "answers", 1, "Every 45 days."), "keywords", 1, ["45"]),
     "keyword '45' of answer 1 was never said"),
    ("delayed_recall", _swap(GOOD_RECALL, "keywords", 0, ["Tamsin", "the"]), "'the' of answer 0 is a common word"),
    ("delayed_recall", _swap(GOOD_RECALL, "keywords", 0, ["Tams"]), "keyword 'Tams' is not in answer 0"),  # whole words
    ("delayed_recall", _swap(GOOD_RECALL, "keywords", 0, ["Old", "Tamsin", "bell", "Brisk"]), "has 4 keywords"),
    ("delayed_recall", _swap(GOOD_RECALL, "questions", 0, "What is the bell called?"), "question 0 names nothing"),
    ("delayed_recall", _with(GOOD_RECALL, content=["Old Tamsin is a bell in Brisk."] * 11), "11 content lines (1-10"),
    ("delayed_recall", _with(GOOD_RECALL, content=GOOD_RECALL.content[:4]), "4 content lines (5-5 expected)"),
    ("instruction_recall", GOOD_RECALL, "5 questions (3-4 expected)"),
    ("conflicting_personal_info", _swap(_swap(GOOD_CONFLICT, "answers", 0, "Lisbon."), "keywords", 0, ["Lisbon"]),
     "answer 0 is not a value the user changed"),  # the old value
    ("conflicting_personal_info", _swap(GOOD_CONFLICT, "content", 0, "I live in Porto and I am a ferry pilot."),
     "answer 0 is not a value the user changed"),  # said from the start, never a change
    ("conflicting_personal_info", _swap(GOOD_CONFLICT, "questions", 0, "Where does the user live?"),
     "question 0 is not in the user's voice"),
    ("how_to_think", _swap(_swap(GOOD_THINK, "answers", 0, "14 nits."), "keywords", 0, ["14"]),
     "'14' of answer 0 is copied"),
    ("how_to_think", _swap(_swap(GOOD_THINK, "answers", 1, "So 2 grobs are 14 nits."), "keywords", 1, ["grobs"]),
     "answer 1 restates the content"),
    ("how_to_think", _swap(GOOD_THINK, "questions", 0, "How many nits are 3 grobs?"), "question 0 names nothing"),
]


@pytest.mark.parametrize("dataset, broken, complaint", BROKEN)
def test_checker_reports_broken_sets(dataset: str, broken: GeneratedSet, complaint: str):
    problems = set_problems(dataset, broken)
    assert any(complaint in p for p in problems), problems


def test_a_broken_prompt_file_is_refused(tmp_path: Path):
    data = json.loads((PROMPTS_DIR / "delayed_recall.json").read_text(encoding="utf-8"))
    data["questions"] = data.pop("question")  # misspelled field
    bad = tmp_path / "delayed_recall.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LTMError, match="question: Field required"):
        load_prompt_file(bad)


def test_a_broken_examples_file_is_refused(tmp_path: Path):
    data = json.loads((PROMPTS_DIR / "how_to_think.examples.json").read_text(encoding="utf-8"))
    data["sets"][0]["answers"].pop()  # one answer fewer than questions
    bad = tmp_path / "how_to_think.examples.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LTMError, match="one answer per question"):
        load_examples(bad)
