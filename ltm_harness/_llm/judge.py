"""The LLM judge behind `DatasetInterface.evaluate_correct_gpt`, with prompts from prompts/judge/*.json.

* The prompt is a JSON file (system + user template with {question}, {expected}, {response},
  {context}; `ltm_harness._scoring.judge_prompt.JudgePrompt`); its sha256 is stored with every verdict, with the
  judge model and the raw reply.
* The verdict is read as the prompt says (a JSON object, or yes/no). A reply that does not parse is asked
  again, naming the problem, up to `parse_attempts` times; after that `JudgeUnparseable` makes the test
  unscored, never a silent 0.
* A dataset may hand its own prompt to `grade` (one per kind of question), still with the run's judge model,
  client, cache and recording; the prompt may cap the reply's tokens and fix the temperature.
* Judge calls go through the run's LLM client (retries, the judge's own concurrency pool) and its
  disk cache (keyed by endpoint, model and the full request), so re-scoring the same answers costs nothing and gives
  the same verdicts; with a `JudgeBatch` (`--judge-batch`) they are kept for the provider's Batch API instead.
* A call that fails after every retry raises `JudgeUnavailable` naming the cause: only the judge's part is unscored,
  a rule's score stays. A cause that fails every call (`fatal`: an unknown model, a refused key, an exhausted quota)
  is kept in `stopped`: no later call is made, each raises it again, and the run stops (ltm_harness._engine.session).
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import ValidationError

from ltm_harness._errors import ConfigError, DefinitionError, LLMError
from ltm_harness._registry.core import Entry, Registry
from ltm_harness._registry.loading import code_source
from ltm_harness._store.files import first_error, read_user_json
from ltm_harness._llm.batch import JudgeBatch
from ltm_harness._llm.client import CallFailed, ChatResult, LLMClient, chat_params
from ltm_harness._store.records import LLMCall
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.not_answered import NOT_ANSWERED
from ltm_harness._scoring.verdict import JudgeUnavailable, JudgeUnparseable, JudgeVerdict
from ltm_harness._resources import shipped

PROMPTS_DIR = shipped("prompts") / "judge"


def _read_prompt(path: Path) -> JudgePrompt:
    try:
        data = read_user_json(path)
    except OSError as exc:
        raise DefinitionError(f"judge prompt {path}: cannot be read ({exc.strerror or exc}); check the path") from None
    try:
        return JudgePrompt.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(f"{path}: {first_error(exc)}; fix the file") from None


def _accept(obj: Any, where: str) -> Iterator[Entry[JudgePrompt]]:
    """A judge prompt: a JudgePrompt, its fields as a mapping, or the path of a JSON file holding them."""
    if isinstance(obj, JudgePrompt):
        yield Entry("", obj, where, obj.description)
    elif isinstance(obj, dict):
        try:
            prompt = JudgePrompt.model_validate(obj)
        except ValidationError as exc:
            raise DefinitionError(f"{where}: {first_error(exc)}; fix the judge prompt") from None
        yield Entry("", prompt, where, prompt.description)
    elif isinstance(obj, (str, Path)):
        prompt = _read_prompt(Path(obj))
        yield Entry("", prompt, where, prompt.description)
    else:
        raise DefinitionError(f"{where}: {obj!r} is not a judge prompt (its fields, or a JSON file of them)")


def _builtins() -> Iterator[Entry[JudgePrompt]]:
    for path in sorted(PROMPTS_DIR.glob("*.json")):
        prompt = _read_prompt(path)
        yield Entry(path.stem, prompt, "built-in", prompt.description)


JUDGE_PROMPTS: Registry[JudgePrompt] = Registry(
    "judge prompt", "ltm_harness.judge_prompts", _accept, builtins=_builtins, error=ConfigError,
    hint="or give a path to a JSON file")


def register_judge_prompt(name: str, prompt: JudgePrompt | dict[str, Any] | str | Path) -> None:
    """Make a judge prompt known by `name` (config.judge.prompt) to every run of this process."""
    caller = sys._getframe(1).f_globals.get("__name__")  # a prompt has no module of its own: the registering code's
    JUDGE_PROMPTS.register(prompt, code_source(None, caller), name=name)


def load_judge_prompt(name_or_path: str) -> JudgePrompt:
    """A judge prompt by name (built-in, registered, from a package), or from a JSON file."""
    if name_or_path.endswith(".json") or "/" in name_or_path or "\\" in name_or_path or Path(name_or_path).is_file():
        path = Path(name_or_path)
        if not path.exists():
            known = ", ".join(JUDGE_PROMPTS.scope())
            raise DefinitionError(f"judge prompt {name_or_path!r}: {path} does not exist; use one of {known} or a "
                                  "path to a JSON file")
        return _read_prompt(path)
    return JUDGE_PROMPTS.find(name_or_path)


class LLMJudge:
    """A `Judge` (ltm_harness._scoring.verdict) backed by a chat model."""

    def __init__(self, client: LLMClient, model: str, prompt: JudgePrompt, temperature: float | None = 0.0,
                 use_cache: bool = True, batch: JudgeBatch | None = None) -> None:
        self.client = client
        self.model = model
        self.prompt = prompt
        self.temperature = temperature
        self.use_cache = use_cache  # False (--no-cache): every request is made; its answer still refreshes the cache
        self.batch = batch  # judged through the Batch API (`ltm_harness._llm.batch`)
        self.stopped: JudgeUnavailable | None = None  # a cause that fails every call, once one was met

    async def grade(self, question: str, expected: str, response: str, *, context: str = "",
                    prompt: JudgePrompt | None = None) -> JudgeVerdict:
        return await self.grade_recorded(question, expected, response, context=context, prompt=prompt)

    async def grade_recorded(self, question: str, expected: str, response: str, *, context: str = "",
                             prompt: JudgePrompt | None = None, test: str | None = None,
                             record: Callable[[LLMCall], None] | None = None,
                             replayed: deque[LLMCall] | None = None) -> JudgeVerdict:
        """Like `grade`, handing every LLM call made to `record` (the session logs them). Calls in `replayed`
        (recorded by an interrupted run being resumed) are used in order before any new call is made. `prompt`
        replaces the run's judge prompt for this call (a dataset's own)."""
        prompt = prompt or self.prompt
        if response == NOT_ANSWERED:  # nothing to judge (the question is left unscored): no call is made
            raise JudgeUnparseable("no answer to judge: the imported file has none for this question")
        messages = prompt.messages(question, expected, response, context)
        raw, problem, cached = "", "", True
        for _ in range(prompt.parse_attempts):
            if replayed and (replayed[0].response is not None or replayed[0].error is not None):
                call = replayed.popleft()
                if record is not None:
                    record(call)
                if call.error is not None:  # the call failed then: the same unscored verdict, not asked again
                    raise JudgeUnavailable(f"judge {self.model}: {call.error}")
                raw = call.response or ""
            else:
                result = await self._call(messages, prompt, test, record)
                call, raw = result.call, result.text
                if record is not None:
                    record(call)
            cached = cached and call.cached
            try:
                score, reason = prompt.parse(raw)
            except ValueError as exc:
                problem = str(exc)
                messages = messages + [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": f"Your reply could not be read: {problem}. {prompt.correction}"},
                ]
                continue
            return JudgeVerdict(question=question, score=score, reason=reason, model=self.model,
                                prompt_hash=prompt.sha, raw=raw, cached=cached)
        raise JudgeUnparseable(f"{self.model} gave no valid verdict in {prompt.parse_attempts} attempts "
                               f"({problem}); last reply: {raw[:200]!r}", raw)

    async def _call(self, messages: list[dict[str, str]], prompt: JudgePrompt, test: str | None,
                    record: Callable[[LLMCall], None] | None = None) -> ChatResult:
        """One judge call; a failure is `JudgeUnavailable` with its cause (see the module docstring). A call that
        failed, not for good, goes to `record` (with its error), so that a resume replays its failure."""
        if self.stopped is not None:
            raise JudgeUnavailable(self.stopped.reason, fatal=True)
        temperature = self.temperature if prompt.temperature is None else prompt.temperature
        try:
            if self.batch is not None:  # answered from the cache, or kept for the next batch (JudgePending)
                kept = self.batch.answer(self.client, "judge", self.model, messages,
                                         chat_params(temperature, prompt.max_tokens, False), test)
                if kept is not None:
                    return kept
            return await self.client.chat("judge", self.model, messages, temperature=temperature,
                                          max_tokens=prompt.max_tokens, test=test, use_cache=self.use_cache,
                                          refresh_cache=True, keep_response=True)
        except LLMError as exc:
            failed = JudgeUnavailable(f"judge {self.model}: {exc}", fatal=exc.fatal)
            if exc.fatal and self.stopped is None:
                self.stopped = failed
            elif not exc.fatal and isinstance(exc, CallFailed) and record is not None:
                record(exc.call)
            raise failed from None
