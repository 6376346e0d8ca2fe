"""The one ledger of a run's spend on providers, and the budget check before each paid call (`--max-cost`).

Every paid call (agents' `openai:` models, the judge, the test LLM, generation) asks the ledger first:
`reserve` prices the call's worst case (its prompt tokens plus its most output tokens, at the model's price, times a
`discount`: 0.5 for the Batch API) and refuses it with `BudgetReached` when the spend so far, plus the worst cases of
the calls in flight, plus this one would pass the budget. Once one call is refused every later one is too, so the
run stops cleanly: calls already in flight finish and are recorded (they were paid for), no new one starts. After a
call, `settle` replaces its reservation by what the provider billed (the cached-input and batch discounts applied);
a call that failed is `release`d (a provider bills no error).

The run folder keeps the ledger (`spend.jsonl`, one line per paid call, appended and flushed as each is settled), so a
resumed run starts from what was spent before it: `run --resume --max-cost HIGHER` goes on with the same total, and
nothing recorded is asked (paid) twice. A model without a price cannot be bounded: it is said once (with the way to
give it a price) and its calls are not counted.

`BudgetReached` is a BaseException, as KeyboardInterrupt is: no handler of agent or judge failures takes it for one,
so it ends the run as an interrupt does (every session stops at its next call, the folder is left resumable)."""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable

from ltm_harness._errors import option_name
from ltm_harness._llm.contexts import ContextTable
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._store.records import Role

DEFAULT_MAX_OUTPUT = 16_384  # a reply's tokens assumed for a model whose longest reply is not known
MAX_LEDGER_LINE = 4096  # characters of one ledger line read back (a longer one is damage, skipped)


class BudgetReached(BaseException):
    """A paid call was refused because it could pass the budget: the run stops there, resumable. Said after the run
    ended, its line gives the spend then (the calls that were in flight included)."""

    def __init__(self, ledger: "Ledger", role: str, model: str, worst: float) -> None:
        super().__init__(role, model, worst)
        self.ledger, self.role, self.model, self.worst = ledger, role, model, worst
        self.budget = ledger.budget or 0.0

    @property
    def spent(self) -> float:
        return self.ledger.spent

    @property
    def higher(self) -> float:
        """A budget to go on with: twice this one, and at least room for the refused call (up in 1/100 cents)."""
        return math.ceil(max(self.budget * 2, self.spent + self.worst) * 10_000) / 10_000

    def __str__(self) -> str:
        return (f"budget reached: {usd(self.spent)} spent of the {usd(self.budget)} allowed "
                f"({option_name('max_cost')}); the next call ({self.role}, {self.model}) could cost up to "
                f"{usd(self.worst)}, so the run stopped before it")


def usd(value: float) -> str:
    """Dollars as the ledger says them: $0.0123 (four decimals, more below a cent)."""
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"


@dataclass
class Hold:
    """A call's reservation: its worst-case cost while it is in flight (0 for an unpriced model)."""

    role: Role
    model: str
    worst: float
    priced: bool


class Ledger:
    """The run's spend (USD, as billed) and its budget (None: none); `keep` puts it in the run folder."""

    def __init__(self, prices: PriceTable, budget: float | None = None, contexts: ContextTable | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.prices = prices
        self.budget = budget
        self.contexts = contexts or ContextTable()
        self.path: Path | None = None
        self.on_note = on_note
        self.notes: list[str] = []
        self.spent = 0.0  # billed so far (with what the ledger file held, when carried)
        self.carried = 0.0  # of which, spent before this process
        self.spent_by_role: dict[str, float] = {}
        self.calls = 0  # paid calls settled by this process
        self.in_flight = 0.0  # worst cases of the calls under way
        self.stopped: BudgetReached | None = None
        self._said: set[str] = set()
        self._file: IO[str] | None = None
        self._lock = threading.Lock()

    def keep(self, path: Path, carry: bool | None) -> None:
        """Keep the ledger in the run folder's file `path`: `carry` True starts from the spend it holds (a resumed
        run), False starts it afresh (a fresh run: the file is emptied), None appends to it but counts from 0 (a
        re-scoring, whose budget is its own spend)."""
        self.path = path
        if carry:
            self.carried = self.spent = read_spend(path)
        elif carry is False:
            from ltm_harness._store.files import writing

            with writing(path):
                path.unlink(missing_ok=True)

    # -- the check before a call ------------------------------------------------------------------------------------
    def max_output(self, model: str, max_tokens: int | None, prompt_tokens: int) -> int:
        """The most tokens the call can be billed for its reply: `max_tokens` when the request sets it, else the
        model's longest reply (its context less the prompt, when only that is known; DEFAULT_MAX_OUTPUT when neither
        is, said once)."""
        if max_tokens is not None:
            return max_tokens
        known = self.contexts.max_output(model)
        if known is not None:
            return known
        window = self.contexts.context(model)
        if window is not None:
            return max(window - prompt_tokens, 0)
        self._say(f"max:{model}", f"model {model}: its longest reply is not known, so each call is reserved as if it "
                                  f"wrote {DEFAULT_MAX_OUTPUT:,} tokens; set config.openai.max_tokens (agents) to "
                                  "bound it")
        return DEFAULT_MAX_OUTPUT

    def reserve(self, role: Role, model: str, prompt_tokens: int, max_tokens: int | None,
                discount: float = 1.0) -> Hold:
        """Room for one call, or BudgetReached. `discount` multiplies its price (0.5: the Batch API)."""
        price = self.prices.price(model)
        if price is None:
            self._say(f"price:{model}", unpriced_note(model))
            self._check_stopped()
            return Hold(role, model, 0.0, priced=False)
        worst = 0.0
        if self.budget is not None:
            output = self.max_output(model, max_tokens, prompt_tokens)
            worst = (prompt_tokens * price.prompt + output * price.completion) / 1_000_000 * discount
        self._check_stopped()
        with self._lock:
            if self.budget is not None and self.spent + self.in_flight + worst > self.budget + 1e-12:
                self.stopped = BudgetReached(self, role, model, worst)
                raise self.stopped
            self.in_flight += worst
        return Hold(role, model, worst, priced=True)

    def _check_stopped(self) -> None:
        """Once stopped, every call is refused, each with its own copy of the first refusal."""
        first = self.stopped
        if first is not None:
            raise BudgetReached(self, first.role, first.model, first.worst)

    def settle(self, hold: Hold, billed: float | None) -> None:
        """The call is done: its reservation becomes what it was billed (None: unpriced, not counted)."""
        with self._lock:
            self.in_flight = max(self.in_flight - hold.worst, 0.0)
            if billed is None or not hold.priced:
                return
            self.spent = round(self.spent + billed, 10)
            self.spent_by_role[hold.role] = round(self.spent_by_role.get(hold.role, 0.0) + billed, 10)
            self.calls += 1
            self._append(hold, billed)

    def release(self, hold: Hold) -> None:
        """The call failed: nothing was billed."""
        with self._lock:
            self.in_flight = max(self.in_flight - hold.worst, 0.0)

    # -- what is said ------------------------------------------------------------------------------------------------
    def describe(self) -> str:
        """`spent $0.0123 of $0.5000` (or without a budget, `spent $0.0123`)."""
        return f"spent {usd(self.spent)}" + (f" of {usd(self.budget)}" if self.budget is not None else "")

    def _say(self, key: str, note: str) -> None:
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
            self.notes.append(note)
        if self.on_note is not None:
            self.on_note(note)

    # -- the file ----------------------------------------------------------------------------------------------------
    def _append(self, hold: Hold, billed: float) -> None:
        if self.path is None:
            return
        from ltm_harness._store.files import writing

        with writing(self.path):
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(json.dumps({"role": hold.role, "model": hold.model, "usd": billed}) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()


def unpriced_note(model: str) -> str:
    return (f"model {model} has no known price, so its calls are not counted in the spend (nor against --max-cost); "
            f"{how_to_price(model)}")


def how_to_price(model: str) -> str:
    """How to give `model` a price, as a line that says it has none ends."""
    return (f"give one in the config: llm.prices: {{{model}: {{prompt: USD_PER_1M, completion: USD_PER_1M}}}}, or "
            f"--set config.llm.prices.{model}.prompt=... --set config.llm.prices.{model}.completion=...")


def read_spend(path: Path) -> float:
    """The spend a ledger file holds (0 when there is none); a damaged line (a kill while it was written) is
    skipped. Read line by line: memory stays bounded however long the run."""
    total = 0.0
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if len(line) > MAX_LEDGER_LINE:
                    continue
                try:
                    value = json.loads(line).get("usd")
                except (ValueError, AttributeError):
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                        and value >= 0:
                    total += value
    except FileNotFoundError:
        return 0.0
    except OSError:
        from ltm_harness._errors import RunFolderError

        raise RunFolderError(f"{path}: the run's ledger of spend cannot be read; check the file's permissions") \
            from None
    return round(total, 10)
