"""Converters of the GoodAI LTM Benchmark's tests, one per reference dataset folder: each maps the folder to a dataset
of this harness and fills what that dataset's scoring needs (`extra`, oracle answers) from the reference test. A
folder without a converter is reported and skipped, never guessed; add a converter to support it."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._authoring.example import Wait
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.goodai_files import ReferenceTest


@dataclass
class Converted:
    """A reference test in this harness's terms (dataset name and example id are set by the importer)."""

    script: list[str]
    is_question: list[bool]
    waits: list[Wait]
    expected: list[Any]
    oracle: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


ConvertFn = Callable[[ReferenceTest], Converted]


@dataclass(frozen=True)
class Converter:
    folder: str  # the reference's dataset folder, e.g. "Locations Directions"
    dataset: str  # this harness's dataset, e.g. "locations_directions"
    config_name: str  # the dataset's name in the reference's config.yml
    convert: ConvertFn


def _plain(ref: ReferenceTest, expected: list[Any] | None = None, oracle: list[str] | None = None,
           extra: dict[str, Any] | None = None) -> Converted:
    waits = [Wait(**w.model_dump()) for w in ref.waits] or [Wait() for _ in ref.script]
    exp = ref.expected_responses if expected is None else expected
    return Converted(list(ref.script), list(ref.is_question), waits, exp,
                     oracle if oracle is not None else [str(e) for e in exp], extra or {})


def _stated(lines: list[str], patterns: list[str]) -> list[str] | None:
    """The value each statement line gives, by the reference's templates; None if a line fits none."""
    values = []
    for line in lines:
        for p in patterns:
            m = re.fullmatch(p, line.strip())
            if m:
                values.append(m.group(1).strip())
                break
        else:
            return None
    return values


def _latest_value(patterns: list[str]) -> ConvertFn:
    def convert(ref: ReferenceTest) -> Converted:
        statements = [line for line, q in zip(ref.script, ref.is_question) if not q]
        stated = _stated(statements, patterns)
        return _plain(ref, extra={"stated": stated} if stated else {})
    return convert


COLOUR_LINES = [r"My favourite colour is (.+)\.", r"(.+) is my favourite colour\.",
                r"My favourite colour could be described as (.+)\.", r"The name of my favourite colour is (.+)\."]
NAME_LINES = [r"My name is (.+)\.", r"Refer to me as (.+)\.", r"Start calling me by my name which is (.+)\.",
              r"(.+) is my name\.", r"(.+) is what I am called\.", r"My name has changed to (.+)\."]


def _name_list(ref: ReferenceTest) -> Converted:
    return _plain(ref, oracle=[json.dumps([str(n) for n in ref.expected_responses])])


def _shopping(ref: ReferenceTest) -> Converted:
    items = []
    for entry in ref.expected_responses:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], int)):
            raise ValueError(f"expected_responses: {entry!r} is not an [item, quantity] pair")
        items.append({"item": str(entry[0]), "quantity": entry[1]})
    return _plain(ref, oracle=[json.dumps(items)])


def _jokes_question() -> str:
    """The jokes dataset's question template (with its `{elapsed}` placeholder)."""
    module = _dataset_module("jokes")
    question = getattr(module, "QUESTION", None)
    if not isinstance(question, str) or "{elapsed}" not in question:
        raise DefinitionError("datasets/jokes.py has no QUESTION template with {elapsed}; the jokes importer needs it")
    return question


def _jokes(ref: ReferenceTest) -> Converted:
    # The reference's jokes definitions lack the question line: it is decided at run time, from the clock.
    converted = _plain(ref)
    if len(ref.is_question) == len(ref.script) + 1 and ref.is_question[-1] and not any(ref.is_question[:-1]):
        converted.script.append(_jokes_question())
        if len(converted.waits) == len(ref.script):
            converted.waits.append(Wait())
    if not ref.expected_responses or ref.expected_responses[0] not in converted.script[:-1]:
        raise ValueError("expected_responses[0] must be one of the jokes told")
    converted.oracle = [str(ref.expected_responses[0])]
    return converted


_ASKED = re.compile(r"Where will (\w+) look for the ([\w ]+?)\?")
_EXITED = "{who} exited the "


def _sallyanne(ref: ReferenceTest) -> Converted:
    """The answer line of a false-belief question: the asked person's last exit before the object is moved."""
    extra: dict[str, Any] = {}
    asked = _ASKED.search(ref.script[-1])
    moved = next((i for i, line in enumerate(ref.script) if " moved the " in line), None)
    if asked and moved is not None:
        exits = [i for i, line in enumerate(ref.script[:moved]) if _EXITED.format(who=asked.group(1)) in line]
        if exits:
            extra = {"question_type": "theory_of_mind", "answer_line": exits[-1]}
    answer = str(ref.expected_responses[0]) if ref.expected_responses else ""
    return _plain(ref, oracle=[json.dumps({"answer": answer})], extra=extra)


# Older prospective-memory tests (Benchmarks 1 and 2) describe the task in words: the quote is in the first line,
# the author and when to recite it in the request; `expected_responses` only restates the task.
_QUOTED = re.compile(r"""['"\u2018\u201c](?P<quote>.+)['"\u2019\u201d]""", re.DOTALL)
_RECITE = [  # (request, how many replies after the reply to the request the quote is due)
    re.compile(r"quote (?:by|from) (?P<author>.+?) in the (?P<n>\d+)(?:st|nd|rd|th) new message after this one",
               re.IGNORECASE),  # Benchmark 2
    re.compile(r"quote (?:by|from) (?P<author>.+?) after the next (?P<n>\d+) (?:statements|messages)", re.IGNORECASE),  # 1
]


def _older_prospective_memory(ref: ReferenceTest) -> list[Any]:
    """[[quote, author, n]] of a Benchmark 1 or 2 test: the quote is due in the reply to the N-th user message after
    the request, i.e. the (N+1)-th reply counting the reply to the request as the first (this harness's counting)."""
    if len(ref.script) != 2 or ref.is_question != [False, True]:
        raise ValueError("a prospective-memory test has two lines: the quote, then the request")
    quoted = _QUOTED.search(ref.script[0])
    if not quoted:
        raise ValueError("the first line holds no quote in quotation marks")
    for pattern in _RECITE:
        m = pattern.search(ref.script[1])
        if m:
            return [[quoted.group("quote").strip(), m.group("author").strip(), int(m.group("n")) + 1]]
    raise ValueError(f"the request {ref.script[1]!r} does not say when to recite the quote")


def _prospective_memory(ref: ReferenceTest) -> Converted:
    entry = ref.expected_responses[0] if ref.expected_responses else None
    if isinstance(entry, str):
        return _plain(ref, expected=_older_prospective_memory(ref), oracle=["OK, I will do that."])
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], int)):
        raise ValueError("expected_responses must be [[quote, author, n]] (Benchmark 3) or the task in words "
                         "(Benchmarks 1 and 2)")
    return _plain(ref, oracle=["OK, I will do that."])


_SAY = re.compile(r"""^say:\s*['"](?P<phrase>.*)['"]\s*$""", re.DOTALL)


def _trigger_response(ref: ReferenceTest) -> Converted:
    # Benchmark 1 writes each expected reply as "say: '<phrase>'": the phrase is what the reply must hold.
    expected = [m.group("phrase") if isinstance(e, str) and (m := _SAY.match(e)) else e for e in ref.expected_responses]
    return _plain(ref, expected=expected, oracle=[str(e) for e in expected])


_SPY_TOPICS = [("time", re.compile(r"^[^:]+: The time we will meet is (.+?)\.?$")),
               ("place", re.compile(r"^[^:]+: We will rendezvous (.+?)\.?$")),
               ("thing", re.compile(r"^[^:]+: Bring to the meeting (.+?)\.?$"))]
# Every meaning the reference's spy_meeting codes accept, per topic, over its published versions (Benchmarks 2 and 3).
# The reference penalises an answer that names a meaning of a code the test did not send (it hedges across meetings,
# or recalls an earlier test's message): an imported test's rivals for a topic are that topic's meanings it does not
# accept.
SPY_REFERENCE_MEANINGS: dict[str, list[str]] = {
    "time": ["dawn", "sunrise", "morning", "rise", "noon", "midday", "sunset", "dusk", "set", "sets", "night",
             "midnight", "nighttime"],
    "place": ["shore", "beach", "coastline", "railway", "yard", "depot", "railway depot", "train yard", "automobile",
              "factory", "manufacturing", "automobile factory", "car factory", "orchard", "port", "warehouse",
              "seaport", "docks", "city square"],
    "thing": ["boat", "bridge", "raft", "kayak", "pick", "picks", "key", "lockpicks", "lockpicking", "slim jim", "bribe",
              "credentials", "paperwork", "passport", "motorbike", "motorcycle", "car", "fast vehicle"],
}


def spy_rivals(topic: str, accepted: list[str]) -> list[str]:
    """The reference's meanings of `topic` that `accepted` does not hold: naming one of them is confusion."""
    taken = {a.lower() for a in accepted}
    return [m for m in SPY_REFERENCE_MEANINGS.get(topic, []) if m.lower() not in taken]


def _spy_meeting(ref: ReferenceTest) -> Converted:
    messages = [line for line, q in zip(ref.script[1:], ref.is_question[1:]) if not q]
    if len(messages) != len(ref.expected_responses):
        raise ValueError(f"{len(messages)} messages but {len(ref.expected_responses)} lists of expected meanings")
    topics, codes = [], []
    for line in messages:
        for topic, pattern in _SPY_TOPICS:
            m = pattern.match(line)
            if m:
                topics.append(topic)
                codes.append(m.group(1))
                break
        else:
            raise ValueError(f"message {line!r} is not a time, place or thing message of the reference")
    expected = [[str(k) for k in keywords] for keywords in ref.expected_responses]
    first = dict(zip(topics, (k[0] for k in expected)))
    oracle = f"We meet at {first.get('time', '')}, at the {first.get('place', '')}, and I should bring this: {first.get('thing', '')}."
    return _plain(ref, expected=expected, oracle=[oracle],
                  extra={"topics": topics, "codes": codes,
                         "rivals": [spy_rivals(t, accepted) for t, accepted in zip(topics, expected)]})


_ROUTE_NOTE = "(Just an example"


def _locations_directions(ref: ReferenceTest) -> Converted:
    read_moves = getattr(_dataset_module("locations_directions"), "read_moves")
    text = str(ref.expected_responses[0]) if ref.expected_responses else ""
    route = "\n".join(line for line in text.splitlines() if not line.startswith(_ROUTE_NOTE))
    moves = read_moves(route).moves
    statements = sum(1 for q in ref.is_question if not q)
    if len(moves) != statements - 1:
        raise ValueError(f"the expected route has {len(moves)} steps with a distance and a direction, "
                         f"but the test describes {statements} places")
    return _plain(ref, oracle=[route], extra={"moves": [[int(d) if float(d).is_integer() else d, r] for d, r in moves]})


def _locations(ref: ReferenceTest) -> Converted:
    read_moves = getattr(_dataset_module("locations"), "read_moves")
    answer = ref.expected_responses[0] if ref.expected_responses else ""
    answer = str(answer[0] if isinstance(answer, list) and answer else answer)
    moves = read_moves(answer).moves
    extra = {"distance": int(moves[0][0]) if float(moves[0][0]).is_integer() else moves[0][0],
             "direction": moves[0][1]} if len(moves) == 1 else {}
    return _plain(ref, expected=[answer], oracle=[answer], extra=extra)


def _chapterbreak(ref: ReferenceTest) -> Converted:
    options = [i for i, line in enumerate(ref.script) if re.match(r"Option [1-9]:", line)]
    if len(options) < 2 or options[0] < 2:
        raise ValueError("no numbered options after the chapter's pages")
    answer = str(ref.expected_responses[0]).strip() if ref.expected_responses else ""
    if not answer.isdigit() or not 1 <= int(answer) <= len(options):
        raise ValueError(f"expected_responses[0] {answer!r} is not an option number 1..{len(options)}")
    return _plain(ref, expected=[answer], oracle=[answer],
                  extra={"answer_line": options[0] - 2, "options": len(options)})


def _gpt_generated(ref: ReferenceTest) -> Converted:
    """Facts (one or more lines), then questions, one expected answer each (an LLM judge scores them best)."""
    questions = sum(ref.is_question)
    if not questions or len(ref.expected_responses) != questions:
        raise ValueError(f"{questions} questions but {len(ref.expected_responses)} expected answers")
    answers = [str(a) for a in ref.expected_responses]
    return _plain(ref, expected=answers, oracle=answers)


CONVERTERS: list[Converter] = [
    Converter("Colours", "colours", "colours", _latest_value(COLOUR_LINES)),
    Converter("Names", "names", "names", _latest_value(NAME_LINES)),
    Converter("NameList", "name_list", "name_list", _name_list),
    Converter("Shopping", "shopping", "shopping", _shopping),
    Converter("Jokes", "jokes", "jokes", _jokes),
    Converter("SallyAnne", "sallyanne", "sallyanne", _sallyanne),
    Converter("Prospective Memory", "prospective_memory", "prospective_memory", _prospective_memory),
    Converter("Trigger Response", "trigger_response", "trigger_response", _trigger_response),
    Converter("Spy Meeting", "spy_meeting", "spy_meeting", _spy_meeting),
    Converter("Locations Directions", "locations_directions", "locations_directions", _locations_directions),
    Converter("Locations", "locations", "locations", _locations),
    Converter("ChapterBreak", "chapterbreak", "chapterbreak", _chapterbreak),
    Converter("Delayed Recall", "delayed_recall", "delayed_recall", _gpt_generated),
    Converter("Instruction Recall", "instruction_recall", "instruction_recall", _gpt_generated),
    Converter("How to Think", "how_to_think", "how_to_think", _gpt_generated),
    Converter("Conflicting Personal Information", "conflicting_personal_info", "conflicting_personal_info",
              _gpt_generated),
]
# Reference folders that cannot be imported, and why (reported, never guessed).
NOT_YET: dict[str, tuple[str, str]] = {
    "Restaurant": ("restaurant", "the reference writes these tests during its run and stores no lines for them; "
                                 "run this harness's 'restaurant' dataset in a run of its own"),
}


def _dataset_module(name: str) -> Any:
    cls = known_datasets().get(name)
    if cls is None:
        raise DefinitionError(f"dataset {name!r} is not available; its importer needs it")
    return sys.modules[cls.__module__]
