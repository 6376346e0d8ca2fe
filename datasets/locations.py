"""locations and locations_directions: places of the user's home town, each told relative to the one before.

The user describes a chain of places, one line each, every place a whole number of km north,
south, east or west of the previous one. Two datasets share the town:

- locations: the last place is put on a compass axis through the first; the agent is asked the
  distance and direction from the last place straight back to the first ("3 km West").
- locations_directions: the agent is asked for a route from the first place to the last. Its
  reply is turned into moves (distance and compass direction), the moves are walked on the map,
  and the route is right when it ends at the last place.

Both are scored by rules that read the reply: distances in km or metres ("3,000 metres") with a compass
direction before or after them ("3 km North", "north for three km", "3 km N"), or said apart within one
step ("walk north until the Museum (3 km)", "Direction: North" then "Distance: 3 km", a table row), or
JSON steps; conversions in brackets ("(1.9 miles)") and totals ("12 km in all") are not steps, and a step
restated in the same sentence ("..., which is 3 km North of the Park") counts once. For a route, an
answer that gives no step that can be followed (no distance with a compass direction, or diagonal moves
only) is wrong, as in the reference, which must turn the answer into such steps. Replies the rules cannot
read with confidence (distances in other units or without a unit, diagonal steps among compass ones, a
right route followed by something else) go to the LLM judge when the run has one; without a judge the
rules' best reading stands and the reason says it was inconclusive. The two datasets are incompatible in
the v3 configs (they share places).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.rules import extract_json
from ltm_harness._scoring.verdict import Judge, JudgeVerdict

# Places of a small town: no colours, names, shop items, times of day or spy-meeting places.
PLACES = [
    "Town Hall", "Library", "Museum", "Bakery", "Fire Station", "Post Office", "Swimming Pool", "Market Square",
    "Old Mill", "Clock Tower", "Botanical Garden", "Cinema", "Stadium", "Cathedral", "Theatre", "Windmill",
    "Bandstand", "Tennis Club", "Police Station", "Town Bridge",
]
COMPASS = ("North", "South", "East", "West")
STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}
OPPOSITE = {"North": "South", "South": "North", "East": "West", "West": "East"}
DISTANCES = (1, 2, 3, 4)
MAX_TRIES = 1000

FIRST = "In the middle of my home town there is the {place}."
RELATIVE = [
    "The {place} is {d} km {dir} of the {prev}.",
    "From the {prev}, walk {d} km {dir} and you reach the {place}.",
    "If you go {d} km {dir} from the {prev}, you will find the {place}.",
    "The {place} lies {d} km to the {dir} of the {prev}.",
]
LAST = "The last place I want to mention is the {place}, {d} km {dir} of the {prev}."

Position = tuple[int, int]
Move = tuple[float, str]  # (km, compass direction)


# -- the town ------------------------------------------------------------------------------------
@dataclass
class Town:
    places: list[str]
    moves: list[tuple[int, str]]  # moves[i] goes from places[i] to places[i + 1]

    def positions(self) -> list[Position]:
        x = y = 0
        out = [(0, 0)]
        for d, direction in self.moves:
            dx, dy = STEP[direction]
            x, y = x + d * dx, y + d * dy
            out.append((x, y))
        return out

    def lines(self, rng: random.Random) -> list[str]:
        lines = [FIRST.format(place=self.places[0])]
        for i, (d, direction) in enumerate(self.moves):
            template = LAST if i == len(self.moves) - 1 else rng.choice(RELATIVE)
            lines.append(template.format(place=self.places[i + 1], prev=self.places[i], d=d, dir=direction))
        return lines


def walk(moves: list[Move], start: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
    x, y = start
    for d, direction in moves:
        dx, dy = STEP[direction]
        x, y = x + d * dx, y + d * dy
    return x, y


def describe_position(pos: tuple[float, float]) -> str:
    """Where a point is relative to the start, e.g. "1 km East and 2 km North" (for reasons and the judge)."""
    x, y = pos
    parts = [f"{_num(abs(x))} km {'East' if x > 0 else 'West'}" if x else "",
             f"{_num(abs(y))} km {'North' if y > 0 else 'South'}" if y else ""]
    return " and ".join(p for p in parts if p) or "the starting point"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# -- reading distances and directions in a reply -------------------------------------------------
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20,
}
_NUM = (r"(?P<{name}>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|"
        + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")")
_KM = r"km|kms|kilomet(?:er|re)s?|k\.m\.?|k"  # "3k north": a runner's shorthand
_METRES = r"m|metres?|meters?"
_UNIT = r"\s*-?\s*(?P<{name}>" + _KM + "|" + _METRES + r")\b"
_DIAG = r"(?:north|south)[\s-]?(?:east|west)(?:wards?|erly)?"
_AXIS = r"(?:north|south|east|west)(?:wards?|erly)?"
_LETTER = r"(?-i:[NSEW])"  # "3 km N", after a distance only
_DIR = r"(?P<{name}>" + _DIAG + "|" + _AXIS + r")\b"
_DIR_AFTER = r"(?P<{name}>" + _DIAG + "|" + _AXIS + "|" + _LETTER + r")\b"
_BETWEEN_AFTER = (r"(?:\s+(?:to|towards?|toward|in|into|the|an?|direction|of|due|heading|going|travelling|traveling|then|"
                  r"back|straight|further|more|again|walk|drive|ride|trip|journey|stroll|hike))*")
_BETWEEN_BEFORE = r"(?:\s+(?:for|by|about|approximately|roughly|around|some|another|a|further|more|distance|of|then))*"
# "4 km East", "4 kilometres to the east", "east for 4 km", "head North about 2 km", "3,000 metres north", "3 km N"
_MOVE = re.compile(
    r"\b" + _NUM.format(name="d1") + _UNIT.format(name="u1") + r"[,*]*" + _BETWEEN_AFTER + r"\s+\**"
    + _DIR_AFTER.format(name="r1")
    + r"|\b" + _DIR.format(name="r2") + r"[,:*]*" + _BETWEEN_BEFORE + r"\s+\**" + _NUM.format(name="d2")
    + _UNIT.format(name="u2"),
    re.IGNORECASE,
)
_DISTANCE = re.compile(r"\b" + _NUM.format(name="d") + _UNIT.format(name="u"), re.IGNORECASE)
_DIRECTION_WORD = re.compile(r"\b" + _DIR.format(name="r"), re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Distances in units the town is not measured in: a conversion in brackets is dropped, anything else is unread.
_OTHER_UNIT = r"(?:miles?|mi|ft|feet|foot|yards?|yds?)\b"
_CONVERSION = re.compile(r"\(\s*(?:about|approx\.?|approximately|roughly|around|~|\u2248)?\s*[\d.,]+\s*" + _OTHER_UNIT
                         + r"[^)]*\)", re.IGNORECASE)
_OTHER_DISTANCE = re.compile(r"\b[\d.,]+\s*" + _OTHER_UNIT, re.IGNORECASE)
_SUMMARY = re.compile(r"\b(total|in all|altogether|overall|combined|sum|whole (walk|route|trip|journey))\b", re.IGNORECASE)
_RESTATES = re.compile(r"\b(which|that|who|located|lies|lying|sits|i\.?e\.?)\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
_JSON_DISTANCE_KEY = re.compile(r"km|kilomet|distance", re.IGNORECASE)


def _distance(token: str, unit: str = "km") -> float:
    token = token.lower().replace(",", "")
    value = float(NUMBER_WORDS[token]) if token in NUMBER_WORDS else float(token)
    return value / 1000 if unit.lower().startswith("m") else value


def _compass(word: str) -> str | None:
    """The compass direction of an axis word ("eastwards" -> "East", "N" -> "North"), None for a diagonal one."""
    w = word.lower().replace("-", "").replace(" ", "")
    if re.match(r"(north|south)(east|west)", w):
        return None
    for name in COMPASS:
        if w.startswith(name.lower()) or w == name[0].lower():
            return name
    return None


@dataclass
class ReadMoves:
    """The moves read from a reply, in order, and what could not be read with confidence."""

    moves: list[Move] = field(default_factory=list)
    sentence: list[int] = field(default_factory=list)  # the sentence each move was read from
    diagonal: list[str] = field(default_factory=list)  # distances given with a diagonal direction
    unpaired: list[str] = field(default_factory=list)  # distances given without a direction next to them
    other_units: list[str] = field(default_factory=list)  # distances in miles, feet, ... (not converted)
    order: list[str] = field(default_factory=list)  # "move" / "diagonal", in reading order

    def without_repeats(self) -> list[Move]:
        """The moves with a move repeated within one sentence counted once: "go 3 km North to the Museum, and
        another 3 km North to the Park" may be one step said twice."""
        out: list[Move] = []
        for i, move in enumerate(self.moves):
            if i and self.sentence[i] == self.sentence[i - 1] and move == self.moves[i - 1]:
                continue
            out.append(move)
        return out

    def diagonals_only_after(self) -> bool:
        """Whether every diagonal comes after the last compass move (a summary of the route, not a step of it)."""
        if "move" not in self.order:
            return False
        last = len(self.order) - 1 - self.order[::-1].index("move")
        return "diagonal" not in self.order[:last]


@dataclass
class _Segment:
    """What one sentence or line of a reply says: its moves, and distances and directions not paired in a move."""

    moves: list[tuple[int, Move]] = field(default_factory=list)  # (position, move)
    lone_distances: list[tuple[int, float, str]] = field(default_factory=list)  # (position, km, text)
    lone_directions: list[tuple[int, str]] = field(default_factory=list)  # (position, compass direction)
    bare: list[str] = field(default_factory=list)  # numbers without a unit
    summary: bool = False


def _json_moves(text: str) -> list[Move] | None:
    """Steps given as a JSON list of objects, each with a compass direction and a distance in km."""
    data = extract_json(text)
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data):
        return None
    moves: list[Move] = []
    for entry in data:
        directions = [c for v in entry.values() if isinstance(v, str) and (c := _compass_word(v))]
        distances = [v for k, v in entry.items() if _JSON_DISTANCE_KEY.search(str(k))
                     and isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(directions) != 1 or len(distances) != 1:
            return None
        moves.append((float(distances[0]), directions[0]))
    return moves


def _compass_word(value: str) -> str | None:
    m = re.fullmatch(_AXIS, value.strip(), re.IGNORECASE)
    return _compass(value.strip()) if m else None


def read_moves(text: str) -> ReadMoves:
    out = ReadMoves()
    json_moves = _json_moves(text)
    if json_moves is not None:
        out.moves, out.sentence, out.order = json_moves, list(range(len(json_moves))), ["move"] * len(json_moves)
        return out
    text = _CONVERSION.sub(" ", text.replace("\u2013", "-").replace("\u2014", "-"))
    segments: list[_Segment] = []
    for part in sentences(text):
        seg = _Segment(summary=bool(_SUMMARY.search(part)))
        covered: list[tuple[int, int]] = []
        last_end, last_move = -1, None
        for m in _MOVE.finditer(part):
            number = m.group("d1") or m.group("d2")
            unit = m.group("u1") or m.group("u2")
            word = m.group("r1") or m.group("r2")
            covered.append(m.span())
            direction = _compass(word)
            if direction is None:
                out.diagonal.append(m.group(0))
                seg.moves.append((m.start(), (-1.0, "diagonal")))
                continue
            move = (_distance(number, unit), direction)
            if move == last_move and _RESTATES.search(part[last_end:m.start()]):
                continue  # "3 km North to the Museum, which is 3 km North of the Library": said once
            seg.moves.append((m.start(), move))
            last_end, last_move = m.end(), move
        for m in _DISTANCE.finditer(part):
            if not any(a <= m.start() < b for a, b in covered):
                seg.lone_distances.append((m.start(), _distance(m.group("d"), m.group("u")), m.group(0)))
        for m in _DIRECTION_WORD.finditer(part):
            c = _compass(m.group("r"))
            if c and not any(a <= m.start() < b for a, b in covered):
                seg.lone_directions.append((m.start(), c))
        out.other_units += [m.group(0) for m in _OTHER_DISTANCE.finditer(part)]
        spans = (covered + [(m.start(), m.end()) for m in _DISTANCE.finditer(part)]
                 + [(m.start(), m.end()) for m in _OTHER_DISTANCE.finditer(part)])
        seg.bare = [f"{m.group(0)} (no unit)" for m in _BARE_NUMBER.finditer(part)
                    if not any(a <= m.start() < b for a, b in spans)]
        # One distance and one direction said apart in one step ("walk north ... until the Museum (3 km)").
        if len(seg.lone_distances) == 1 and len(seg.lone_directions) == 1 and not seg.summary:
            (pd, km, _), (pr, direction) = seg.lone_distances[0], seg.lone_directions[0]
            seg.moves.append((min(pd, pr), (km, direction)))
            seg.lone_distances, seg.lone_directions = [], []
        segments.append(seg)
    # A step written over two lines ("Direction: North" then "Distance: 3 km").
    for a, b in zip(segments, segments[1:]):
        if a.moves or b.moves or a.summary or b.summary:
            continue
        if len(a.lone_directions) == 1 and not a.lone_distances and len(b.lone_distances) == 1 and not b.lone_directions:
            a.moves.append((0, (b.lone_distances[0][1], a.lone_directions[0][1])))
        elif len(a.lone_distances) == 1 and not a.lone_directions and len(b.lone_directions) == 1 and not b.lone_distances:
            a.moves.append((0, (a.lone_distances[0][1], b.lone_directions[0][1])))
        else:
            continue
        a.lone_distances, a.lone_directions, b.lone_distances, b.lone_directions = [], [], [], []
    for index, seg in enumerate(segments):
        for _, move in sorted(seg.moves, key=lambda pm: pm[0]):
            if move[1] == "diagonal":
                out.order.append("diagonal")
                continue
            out.moves.append(move)
            out.sentence.append(index)
            out.order.append("move")
        if not seg.summary:
            out.unpaired += [t for _, _, t in seg.lone_distances]
        if seg.lone_directions and not seg.lone_distances:
            # a direction beside a number without a unit ("| North | 3 |" under a "Distance (km)" heading) is unread
            out.unpaired += seg.bare
    return out


def sentences(text: str) -> list[str]:
    return [s for s in (part.strip() for part in _SENTENCE.split(text)) if s]


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return abs(a[0] - b[0]) < 1e-9 and abs(a[1] - b[1]) < 1e-9


# -- judging ---------------------------------------------------------------------------------------
@dataclass
class RuleVerdict:
    score: float
    reason: str
    conclusive: bool

    def without_judge(self) -> tuple[float, float, list[str]]:
        if self.conclusive:
            return self.score, 1.0, [self.reason]
        return self.score, 1.0, [f"{self.reason} Inconclusive by rules; no judge, so it scores {self.score:g}."]


async def judged(rule: RuleVerdict, judge: Judge | None, question: str, expected: str, response: str,
                 context: str) -> TestOutcome:
    """The rules' verdict, or the judge's when the rules were inconclusive and the run has a judge."""
    if rule.conclusive or judge is None:
        return TestOutcome(*rule.without_judge())
    verdict: JudgeVerdict = await judge.grade(question, expected, response, context=context)
    return TestOutcome(verdict.score, 1.0, [f"{rule.reason} Inconclusive by rules; judge {verdict.model}: "
                                            f"{verdict.score:g} ({verdict.reason})."], verdicts=[verdict])


# -- the datasets -----------------------------------------------------------------------------------
class LocationsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    known_locations: int = Field(default=5, ge=3, le=len(PLACES))


class _TownDataset(DatasetInterface):
    params: LocationsParams

    def _places(self) -> list[str]:
        return self.rng.sample(PLACES, self.params.known_locations)

    def _random_moves(self, n: int) -> list[tuple[int, str]]:
        return [(self.rng.choice(DISTANCES), self.rng.choice(COMPASS)) for _ in range(n)]

    @staticmethod
    def _distinct(moves: list[tuple[int, str]]) -> bool:
        """No two places on the same spot (a town where the route doubles back onto a place reads oddly)."""
        points = Town([], moves).positions()
        return len(set(points)) == len(points)


QUESTION_BACK = ("How far is it from the {last} straight back to the {first}, and in which direction? You may "
                 "work it out step by step, but end with the distance in km and the compass direction.")
CONTEXT_BACK = (
    "The user described places of their home town one after another, each a distance north, south, east or west "
    "of the previous one, and asked for the straight-line distance and compass direction from the last place back "
    "to the first. The expected answer is given. Score 1 if the response's final answer gives that distance and "
    "that direction, 0 if it gives another answer or none. Working shown before the final answer does not count "
    "against it.")
_SAME_PLACE = re.compile(r"\b(same (place|location|spot|point)|0 km|zero km|no distance)\b", re.IGNORECASE)


class Locations(_TownDataset):
    name = "locations"
    description = ("Places of the user's home town, each told relative to the previous one; the agent must give "
                   "the distance and direction from the last place back to the first.")
    reset_message = "Please forget the places of my home town that I have described to you."
    Params = LocationsParams

    def _town(self) -> Town:
        """Random moves, then a last move that puts the last place on a compass axis through the first
        (never on it), so the way back is one distance in one direction."""
        for _ in range(MAX_TRIES):
            moves = self._random_moves(self.params.known_locations - 2)
            x, y = Town([], moves).positions()[-1]
            finals = []
            for direction in COMPASS:
                dx, dy = STEP[direction]
                for d in DISTANCES:
                    fx, fy = x + d * dx, y + d * dy
                    if (fx == 0) != (fy == 0):  # on an axis, not at the first place
                        finals.append((d, direction))
            self.rng.shuffle(finals)
            for final in finals:
                if self._distinct(moves + [final]):
                    return Town(self._places(), moves + [final])
        raise RuntimeError("could not place the last location on an axis")  # pragma: no cover - never with these distances

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            town = self._town()
            x, y = town.positions()[-1]
            distance = abs(x) + abs(y)
            direction = ("West" if x > 0 else "East") if x else ("South" if y > 0 else "North")
            answer = f"{distance} km {direction}"
            script = town.lines(self.rng) + [QUESTION_BACK.format(last=town.places[-1], first=town.places[0])]
            examples.append(self.make_example(
                i, script, [False] * (len(script) - 1) + [True], [answer],
                oracle_answers=[f"It is {answer}."],
                extra={"distance": distance, "direction": direction},
            ))
        return examples

    @staticmethod
    def _expected(example_extra: dict[str, Any], expected: Any) -> tuple[float, str | None]:
        """(km, direction) of the answer; direction None when the last place is the first (distance 0)."""
        if "distance" in example_extra and "direction" in example_extra:
            return float(example_extra["distance"]), str(example_extra["direction"])
        text = str(expected[0] if isinstance(expected, list) and expected else expected)
        read = read_moves(text)
        if read.moves:
            return read.moves[0]
        return 0.0, None  # e.g. "They are in the same location."

    def rule_verdict(self, response: str, distance: float, direction: str | None) -> RuleVerdict:
        want = f"{_num(distance)} km {direction}" if direction else "the same place"
        if direction is None:
            if _SAME_PLACE.search(response):
                return RuleVerdict(1.0, "The answer says the two places are in the same spot.", True)
            return RuleVerdict(0.0, "The answer does not say the two places are in the same spot.", False)
        # The final answer: the last sentence that gives a distance with a direction.
        for sentence in reversed(sentences(response)):
            read = read_moves(sentence)
            if not read.moves and not read.diagonal:
                continue
            if read.diagonal and not read.moves:
                return RuleVerdict(0.0, f"The final answer gives a diagonal direction ({read.diagonal[-1]!r}); "
                                        f"expected {want}.", True)
            d, r = read.moves[-1]
            said = f"{_num(d)} km {r}"
            distinct = {(dd, rr) for dd, rr in read.moves}
            right = abs(d - distance) < 1e-9 and r == direction
            if len(distinct) > 1 or read.diagonal:
                return RuleVerdict(float(right), f"The final sentence gives several distances and directions, the "
                                                 f"last {said}; expected {want}.", False)
            if right:
                return RuleVerdict(1.0, f"The final answer is {said}, as expected.", True)
            return RuleVerdict(0.0, f"The final answer is {said}; expected {want}.", True)
        # No distance next to a direction: look for a distance and a direction said apart.
        distances = [_distance(m.group("d"), m.group("u")) for m in _DISTANCE.finditer(response)]
        directions = [c for c in (_compass(m.group("r")) for m in _DIRECTION_WORD.finditer(response)) if c]
        if distances and directions:
            right = abs(distances[-1] - distance) < 1e-9 and directions[-1] == direction
            return RuleVerdict(float(right), f"The answer gives {_num(distances[-1])} km and {directions[-1]} apart, "
                                             f"not as one answer; expected {want}.", False)
        return RuleVerdict(0.0, f"The answer gives no distance with a direction; expected {want}.", False)

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        distance, direction = self._expected(example.extra, example.expected_responses)
        return self.rule_verdict(responses[0] if responses else "", distance, direction).without_judge()

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        distance, direction = self._expected({}, expected_answers)
        return self.rule_verdict(responses[0] if responses else "", distance, direction).without_judge()

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        distance, direction = self._expected(example.extra, example.expected_responses)
        response = responses[0] if responses else ""
        rule = self.rule_verdict(response, distance, direction)
        expected = f"{_num(distance)} km {direction}" if direction else "They are in the same place."
        return await judged(rule, judge, questions[0] if questions else "", expected, response, CONTEXT_BACK)


QUESTION_ROUTE = ("Using the places I told you about, how would I get from the {first} to the {last}, going from "
                  "place to place? Give every step with its distance in km and its compass direction.")
STEP_LINE = "From the {prev} go {d} km {dir} to the {place}."
CONTEXT_ROUTE = (
    "The user described places of their home town one after another, each a distance north, south, east or west "
    "of the previous one, and asked for a route from the first place to the last. The expected route is one "
    "example; any route is right if following its distances and directions from the first place ends at the last "
    "place. Score 1 if the response's route ends there, 0 if it ends elsewhere or gives no usable route.")


class LocationsDirectionsParams(LocationsParams):
    known_locations: int = Field(default=6, ge=3, le=len(PLACES))


class LocationsDirections(_TownDataset):
    name = "locations_directions"
    description = ("Places of the user's home town, each told relative to the previous one; the agent must give a "
                   "route from the first place to the last, which is walked on the map to score it.")
    reset_message = "Please forget the places of my home town that I have described to you."
    Params = LocationsDirectionsParams

    def _town(self) -> Town:
        for _ in range(MAX_TRIES):
            moves = self._random_moves(self.params.known_locations - 1)
            if self._distinct(moves):
                return Town(self._places(), moves)
        raise RuntimeError("could not lay out the town")  # pragma: no cover - never with these distances

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            town = self._town()
            route = [STEP_LINE.format(prev=town.places[k], place=town.places[k + 1], d=d, dir=direction)
                     for k, (d, direction) in enumerate(town.moves)]
            script = town.lines(self.rng) + [QUESTION_ROUTE.format(first=town.places[0], last=town.places[-1])]
            examples.append(self.make_example(
                i, script, [False] * (len(script) - 1) + [True], ["\n".join(route)],
                oracle_answers=["\n".join(route)],
                extra={"moves": [[d, direction] for d, direction in town.moves], "places": town.places},
            ))
        return examples

    @staticmethod
    def _target(extra: dict[str, Any], expected: list[Any]) -> tuple[float, float]:
        """Where the route must end, from the example's moves or else from its expected route text."""
        moves = extra.get("moves")
        if isinstance(moves, list) and moves:
            return walk([(float(d), str(r)) for d, r in moves])
        read = read_moves(str(expected[0]) if expected else "")
        return walk(read.moves)

    def rule_verdict(self, response: str, target: tuple[float, float]) -> RuleVerdict:
        """Walk the steps read from the answer. Decided by the rules (conclusive) when the steps end at the destination,
        when the answer gives no step that can be followed (no distance with a compass direction: the reference cannot
        follow it either), or when its steps end elsewhere and nothing in it went unread; else the judge decides."""
        want = describe_position(target)
        read = read_moves(response)
        unread = read.unpaired + read.other_units
        if not read.moves:
            if unread:
                return RuleVerdict(0.0, f"No step with a distance in km and a compass direction could be read, but the "
                                        f"answer gives distances otherwise ({', '.join(unread)}); the destination is "
                                        f"{want} of the start.", False)
            if read.diagonal:
                return RuleVerdict(0.0, f"The answer only gives diagonal moves ({', '.join(read.diagonal)}), which cannot "
                                        f"be followed from place to place; the destination is {want} of the start.", True)
            return RuleVerdict(0.0, f"The answer gives no step with a distance and a compass direction, so its route "
                                    f"cannot be followed; the destination is {want} of the start.", True)
        end = walk(read.moves)
        n = len(read.moves)
        if read.diagonal and not read.diagonals_only_after():
            return RuleVerdict(float(_same(end, target)), f"The route has diagonal steps ({', '.join(read.diagonal)}) "
                                                          f"besides {n} compass steps; the destination is {want} of the start.", False)
        if _same(end, target):
            return RuleVerdict(1.0, f"The {n} steps of the answer end at the destination, {want} of the start.", True)
        single = read.without_repeats()
        if len(single) < n and _same(walk(single), target):
            return RuleVerdict(1.0, f"The steps of the answer end at the destination ({want} of the start) if a step "
                                    f"repeated within a sentence is taken once.", False)
        # A right route followed by a restatement (the whole route again, or the net way there), or by the way back
        # to the start, is right too.
        prefix_hits = [k for k in range(1, n) if _same(walk(read.moves[:k]), target)]
        for k in prefix_hits:
            if _same(walk(read.moves[k:]), target):
                return RuleVerdict(1.0, f"The first {k} steps of the answer end at the destination ({want} of the "
                                        f"start), and the rest restates the same way there.", True)
            if _same(end, (0.0, 0.0)):
                return RuleVerdict(1.0, f"The first {k} steps of the answer end at the destination ({want} of the "
                                        f"start), and the rest is the way back to the start.", True)
        if prefix_hits:
            return RuleVerdict(0.0, f"The first {prefix_hits[0]} steps end at the destination ({want} of the start), "
                                    f"but the answer goes on to {describe_position(end)}.", False)
        if unread:
            return RuleVerdict(0.0, f"The steps read end {describe_position(end)} of the start, not at the destination "
                                    f"({want}), and the answer has distances that were not read as steps "
                                    f"({', '.join(unread)}).", False)
        return RuleVerdict(0.0, f"The {n} steps of the answer end {describe_position(end)} of the start, not at the "
                                f"destination, {want} of the start.", True)

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        return self.rule_verdict(responses[0] if responses else "",
                                 self._target(example.extra, example.expected_responses)).without_judge()

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        return self.rule_verdict(responses[0] if responses else "", self._target({}, expected_answers)).without_judge()

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        target = self._target(example.extra, example.expected_responses)
        response = responses[0] if responses else ""
        rule = self.rule_verdict(response, target)
        expected = (f"{example.expected_responses[0] if example.expected_responses else ''}\n"
                    f"(The destination is {describe_position(target)} of the start.)")
        return await judged(rule, judge, questions[0] if questions else "", expected, response, CONTEXT_ROUTE)

