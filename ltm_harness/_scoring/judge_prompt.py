"""What a judge prompt is and how a judge's reply to it is read (the LLM call itself: ltm_harness._llm.judge).

* A prompt is a system message (may be empty: the user message is sent alone) and a user template with
  {question}, {expected}, {response} and optionally {context}; its hash (`sha`) is stored with every verdict.
* The verdict is a JSON object parsed with pydantic (`score` 0..1 and `reason`; `correct: true/false` is accepted
  for score 1/0), or, for a prompt with `verdict: yes_no` (benchmarks whose judge answers yes or no, e.g.
  LongMemEval's), "yes" anywhere in the lower-cased reply (1) or the word "no" (0); anything else is unparseable
  (ValueError), never a silent 0.
* A prompt may cap the judge's reply (`max_tokens`) and fix its temperature (a benchmark's own judge settings).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ltm_harness._scoring.rules import extract_json


class JudgePrompt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    system: str = ""  # empty: the user message is sent alone
    user: str
    parse_attempts: int = Field(default=3, ge=1, le=10)
    verdict: Literal["json", "yes_no"] = "json"  # how the judge's reply is read (module docstring)
    max_tokens: int | None = Field(default=None, ge=1, le=100_000)  # the judge's reply at most
    temperature: float | None = Field(default=None, ge=0, le=2)  # None: the run's (config.judge.temperature)

    @model_validator(mode="after")
    def _placeholders(self) -> "JudgePrompt":
        for field in ("{question}", "{expected}", "{response}"):
            if field not in self.user:
                raise ValueError(f"the user template must contain {field}")
        try:
            self.user.format(question="", expected="", response="", context="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"the user template has a stray brace or unknown field ({exc}); write literal braces as {{{{ }}}}") from None
        return self

    @property
    def sha(self) -> str:
        fields: dict[str, Any] = {"system": self.system, "user": self.user}
        extra = {"verdict": self.verdict, "max_tokens": self.max_tokens, "temperature": self.temperature}
        if extra != {"verdict": "json", "max_tokens": None, "temperature": None}:  # older prompts keep their hashes
            fields.update(extra)
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def messages(self, question: str, expected: str, response: str, context: str) -> list[dict[str, str]]:
        user = self.user.format(question=question, expected=expected, response=response, context=context)
        system = [{"role": "system", "content": self.system}] if self.system else []
        return system + [{"role": "user", "content": user}]

    def parse(self, raw: str) -> tuple[float, str]:
        """(score, reason) of a judge reply, or ValueError saying what is wrong with it."""
        if self.verdict == "yes_no":
            return parse_yes_no(raw), f"the judge answered {' '.join(raw.split())[:60]!r}"
        verdict = parse_verdict(raw)
        return verdict.value, verdict.reason

    @property
    def correction(self) -> str:
        """What a judge whose reply could not be read is asked to send instead."""
        if self.verdict == "yes_no":
            return "Answer with one word: yes or no."
        return 'Reply with only the JSON object {"score": <0 to 1>, "reason": "<one sentence>"}.'


class _Verdict(BaseModel):
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    correct: bool | None = None
    reason: str = ""

    @model_validator(mode="after")
    def _some_score(self) -> "_Verdict":
        if self.score is None and self.correct is None:
            raise ValueError('the verdict has neither "score" nor "correct"')
        return self

    @property
    def value(self) -> float:
        return self.score if self.score is not None else float(bool(self.correct))


def parse_verdict(text: str) -> _Verdict:
    """The verdict in a judge reply, or ValueError saying what is wrong with it."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ValueError("the reply contains no JSON object")
    try:
        return _Verdict.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{where + ': ' if where else ''}{err['msg']}") from None


_NO = re.compile(r"\bno\b")


def parse_yes_no(text: str) -> float:
    """1.0 when "yes" is anywhere in the lower-cased reply (as LongMemEval's evaluation reads it), 0.0 when it says
    "no" (a word), else ValueError: an empty or other reply is unparseable, never a silent no."""
    lowered = text.lower()
    if "yes" in lowered:
        return 1.0
    if _NO.search(lowered):
        return 0.0
    raise ValueError("the reply says neither yes nor no" if text.strip() else "the reply is empty")
