"""`generate`: make test sets for a GPT-generated dataset with an LLM, check them, store them.

One set is a three-step chat, as the prompt file describes it: the content prompt, then the question
prompt, then the answer prompt, each asking for a JSON object ({"content": [...]}, {"questions": [...]},
{"answers": [...]}) and seeing the earlier steps. A set is kept only when it parses, has no empty items,
has one answer per question, and has as many items as each prompt asks for (when a prompt names a
number, e.g. "ten questions"). A bad set is asked for again, up to `attempts` times, then generation
stops with the reason. Kept sets are appended to the dataset's examples file (written atomically), so
runs reuse them and never call the generator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ltm_harness._errors import LLMError
from ltm_harness._authoring.gpt_generated import ExamplesFile, GeneratedSet, PromptFile, examples_path, load_examples
from ltm_harness._llm.client import LLMClient
from ltm_harness._llm.counted import asked_count
from ltm_harness._store.files import write_text
from ltm_harness._store.records import LLMCall, UsageTotals
from ltm_harness._scoring.rules import extract_json
from ltm_harness._tokens import plural

SYSTEM = ("You write test material for a memory benchmark. Follow the instructions exactly and reply with only the "
          "JSON object asked for, with no other text.")
@dataclass
class GenerationReport:
    kept: int = 0
    rejected: list[str] = field(default_factory=list)
    calls: list[LLMCall] = field(default_factory=list)

    @property
    def usage(self) -> UsageTotals:
        totals = UsageTotals()
        for c in self.calls:
            totals.add(c)
        return totals


def _step(prompt: str, key: str) -> str:
    return f'{prompt}\n\nReply with only a JSON object: {{"{key}": [<one string per item>]}}'


def _items(text: str, key: str) -> list[str]:
    data = extract_json(text)
    if not isinstance(data, dict) or key not in data:
        raise ValueError(f'the reply to the {key} step has no JSON object with "{key}"')
    items = data[key]
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise ValueError(f'"{key}" is not a list of strings')
    return [x.strip() for x in items]


async def generate_set(client: LLMClient, model: str, prompt: PromptFile, index: int,
                       report: GenerationReport, use_cache: bool = True) -> GeneratedSet:
    """One set, or ValueError saying why the output is not valid."""
    messages = [{"role": "system", "content": SYSTEM}]
    got: dict[str, list[str]] = {}
    for key, text in (("content", prompt.content), ("questions", prompt.question), ("answers", prompt.answer)):
        ask = _step(text, key) if key != "content" else _step(f"(Test set {index + 1}.) {text}", key)
        messages.append({"role": "user", "content": ask})
        result = await client.chat("generation", model, messages, temperature=1.0, json_mode=True, use_cache=use_cache)
        report.calls.append(result.call)
        got[key] = _items(result.text, key)
        wanted = asked_count(text)
        if wanted is not None and len(got[key]) != wanted:
            raise ValueError(f"the {key} step gave {len(got[key])} items but its prompt asks for {wanted}")
        messages.append({"role": "assistant", "content": result.text})
    try:
        return GeneratedSet(content=got["content"], questions=got["questions"], answers=got["answers"])
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(str(err["msg"]).removeprefix("Value error, ")) from None


def save_examples(path: Path, examples: ExamplesFile) -> None:
    write_text(path, json.dumps(examples.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False) + "\n")


async def generate(client: LLMClient, model: str, prompt_path: Path, prompt: PromptFile, n: int,
                   attempts: int = 3, use_cache: bool = True) -> GenerationReport:
    """Make `n` valid sets (each asked for up to `attempts` times) and append them to the examples file."""
    path = examples_path(prompt_path, prompt)
    stored = load_examples(path)
    report = GenerationReport()
    new: list[GeneratedSet] = []
    for k in range(n):
        index = len(stored.sets) + k
        for attempt in range(attempts):
            try:
                # a retry is a new request (another attempt number), so the cache does not repeat a bad answer
                made = await generate_set(client, model, prompt, index + 1000 * attempt, report, use_cache)
            except ValueError as exc:
                report.rejected.append(f"set {index + 1}, attempt {attempt + 1}: {exc}")
                continue
            new.append(made)
            break
        else:
            if new:
                stored.sets.extend(new)
                save_examples(path, stored)
            raise LLMError(f"{prompt_path}: {model} gave no valid set {index + 1} in {attempts} attempts "
                            f"({report.rejected[-1].split(': ', 1)[1]}); {plural(len(new), 'new set')} {'was' if len(new) == 1 else 'were'} saved to {path}")
    stored.sets.extend(new)
    if model not in stored.generated_by:
        stored.generated_by.append(model)
    save_examples(path, stored)
    report.kept = len(new)
    return report
