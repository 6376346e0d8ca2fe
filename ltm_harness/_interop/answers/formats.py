"""Published answers files read into typed entries: one `ImportedAnswer` per answer, whatever its format.

* LoCoMo, mem0's evaluation results (`evaluation/results/...` in mem0's repository): one JSON object keyed by the
  conversation's index in locomo10.json ("0".."9"), each a list of `{question, answer, response, category,
  bleu_score, f1_score, llm_score}` (category a string; f1/bleu the publisher's own token scores, llm_score its
  judge's 0/1).
* LoCoMo, plain jsonl: one `{sample_id, question_index | question, response}` a line.
* LongMemEval: the jsonl its instructions ask for, `{question_id, hypothesis}` a line, and its evaluator's `.log`
  (the same lines with `autoeval_label`: `{model, label}` or a bare boolean), kept as the publisher's verdict.
* MemoryAgentBench: the output file its `main.py` writes per source (`{agent_config, dataset_config: {sub_dataset,
  ...}, data: [{output, query, answer, query_id, qa_pair_id, <metrics>}], averaged_metrics}`); `query_id` runs on
  over the source's rows in file order, so an answer is named `<sub_dataset>:<query_id>`; its `answer` (the golds
  it was scored with) is kept to check the match, its `f1` beside ours.

Anything else is one `ConfigError` line naming the file, the line or key, and what was expected. The file is
bounded (MAX_ANSWERS_BYTES, checked before it is opened) and so is each answer's text. A key given twice in one JSON
object (a mem0 conversation, or a field of one answer) makes its answers ambiguous: they are kept, marked `unusable`,
counted as duplicated and never used. A publisher's score that is not a number in [0, 1] is not kept as a score:
the answer says why (`invalid_scores`), and it is shown as invalid, never averaged.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ltm_harness._errors import ConfigError
from ltm_harness._guard.files import read_text
from ltm_harness._guard.jsonsafe import loads
from ltm_harness._guard.limits import clip

MAX_ANSWERS_BYTES = 64 * 1024 * 1024  # LoCoMo's 1,986 or LongMemEval's 500 answers take well under 10 MB
MAX_ANSWER_CHARS = 100_000  # one response; longer ones are refused, not cut
Format = Literal["mem0", "locomo-jsonl", "longmemeval-jsonl", "longmemeval-log", "mab-output"]
FORMAT_NAMES: dict[str, str] = {"mem0": "mem0's evaluation results (LoCoMo)", "locomo-jsonl": "LoCoMo jsonl",
                                "longmemeval-jsonl": "LongMemEval jsonl (question_id, hypothesis)",
                                "longmemeval-log": "LongMemEval evaluator's .log (with autoeval_label)",
                                "mab-output": "MemoryAgentBench's output file (main.py)"}


class ImportedAnswer(BaseModel):
    """One answer of the file, with where it is in the file (for the lists of unmatched and duplicated answers)."""

    where: str  # "line 12", "conversation 3, item 7"
    conversation: str | None = None  # LoCoMo: a sample id ("conv-26") or an index into the file ("#3")
    question_id: str | None = None  # LongMemEval
    question_index: int | None = None  # LoCoMo jsonl: the question's place in the sample's qa list
    question: str | None = None  # the question's text, when the file gives it
    golds: list[str] | None = None  # MemoryAgentBench: the gold answers the file was scored with (to check the match)
    response: str
    # the publisher's own scores, kept to compare with ours; never used as ours
    their_f1: float | None = None
    their_bleu: float | None = None
    their_judge: float | None = None  # mem0's llm_score, LongMemEval's autoeval_label (1 correct, 0 wrong)
    their_judge_model: str | None = None
    invalid_scores: list[str] = []  # the publisher's scores that are not in [0, 1] ("f1_score 1e+308"): not kept
    unusable: str | None = None  # why this answer is never used (a key given twice): counted as duplicated


class AnswersFile(BaseModel):
    path: str
    format: Format
    answers: list[ImportedAnswer]


def _fail(path: Path, where: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {where}: {problem}")


def _text(path: Path, where: str, item: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # LoCoMo writes a few answers as numbers
    if not isinstance(value, str):
        raise _fail(path, where, f"{key!r} must be text, not {clip(value)}")
    if len(value) > MAX_ANSWER_CHARS:
        raise _fail(path, where, f"{key!r} is longer than {MAX_ANSWER_CHARS:,} characters")
    return value


def _score(value: Any, key: str, invalid: list[str]) -> float | None:
    """A publisher's score: a number in [0, 1] (true/false as 1/0), else None, with what it was added to `invalid`."""
    if value is None:
        return None
    number = float(value) if isinstance(value, (bool, int, float)) else None
    if number is None or not math.isfinite(number) or not 0.0 <= number <= 1.0:
        invalid.append(f"{key} {clip(value, 40)}")
        return None
    return number


class _Repeated(dict):
    """A JSON object that gives a key more than once: the last value of each key, and every pair as given."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    def twice(self) -> list[str]:
        keys = [k for k, _ in self.pairs]
        return sorted({k for k in keys if keys.count(k) > 1})


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    return out if len(out) == len(pairs) else _Repeated(pairs)


def _twice(item: Any) -> str | None:
    if isinstance(item, _Repeated):
        return f"its object gives {', '.join(clip(k, 40) for k in item.twice())} more than once"
    return None


def _label(path: Path, where: str, value: Any) -> tuple[float | None, str | None]:
    """LongMemEval's `autoeval_label`: {"model": ..., "label": bool} or a bare bool."""
    if value is None:
        return None, None
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, dict) and isinstance(value.get("label"), bool):
        model = value.get("model")
        return float(value["label"]), model if isinstance(model, str) else None
    raise _fail(path, where, f"autoeval_label must be true/false or {{\"model\": ..., \"label\": true/false}}, "
                             f"not {clip(value)}")


def _lines(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = loads(line, object_pairs_hook=_pairs)
        except ValueError as exc:
            raise _fail(path, f"line {n}", f"not JSON ({exc}); give one JSON object a line") from None
        if not isinstance(item, dict):
            raise _fail(path, f"line {n}", f"expected a JSON object, found {clip(item)}")
        out.append((n, item))
    return out


_INDEX = re.compile(r"[0-9]{1,9}")  # a conversation's index in locomo10.json, in ASCII digits


def _mem0(path: Path, data: dict[str, Any]) -> list[ImportedAnswer]:
    answers = []
    pairs = data.pairs if isinstance(data, _Repeated) else list(data.items())
    keys = [k for k, _ in pairs]
    for key, items in pairs:
        if not _INDEX.fullmatch(key):
            raise _fail(path, f"key {clip(key, 40)}", "mem0's results are keyed by the conversation's index in "
                                                        "locomo10.json (\"0\" to \"9\")")
        if not isinstance(items, list):
            raise _fail(path, f"conversation {key}", f"expected a list of answers, found {clip(items)}")
        repeated = f"conversation {key} is given {keys.count(key)} times in the file" if keys.count(key) > 1 else None
        for i, item in enumerate(items):
            where = f"conversation {key}, item {i}"
            if not isinstance(item, dict):
                raise _fail(path, where, f"expected an object {{question, answer, response, category, ...}}, found {clip(item)}")
            invalid: list[str] = []
            answers.append(ImportedAnswer(where=where, conversation=f"#{int(key)}",
                                          question=_text(path, where, item, "question"),
                                          response=_text(path, where, item, "response") or "",
                                          their_f1=_score(item.get("f1_score"), "f1_score", invalid),
                                          their_bleu=_score(item.get("bleu_score"), "bleu_score", invalid),
                                          their_judge=_score(item.get("llm_score"), "llm_score", invalid),
                                          invalid_scores=invalid, unusable=repeated or _twice(item)))
    return answers


def _locomo_jsonl(path: Path, lines: list[tuple[int, dict[str, Any]]]) -> list[ImportedAnswer]:
    answers = []
    for n, item in lines:
        where = f"line {n}"
        sample = _text(path, where, item, "sample_id")
        index = item.get("question_index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise _fail(path, where, f"question_index must be a whole number from 0, not {clip(index)}")
        question = _text(path, where, item, "question", required=False)
        if index is None and question is None:
            raise _fail(path, where, "give the question's question_index (its place in the sample's qa list) or "
                                     "its text (question)")
        answers.append(ImportedAnswer(where=where, conversation=sample, question_index=index, question=question,
                                      response=_text(path, where, item, "response") or "", unusable=_twice(item)))
    return answers


def _longmemeval(path: Path, lines: list[tuple[int, dict[str, Any]]]) -> tuple[list[ImportedAnswer], bool]:
    answers, labelled = [], False
    for n, item in lines:
        where = f"line {n}"
        judged, model = _label(path, where, item.get("autoeval_label"))
        labelled = labelled or judged is not None
        answers.append(ImportedAnswer(where=where, question_id=_text(path, where, item, "question_id"),
                                      response=_text(path, where, item, "hypothesis") or "",
                                      their_judge=judged, their_judge_model=model, unusable=_twice(item)))
    return answers, labelled


def _mab(path: Path, text: str) -> list[ImportedAnswer]:
    try:
        data = loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc}); give the output file MemoryAgentBench's main.py writes") from None
    config = data.get("dataset_config") if isinstance(data, dict) else None
    source = config.get("sub_dataset") if isinstance(config, dict) else None
    if not isinstance(source, str) or not isinstance(data.get("data"), list):
        raise ConfigError(f"{path}: not MemoryAgentBench's output file (an object with dataset_config.sub_dataset and "
                          "a data list)")
    answers = []
    for i, item in enumerate(data["data"]):
        where = f"data[{i}]"
        if not isinstance(item, dict):
            raise _fail(path, where, f"expected an object {{output, query, query_id, ...}}, found {clip(item)}")
        index = item.get("query_id")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise _fail(path, where, f"query_id must be a whole number from 0, not {clip(index)}")
        invalid: list[str] = []
        answers.append(ImportedAnswer(where=where, conversation=source.strip(), question_id=f"{source.strip()}:{index}",
                                      question_index=index, question=_text(path, where, item, "query", required=False),
                                      response=_text(path, where, item, "output") or "",
                                      golds=_golds(item.get("answer")),
                                      their_f1=_score(item.get("f1"), "f1", invalid), invalid_scores=invalid,
                                      unusable=_twice(item)))
    return answers


def _golds(answer: Any) -> list[str] | None:
    """The reference's `answer` of a record as a flat list of strings: a list of golds, a row's list of lists (a
    single-question row), or one string (its resume path keeps only the first gold); None for anything else."""
    items = [answer] if isinstance(answer, str) else answer if isinstance(answer, list) else None
    if items is None:
        return None
    flat = [g for a in items for g in (a if isinstance(a, list) else [a])]
    return [str(g) for g in flat] if flat and all(isinstance(g, (str, int)) for g in flat) else None


def read_answers(path: Path, benchmark: Literal["locomo", "longmemeval", "memoryagentbench"]) -> AnswersFile:
    """The answers in `path`, in the format the file has (told from its content), for `benchmark`."""
    try:
        text = read_text(path, MAX_ANSWERS_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file; give the answers file to import") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"{path}: cannot read it ({reason}); give a UTF-8 JSON or jsonl file of at most "
                          f"{MAX_ANSWERS_BYTES:,} bytes") from None
    stripped = text.lstrip()
    if not stripped:
        raise ConfigError(f"{path}: the file is empty; give a file of answers")
    if benchmark == "memoryagentbench":
        return AnswersFile(path=str(path), format="mab-output", answers=_mab(path, text))
    if benchmark == "locomo":
        if stripped.startswith("{") and "\n{" not in stripped.strip():
            try:
                data = loads(text, object_pairs_hook=_pairs)
            except ValueError:
                data = None
            if isinstance(data, dict) and not {"sample_id", "response"} <= set(data):
                return AnswersFile(path=str(path), format="mem0", answers=_mem0(path, data))
        if stripped.startswith("["):
            raise ConfigError(f"{path}: a JSON list is not a LoCoMo answers format; give mem0's evaluation results "
                              "(an object keyed by conversation index) or jsonl lines {sample_id, question_index or "
                              "question, response}")
        lines = _lines(path, text)
        if lines and "response" not in lines[0][1]:
            raise _fail(path, f"line {lines[0][0]}", "no 'response': LoCoMo answers are mem0's evaluation results or "
                                                     "jsonl lines {sample_id, question_index or question, response}")
        return AnswersFile(path=str(path), format="locomo-jsonl", answers=_locomo_jsonl(path, lines))
    lines = _lines(path, text)
    if lines and "hypothesis" not in lines[0][1]:
        raise _fail(path, f"line {lines[0][0]}", "no 'hypothesis': LongMemEval answers are jsonl lines "
                                                 "{question_id, hypothesis} (or its evaluator's .log of them)")
    answers, labelled = _longmemeval(path, lines)
    return AnswersFile(path=str(path), format="longmemeval-log" if labelled else "longmemeval-jsonl", answers=answers)


def dumps_answers(answers: list[ImportedAnswer]) -> str:
    return json.dumps([a.model_dump(exclude_none=True) for a in answers], indent=1, ensure_ascii=False)
