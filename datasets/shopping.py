"""shopping: items are added to and removed from a shopping list over time; the agent must give the final list."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._scoring.rules import extract_json, normalize

# (singular, plural): countable things that are not colours, names or places.
ITEMS = [
    ("carrot", "carrots"), ("onion", "onions"), ("lemon", "lemons"), ("cucumber", "cucumbers"),
    ("egg", "eggs"), ("bagel", "bagels"), ("croissant", "croissants"), ("avocado", "avocados"),
    ("apple", "apples"), ("pear", "pears"), ("potato", "potatoes"), ("banana", "bananas"),
    ("mango", "mangoes"), ("pineapple", "pineapples"), ("melon", "melons"), ("courgette", "courgettes"),
    ("muffin", "muffins"), ("sausage", "sausages"), ("yoghurt", "yoghurts"), ("coconut", "coconuts"),
    ("toothbrush", "toothbrushes"), ("candle", "candles"), ("sponge", "sponges"), ("napkin", "napkins"),
    ("notebook", "notebooks"), ("pencil", "pencils"), ("envelope", "envelopes"), ("light bulb", "light bulbs"),
    ("bin bag", "bin bags"), ("paper towel", "paper towels"), ("tin of soup", "tins of soup"),
    ("bottle of shampoo", "bottles of shampoo"),
]
PLURALS = dict(ITEMS)

ADD = [
    "Please add {q} to my shopping list.",
    "Could you put {q} on my shopping list?",
    "I need to buy {q}, please add {it} to the list.",
    "Add {q} to the shopping list for me, please.",
]
MORE = [  # {q} reads "another carrot" or "2 more carrots"
    "I need {q}.",
    "Please add {q} to my list.",
    "Put {q} on the shopping list, please.",
]
REMOVE = [
    "Remove {q} from my list, please.",
    "Please take {q} off my shopping list.",
    "Actually, cross {q} off the list, please.",
]
QUESTIONS = [
    "What is on my shopping list right now? Please reply with a JSON list of objects, each with an `item` "
    "and a `quantity` field, with one entry per item.",
    "Can you give me my current shopping list? Answer as a JSON list of objects with `item` and `quantity` "
    "properties, combining entries for the same item.",
]


class ShoppingParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_changes: int = Field(default=6, ge=1, le=100)


def _amount(q: int, item: str) -> str:
    return f"one {item}" if q == 1 else f"{q} {PLURALS.get(item, item + 's')}"


def _more(q: int, item: str) -> str:
    return f"another {item}" if q == 1 else f"{q} more {PLURALS.get(item, item + 's')}"


def _it(q: int) -> str:
    return "it" if q == 1 else "them"


# Nouns people count things in: "2 bars of soap", "toilet paper rolls", "bottles of milk" name soap, toilet paper, milk.
UNITS = ["roll", "bar", "bottle", "carton", "tube", "pack", "packet", "box", "can", "tin", "jar", "bag", "loaf",
         "head", "bunch", "piece", "pint", "litre", "liter", "gallon", "dozen", "tub", "pot", "stick", "slice",
         "sachet", "container", "block", "punnet", "kilo", "kg", "pound", "lb", "bundle", "case", "crate", "jug"]
_UNIT = r"(?:" + "|".join(UNITS) + r")(?:s|es)?"
_UNIT_OF = re.compile(rf"^(?:\d+ |an? )?{_UNIT} of (?P<core>.+)$")
_UNIT_AFTER = re.compile(rf"^(?P<core>.+?) {_UNIT}$")
_ASIDE = re.compile(r"\([^)]*\)")


def _core(name: str, *, suffix: bool) -> str:
    """The item without its unit noun: "bars of soap" -> "soap"; with `suffix`, "soap bars" -> "soap" too."""
    text = normalize(_ASIDE.sub(" ", name))
    m = _UNIT_OF.match(text)
    if m:
        text = m.group("core")
    if suffix:
        m = _UNIT_AFTER.match(text)
        if m:
            text = m.group("core")
    return text


def _same_form(a: str, b: str) -> bool:
    """`a` is `b`, or its plural ("s"/"es", "tins of soup" for "tin of soup")."""
    if not a or not b:
        return False
    forms = {b, b + "s", b + "es", normalize(PLURALS.get(b, b))}
    if b.endswith("y"):
        forms.add(b[:-1] + "ies")
    head, sep, tail = b.partition(" of ")
    if sep:
        forms |= {f"{head}s of {tail}", f"{head}es of {tail}"}
    return a in forms or b in {a + "s", a + "es"}


def _same_item(said: str, expected: str) -> bool:
    """Case-insensitive, tolerating plurals and a unit noun around the item ("toilet paper rolls", "bars of soap",
    "bottles of milk" for toilet paper, soap, milk). A unit noun ending the expected item is part of its name
    ("bin bag" is not "bin")."""
    a, b = normalize(said), normalize(expected)
    if _same_form(a, b):
        return True
    return _same_form(_core(said, suffix=True), _core(expected, suffix=False))


def _quantity(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _field(entry: dict[str, Any], *names: str) -> Any:
    for key, value in entry.items():
        if str(key).strip().lower() in names:
            return value
    return None


class Shopping(DatasetInterface):
    name = "shopping"
    description = "Items are added to and removed from a shopping list over time; the agent must give the final list as JSON."
    reset_message = "Please clear my shopping list; it starts empty again now."
    Params = ShoppingParams
    params: ShoppingParams  # the validated args, typed

    def _change(self, state: dict[str, int]) -> str:
        """One change to the list: updates `state` and returns the line that says it."""
        choices = []
        if len(state) < len(ITEMS):
            choices += ["add", "add"]
        if state:
            choices.append("more")
            # Never remove everything: the final list must not be empty.
            if len(state) > 1 or max(state.values()) > 1:
                choices.append("remove")
        kind = self.rng.choice(choices)
        if kind == "add":
            item = self.rng.choice([i for i, _ in ITEMS if i not in state])
            q = self.rng.randint(1, 3)
            state[item] = q
            return self.rng.choice(ADD).format(q=_amount(q, item), it=_it(q))
        if kind == "more":
            item = self.rng.choice(list(state))
            q = self.rng.randint(1, 2)
            state[item] += q
            return self.rng.choice(MORE).format(q=_more(q, item))
        removable = [i for i in state if len(state) > 1 or state[i] > 1]
        item = self.rng.choice(removable)
        q = self.rng.randint(1, state[item] if len(state) > 1 else state[item] - 1)
        state[item] -= q
        if state[item] == 0:
            del state[item]
        return self.rng.choice(REMOVE).format(q=_amount(q, item))

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            state: dict[str, int] = {}
            script = [self._change(state) for _ in range(self.params.item_changes)]
            script.append(self.rng.choice(QUESTIONS))
            is_q = [False] * (len(script) - 1) + [True]
            expected = [[item, q] for item, q in state.items()]
            oracle = json.dumps([{"item": item, "quantity": q} for item, q in state.items()])
            examples.append(self.make_example(i, script, is_q, expected, oracle_answers=[oracle]))
        return examples

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        response = responses[0] if responses else ""
        expected = [(str(item), int(q)) for item, q in expected_answers]
        parsed = extract_json(response)
        if parsed is None:
            return 0.0, 1.0, ["The answer has no JSON list."]
        if not isinstance(parsed, list):
            return 0.0, 1.0, [f"The answer's JSON is a {type(parsed).__name__}, not a list."]
        listed = len(parsed)
        if not listed or not expected:
            return 0.0, 1.0, ["The answer lists no items." if not listed else "Nothing was expected on the list."]
        entries = []  # (item, quantity) of every well-formed entry
        for entry in parsed:
            if isinstance(entry, dict):
                item = _field(entry, "item", "name")
                if isinstance(item, str):
                    entries.append((item, _quantity(_field(entry, "quantity", "qty"))))
        present = right_quantity = 0
        reasons = []
        for item, q in expected:
            found = [eq for ei, eq in entries if _same_item(ei, item)]
            if not found:
                reasons.append(f"{item!r} is missing.")
                continue
            present += 1
            quantities = [f for f in found if f is not None]
            total = sum(quantities) if len(quantities) == len(found) else None
            if total == q:
                right_quantity += 1
            else:
                reasons.append(f"{item!r}: quantity {total if total is not None else 'unreadable'}, expected {q}.")
        extra = [ei for ei, _ in entries if not any(_same_item(ei, item) for item, _ in expected)]
        if extra:
            reasons.append(f"Not on the list: {', '.join(extra)}.")
        n = len(expected)
        presence, quantity, precision = present / n, right_quantity / n, min(1.0, present / listed)
        score = (presence + quantity + precision) / 3
        reasons.insert(0, f"items present {present}/{n}, right quantity {right_quantity}/{n}, "
                          f"correct among listed {present}/{listed}.")
        return score, 1.0, reasons
