"""GPT-generated datasets: a JSON prompt file in prompts/ is a dataset, with no Python written.

A prompt file (the user's format, plus optional fields):

    {"content": "<prompt for the facts>", "question": "<prompt for the questions>",
     "answer": "<prompt for the answers>",
     "name": "...", "description": "...", "examples": "<file of stored sets, relative to this one>",
     "scoring": "judge" | "keywords"}

`python -m ltm_harness generate prompts/X.json --model M -n K` asks an LLM for K sets of content,
questions and answers (as structured JSON), checks them, and appends them to the examples file. A
run draws its tests from the stored sets (seeded), so runs never call the generator. Each test says
the content lines, then asks the questions after the information gap.

Scoring: with a judge in the run, each answer is judged against the stored answer; without one (or
with "scoring": "keywords") an answer is right when it holds every keyword of the stored answer
(a set's `keywords`, or else the answer's own content words).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import read_text
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import DefinitionError, LTMError
from ltm_harness._authoring.example import TestExample
from ltm_harness._store.files import first_error, read_user_json
from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.rules import contains_phrase, word_overlap
from ltm_harness._scoring.verdict import Judge
from ltm_harness._resources import shipped

PROMPTS_DIR = shipped("prompts")
EXAMPLES_FORMAT = 1


class PromptFile(BaseModel):
    """prompts/<name>.json"""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="asks for the facts (said to the agent)")
    question: str = Field(min_length=1, description="asks for one question per fact")
    answer: str = Field(min_length=1, description="asks for the expected answer of each question")
    name: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")
    description: str = ""
    examples: str | None = None  # a JSON file of stored sets, relative to the prompt file
    scoring: Literal["judge", "keywords"] = "judge"


class GeneratedSet(BaseModel):
    """One generated test: content lines, then questions with their answers."""

    model_config = ConfigDict(extra="forbid")

    content: list[str] = Field(min_length=1)
    questions: list[str] = Field(min_length=1)
    answers: list[str] = Field(min_length=1)
    keywords: list[list[str]] | None = None  # per answer: words that must all be in a right reply

    @field_validator("content", "questions", "answers")
    @classmethod
    def _no_blank(cls, v: list[str]) -> list[str]:
        for i, text in enumerate(v):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"item {i} is empty")
        return v

    @model_validator(mode="after")
    def _counts(self) -> "GeneratedSet":
        if len(self.answers) != len(self.questions):
            raise ValueError(f"{len(self.questions)} questions but {len(self.answers)} answers; "
                             "there must be one answer per question")
        if self.keywords is not None:
            if len(self.keywords) != len(self.answers):
                raise ValueError(f"{len(self.answers)} answers but {len(self.keywords)} keyword lists")
            for i, words in enumerate(self.keywords):
                if not words or any(not w.strip() for w in words):
                    raise ValueError(f"keywords[{i}] must list at least one non-empty word")
        return self


class ExamplesFile(BaseModel):
    """The stored sets of a GPT-generated dataset (written by `generate`, or by hand)."""

    model_config = ConfigDict(extra="forbid")

    format: int = EXAMPLES_FORMAT
    generated_by: list[str] = Field(default_factory=list)  # models (or "hand-written") that made the sets
    sets: list[GeneratedSet] = Field(default_factory=list)


def load_prompt_file(path: Path) -> PromptFile:
    try:
        data: Any = read_user_json(path)
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read the prompt file ({exc.strerror or exc}); give the path of a prompt "
                        f"file, e.g. {PROMPTS_DIR.name}/delayed_recall.json") from None
    if not isinstance(data, dict):
        raise DefinitionError(f"{path}: a prompt file is a JSON object with content, question and answer; fix the file")
    try:
        return PromptFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        fix = {"extra_forbidden": "remove it or fix its spelling", "missing": "add it"}.get(err["type"], "fix the value")
        raise DefinitionError(f"{path}: {first_error(exc)}; {fix}") from None


def examples_path(prompt_path: Path, prompt: PromptFile) -> Path:
    return prompt_path.parent / (prompt.examples or f"{prompt_path.stem}.examples.json")


def load_examples(path: Path) -> ExamplesFile:
    if not path.exists():
        return ExamplesFile()
    try:
        data = read_user_json(path)
    except OSError as exc:  # a FIFO or device in its place is refused before opening
        raise DefinitionError(f"{path}: cannot read the stored sets ({exc.strerror or exc}); give a JSON file") from None
    try:
        examples = ExamplesFile.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(f"{path}: {first_error(exc)}; fix the file") from None
    if examples.format > EXAMPLES_FORMAT:
        raise DefinitionError(f"{path}: format {examples.format} is newer than this harness understands ({EXAMPLES_FORMAT}); "
                        "upgrade ltm-harness")
    return examples


def _looks_like_prompt_file(path: Path) -> bool:
    try:
        data = jsonsafe.loads(read_text(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and bool({"content", "question", "answer"} & data.keys())


def prompt_files(folder: Path = PROMPTS_DIR) -> list[Path]:
    """Dataset prompt files of a folder: in prompts/ every *.json but the stored sets (judge prompts live
    in prompts/judge/); in a user's dataset folder, the JSON objects with content/question/answer keys
    (so data files of other datasets may live beside them)."""
    candidates = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".examples.json"))
    if folder.resolve() == PROMPTS_DIR.resolve():
        return candidates
    return [p for p in candidates if _looks_like_prompt_file(p)]


def why_not_a_prompt_file(path: Path) -> str:
    """Why `prompt_files` passed over a JSON file of a user's folder (not JSON, or no prompt keys): one line
    naming the file and the fix, for a config that asks for the dataset this file was meant to be."""
    try:
        data = read_user_json(path)
    except LTMError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc}); check the file's permissions"
    if isinstance(data, dict) and {"content", "question", "answer"} & data.keys():
        other = data.get("name")
        return (f"{path}: its \"name\" makes it the dataset {other!r}; use that name in the config, or change "
                "\"name\"")
    return (f"{path}: not a prompt file (a JSON object with content, question and answer); fix the file, or set "
            "\"name\" in the prompt file that makes this dataset")


# -- the dataset -------------------------------------------------------------------------------------
MATCH = 0.8  # without keywords: share of the answer's words a right reply holds


class GPTGenerated(DatasetInterface):
    """Base of the datasets made from prompt files; `dataset_from_prompt_file` makes one class per file."""

    prompt_path: Path
    prompt: PromptFile

    def source_files(self) -> list[Path]:
        return [self.prompt_path, examples_path(self.prompt_path, self.prompt)]

    def stored_sets(self) -> list[GeneratedSet]:
        return load_examples(examples_path(self.prompt_path, self.prompt)).sets

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        sets = self.stored_sets()
        if not sets:
            raise DefinitionError(f"dataset {self.name!r}: {examples_path(self.prompt_path, self.prompt)} holds no test sets; "
                            f"make some with `python -m ltm_harness generate {self.prompt_path} --model MODEL -n 5`")
        order = self.rng.sample(range(len(sets)), len(sets))
        examples = []
        for i in range(num_examples):
            chosen = sets[order[i % len(sets)]]  # more tests than sets: sets repeat, in the same shuffled order
            script = chosen.content + chosen.questions
            examples.append(self.make_example(
                i, script, [False] * len(chosen.content) + [True] * len(chosen.questions), list(chosen.answers),
                oracle_answers=list(chosen.answers),
                extra={"keywords": chosen.keywords} if chosen.keywords else {},
            ))
        return examples

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        keywords: list[list[str]] | None = example.extra.get("keywords")
        score, reasons = 0.0, []
        for i, answer in enumerate(example.expected_responses):
            reply = responses[i] if i < len(responses) else ""
            if keywords:
                missing = [w for w in keywords[i] if not contains_phrase(reply, w)]
                if missing:
                    reasons.append(f"Question {i + 1}: the reply lacks {', '.join(repr(w) for w in missing)}.")
                else:
                    score += 1
                    reasons.append(f"Question {i + 1}: the reply holds {', '.join(repr(w) for w in keywords[i])}.")
            else:
                overlap = word_overlap(reply, str(answer))
                ok = overlap >= MATCH
                score += ok
                reasons.append(f"Question {i + 1}: word overlap with {answer!r} is {overlap:.2f}"
                               f" ({'>=' if ok else '<'} {MATCH}).")
        return score, float(len(example.expected_responses)), reasons

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        if judge is None or self.prompt.scoring == "keywords":
            return await super().evaluate_with_judge(example, questions, responses, None)
        answered = list(responses) + [""] * (len(example.expected_responses) - len(responses))
        return await self.evaluate_correct_gpt(judge, questions, answered, example.expected_responses)


def dataset_from_prompt_file(path: Path) -> type[GPTGenerated]:
    """The dataset class of a prompt file (its name: the file's `name`, else the file name)."""
    prompt = load_prompt_file(path)
    name = prompt.name or path.stem
    if not name.replace("_", "").isalnum():
        raise DefinitionError(f"{path}: the file name makes no dataset name; set \"name\" (lowercase letters, digits, _)")
    description = prompt.description or f"GPT-generated from {path.name}: facts, then questions about them."
    cls = type(f"GPTGenerated_{name}", (GPTGenerated,), {
        "name": name, "description": description, "prompt_path": path, "prompt": prompt,
        "__module__": __name__,
    })
    return cls
