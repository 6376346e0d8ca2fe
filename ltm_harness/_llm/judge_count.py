"""A judge that calls nothing: each request the run's judge would send, counted and priced (`estimate`).

`CountingJudge` is the run's `LLMJudge` with only the call replaced, so a dataset asks it exactly what it asks the real
judge: the same scorers, the same prompt per question (the run's, or the dataset's own: LoCoMo's J prompts,
LongMemEval's by kind of question, BEAM's rubric items), filled with the question, the gold answer and the reply the
simulated agent gave, and no request for an answer that is missing. Each request is what a judge request of that
dataset costs:

* input: its messages counted as the LLM client counts a prompt (`LLMClient.count_prompt`, the run's tokenizer);
* output: the prompt's `max_tokens` when it caps the reply (the most the judge can be billed for: LongMemEval's 10,
  BEAM's event alignment 5), else the tokens of a typical verdict in the prompt's form (`TYPICAL_VERDICT`);
* price: the client's price table (config `llm.prices`), as the ledger prices the call, at the Batch API's discount
  with `batch` (`PriceTable.batch_cost`, what a `--judge-batch` run is billed); None for a model with no price.

Each request is answered with that typical verdict (a correct one), so it is read at once: a judge that has to be
asked again (a reply it could not read) is not counted. Every request is counted as paid, also one the judge cache
would answer in a run because the same request was made before (the simulated replies are all alike, so their
repeats would say little of a real agent's): the estimate errs on the side of the bill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ltm_harness._llm.client import ChatResult, LLMClient, chat_params, request_hash
from ltm_harness._llm.endpoint import LOCAL_KEY, Endpoint, _Secret
from ltm_harness._llm.judge import LLMJudge
from ltm_harness._llm.runtime import LLMRuntime
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._store.records import LLMCall

TYPICAL_VERDICT = {
    "json": '{"reason": "The response gives the same information as the expected answer.", "score": 1}',
    "yes_no": "yes",
}


@dataclass
class JudgeCount:
    """The requests a judge was asked, summed: by dataset (the part of the test id before '/'), by judge prompt (its
    name), tokens and price (`cost_usd` None once a request had no price)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    by_dataset: dict[str, int] = field(default_factory=dict)
    by_prompt: dict[str, int] = field(default_factory=dict)

    def add(self, call: LLMCall, prompt: str) -> None:
        self.requests += 1
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        paid = call.billed_usd if call.billed_usd is not None else call.cost_usd
        self.cost_usd = None if paid is None or self.cost_usd is None else round(self.cost_usd + paid, 10)
        dataset = (call.test or "").split("/", 1)[0] or "-"
        self.by_dataset[dataset] = self.by_dataset.get(dataset, 0) + 1
        self.by_prompt[prompt] = self.by_prompt.get(prompt, 0) + 1


class CountingJudge(LLMJudge):
    """The run's judge, counting and pricing each request instead of sending it (the module docstring)."""

    def __init__(self, client: LLMClient, model: str, prompt: JudgePrompt, temperature: float | None = 0.0,
                 batch: bool = False) -> None:
        super().__init__(client, model, prompt, temperature, use_cache=False)
        self.batch_priced = batch
        self.count = JudgeCount()

    def request(self, messages: list[dict[str, str]], prompt: JudgePrompt, test: str | None) -> LLMCall:
        """One judge request priced as the ledger prices it (not sent)."""
        temperature = self.temperature if prompt.temperature is None else prompt.temperature
        params = chat_params(temperature, prompt.max_tokens, False)
        prompt_tokens = self.client.count_prompt(messages)
        completion_tokens = prompt.max_tokens if prompt.max_tokens is not None else \
            self.client.count_reply(TYPICAL_VERDICT[prompt.verdict])
        prices = self.client.prices
        cost = prices.cost(self.model, prompt_tokens, completion_tokens)
        billed = prices.batch_cost(self.model, prompt_tokens, completion_tokens) if self.batch_priced else None
        return LLMCall(role="judge", model=self.model, endpoint=self.client.endpoint.display, test=test,
                       request_hash=request_hash(self.model, messages, params), prompt_tokens=prompt_tokens,
                       completion_tokens=completion_tokens, usage_counted=True, cost_usd=cost, billed_usd=billed,
                       response=TYPICAL_VERDICT[prompt.verdict])

    async def _call(self, messages: list[dict[str, str]], prompt: JudgePrompt, test: str | None,
                    record: Callable[[LLMCall], None] | None = None) -> ChatResult:
        call = self.request(messages, prompt, test)
        self.count.add(call, prompt.name)
        return ChatResult(TYPICAL_VERDICT[prompt.verdict], call)


NOWHERE = "http://127.0.0.1:9/v1"  # the counting judge's endpoint: never called (port 9 is discard)


def counting_judge(runtime: LLMRuntime, model: str, prompt: JudgePrompt, temperature: float | None,
                   batch: bool = False) -> CountingJudge:
    """The run's judge (`model`, its prompt and temperature), counting with `runtime`'s tokenizer and prices."""
    return CountingJudge(runtime.client(Endpoint(NOWHERE, _Secret(LOCAL_KEY))), model, prompt, temperature, batch)
