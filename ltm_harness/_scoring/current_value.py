"""Which value an answer gives as the current one, for facts the user changed (a favourite colour, a name).

Models answer "What is my favourite colour?" in many ways: the value alone, the value then the history ("Red.
Before that Cream"), the history in order ("first Brown, then Cream, and most recently Red"), a statement then a
recalled list ("Your favourite colour is Yellow. You've mentioned Magenta, Cyan, Purple"), a chain of changes ("it
was Brown, but it was changed to Cream and then Red"), a question back ("I think you said Cream, but then you said
Red?"), bullet lists with timestamps. The rule reads each mention of a known value with the words around it:

- its *role*: marked current ("now", "most recently", "the latest"), stated ("your favourite colour is Red", or a
  value that opens the answer before the history), a correction ("or rather Red"), first or earlier ("originally",
  "used to", "before that"), the next of a sequence ("then", "changed to", an arrow), recalled ("you also
  mentioned"), denied ("not Cream") or a greeting ("Hi Juliet"). Cues before the value count nearest first; a cue
  just after it ("Red (latest)", "Brown was the first") counts too; items of a list without cues of their own take
  the first item's role;
- the values the answer *claims* as current: the marked, stated and corrected ones, plus the end of a sequence
  that goes on from one of them ("Your favourite is Brown. Later you changed it to Cream" claims both). A value
  that opens the answer is replaced by the end of a sequence starting from it ("Brown, I think, and then Red");
- with no claim, the history it tells: by timestamps when the values carry comparable ones, else by its order
  words (first, before that, then) and, without them, in the order told (the latest last).

The answer is right when it claims `expected` alone, wrong when it does not claim `expected` at all (or hedges
between `expected` and another value: "Red, or maybe Cream"), and *inconclusive* when it claims `expected` and
another value: then a judge decides, or the test stays unscored.

Hand-written rather than taken from an NLP library: the cues are a closed list of English phrases, and the one
parse that matters (which value a cue belongs to) needs the values' positions, which a tagger would not give.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from pydantic import BaseModel

from ltm_harness._scoring.rules import normalize


class LatestVerdict(BaseModel):
    """The rule's verdict on one answer: a score of 0 or 1, why, and whether the rule could tell."""

    score: float
    reason: str
    conclusive: bool


# -- the cues ------------------------------------------------------------------------------------------------------
# Roles: NOW (marked current), STATED, OPENING (opens the answer), CORRECT (a correction), FIRST, PAST, WEAK (past
# tense only), NEXT, RECALL, NEG (denied), GREETING, PLAIN. The first five can claim a value as current.
CLAIMS = ("NOW", "STATED", "OPENING", "CORRECT")
_STRONG = ("NOW", "FIRST", "PAST", "NEXT")
_CUES = {  # phrases in normalised text (lower case, no punctuation, "it's" -> "its"); longer phrases first
    "NONE": r"first of all|at first glance|last (?:week|month|year|night|time)|next time|not sure|not certain|"
            r"(?:have|ve|has) now|now that|for now on|in order",
    "NEG": r"no longer|rather than|instead of|not|nor|isnt|arent|wasnt|never|anymore|any more",
    "NOW": r"right now|as of now|at the moment|at present|these days|nowadays|most recently|most recent|"
           r"in the end|at last|currently|current|presently|now|today|latest|newest|lastly|last|finally|final|"
           r"ultimately|eventually|still|new|updated(?! to)",
    "FIRST": r"at first|to begin with|in the beginning|first|originally|original|initially|initial|earliest|"
             r"started (?:out )?with|start(?:ed)? (?:off|out)|began with",
    "PAST": r"used to|before (?:that|then|this)|prior to (?:that|this)|back then|in the past|previously|previous|"
            r"before|prior|formerly|former|earlier|(?:changed|switched|moved) (?:it |that |this )?from|old|older|"
            r"had been",
    "NEXT": r"and then|then|after that|after this|afterwards|afterward|after which|later on|later|next|"
            r"subsequently|followed by|since then|more recently|(?:changed|switched|updated|moved|swapped|turned|"
            r"went|replaced|changing|switching)(?: it| that| this| (?:your|my) (?:mind|answer))?(?: over)? "
            r"(?:to|with|for|by)|changed|switched|became|become",
    "RECALL": r"mentioned|mention|said|say|saying|told|tell|telling|also|too|as well|gave|given|shared|listed|"
              r"named|stated|noted|several|various|multiple|others|other|history|including|such as",
}
_CUE = re.compile(r"\b(?:" + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _CUES.items()) + r")\b")
_WEAK = re.compile(r"\b(?:was|were|had)\b")
_STATED = re.compile(r"\b(?:is|its|it is|thats|that is|youre|you are|are|be|call you|called|go by|goes by|known as|"
                     r"answer|name|colou?r|favou?rite|fave|like|love|prefer|i believe|i think|id say|i guess)"
                     r"(?: (?:definitely|probably|actually|indeed|clearly|certainly|surely|i believe|i think))*$")
_STATED_AFTER = re.compile(r"^(?:is|its|remains|stays) (?:your|the) (?:\w+ )?(?:favou?rite|fave|name|colou?r|answer|one)\b")
_CORRECT = re.compile(r"\b(?:or rather|rather|actually|i mean|correction|scratch that|no wait|wait|sorry|make that|"
                      r"oops|my mistake|my bad)(?: \w+){0,2}$")
_GREETING = re.compile(r"\b(?:hi|hello|hey|dear|thanks|thank you|welcome back|good (?:morning|afternoon|evening)|"
                       r"nice to (?:see|hear from) you(?: again)?|greetings)$")
_FILLER = {"sure", "ok", "okay", "yes", "yeah", "well", "hmm", "of", "course", "certainly", "absolutely", "got", "it",
           "the", "answer", "that", "would", "be", "oh", "ah", "right", "so"}
_NEG_REACH = 3  # a denial reaches this many words
_NEAR = 12  # words before a value that can mark it
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure)\b")
_HEDGE_BREAK = re.compile(r"\b(not(?! sure| certain)|no longer|rather than|instead of|than|nor|or rather|or actually)\b")

# Text the rule reads around values.
_ARROW = re.compile(r"\s*(?:->|=>|\u2192|\u27f6|\u21d2)\s*")
_BOUNDARY = re.compile(r"[.!?;]+(?=[\s\"')*_\]]|$)|(?<!:)\n|[()\[\]]")  # clause ends; a line ending in ":" runs on
_LIST_GAP = re.compile(r"^(?:[\s,/&+*_\-\u2022\u00b7|>#]|\d+[.)]|\band\b|\bor\b|\bnor\b)*$", re.IGNORECASE)
_PREDICATE = re.compile(r"^[\s*_]*(?:\((?P<paren>[^()]*)\)|[-\u2013\u2014:]?\s*(?P<words>(?:is|was|were|are|came|comes|"
                        r"being|became|had been|has been|remains|stays|isn't|wasn't)\b[^,;.!?()\n]*|(?:first|at first|originally|"
                        r"initially|before|earlier|previously|then|later|next|now|currently|most recently|recently|"
                        r"last|lastly|finally)(?=\s*(?:[,;.!?)\n]|$|and\b|but\b))))", re.IGNORECASE)

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_TIME = r"(?:,?\s*(?:at\s+)?(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ap>[ap]\.?m\b\.?)?)?"
_STAMP = re.compile(
    r"\b(?:(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:T|\b)"
    r"|(?P<mon>" + "|".join(_MONTHS) + r")[a-z]*\.?\s+(?P<md>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<my>\d{4})\b)?"
    r"|(?P<dm>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon2>" + "|".join(_MONTHS) + r")[a-z]*\b(?:\s+(?P<dmy>\d{4})\b)?"
    r"|(?=\d{1,2}:\d{2}))" + _TIME +
    r"|\b(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?P<unit>second|minute|hour|day|week|month)s?\s+ago\b",
    re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10}
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000}


@dataclass
class _Mention:
    value: str
    start: int
    end: int
    before: str  # the words of its clause before it, since the previous value
    after: str  # a cue phrase just after it ("(latest)", "was the first"), or ""
    linked: bool  # an item of a list with the previous value (nothing but commas, "and", bullets between)
    role: str = "PLAIN"
    stamp: tuple[str, float] | None = None


def read_latest(response: str, expected: str, rivals: list[str], noun: str) -> LatestVerdict:
    """Whether the value `response` gives as the current one is `expected`; `rivals` are the values that can be
    confused with it (the other values the user stated), `noun` names the fact in reasons ("colour")."""
    want = normalize(expected)
    others = [c for c in rivals if normalize(c) != want]
    text = _prepare(response)
    mentions = [m for m in _mentions(text, others + [expected]) if m.role != "GREETING"] or _mentions(text, [expected])
    named = {normalize(m.value) for m in mentions}
    if want not in named:
        return LatestVerdict(score=0.0, reason=f"{expected!r} is not in the answer.", conclusive=True)
    if named == {want}:
        if all(m.role == "NEG" for m in mentions):
            return LatestVerdict(score=0.0, reason=f"The answer denies {expected!r}.", conclusive=True)
        return LatestVerdict(score=1.0, reason=f"{expected!r} is the only {noun} in the answer.", conclusive=True)
    hedged = _hedge(text, mentions, want)
    if hedged is not None:
        return LatestVerdict(score=0.0, reason=f"The answer hedges between {expected!r} and {hedged!r}.", conclusive=True)
    readings, how = _readings(mentions)
    if not readings:
        return LatestVerdict(score=0.0, reason=f"The answer denies every {noun} it names.", conclusive=True)
    given = [v for v in readings if normalize(v) != want]
    if not given:
        return LatestVerdict(score=1.0, reason=f"{expected!r} is the {noun} the answer gives ({how}).", conclusive=True)
    if len(given) == len(readings):
        return LatestVerdict(score=0.0, reason=f"The answer gives {given[0]!r} as the {noun} ({how}), not {expected!r}.",
                             conclusive=True)
    return LatestVerdict(score=0.0, conclusive=False,
                         reason=f"The answer gives both {expected!r} and {given[0]!r} as the current {noun} ({how}).")


def _prepare(response: str) -> str:
    text = unicodedata.normalize("NFKC", response).replace("\u2019", "'").replace("\u2018", "'")
    return _ARROW.sub(" then ", text)


def _mentions(text: str, values: list[str]) -> list[_Mention]:
    """Every mention of a value in reading order (a longer value wins an overlap), with its words and role."""
    spans: list[tuple[int, int, str]] = []
    for v in sorted(values, key=lambda v: -len(v)):
        words = v.split()
        if not words:
            continue
        pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)
        for m in pattern.finditer(text):
            if not any(a < m.end() and m.start() < b for a, b, _ in spans):
                spans.append((m.start(), m.end(), v))
    spans.sort()
    boundaries = [m.end() for m in _BOUNDARY.finditer(text)]
    out: list[_Mention] = []
    cursor = 0  # where the words of the next mention begin: after the previous one and its cue
    for start, end, value in spans:
        clause = max([b for b in boundaries if b <= start], default=0)
        gap = text[cursor:start]
        linked = bool(out) and _LIST_GAP.match(_STAMP.sub(" ", gap)) is not None
        after = _PREDICATE.match(text[end:])
        cue = (after.group("paren") or after.group("words") or after.group(0)) if after else ""
        if after and _mentions_any(cue, values):
            after, cue = None, ""  # "(you said Brown)" belongs to Brown
        out.append(_Mention(value, start, end, text[max(clause, cursor):start], cue, linked))
        cursor = end + (after.end() if after else 0)
    _stamp(text, out)
    _assign_roles(out, text)
    return out


def _mentions_any(text: str, values: list[str]) -> bool:
    return any(re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", text, re.IGNORECASE) for v in values if v.strip())


def _role(m: _Mention, has_previous: bool) -> str:
    words = normalize(m.before).split()[-_NEAR:]
    pre = " ".join(words)
    if _GREETING.search(pre):
        return "GREETING"
    if has_previous and _CORRECT.search(pre):
        return "CORRECT"
    if words[-1:] == ["from"]:
        return "PAST"  # "from Brown to Cream"
    if has_previous and words in (["to"], ["and", "to"], ["then", "to"], ["and", "then", "to"]):
        return "NEXT"
    cues = [(c.end(), str(c.lastgroup)) for c in _CUE.finditer(pre)]
    if any(kind == "NEG" and len(pre[end:].split()) < _NEG_REACH for end, kind in cues):
        return "NEG"
    strong = [(end, kind) for end, kind in cues if kind in _STRONG]
    if strong:
        return max(strong)[1]
    post = normalize(m.after)
    post_cues = [str(c.lastgroup) for c in _CUE.finditer(post) if c.lastgroup in _STRONG + ("NEG",)]
    if post_cues:
        return post_cues[0]
    if any(kind == "RECALL" for _, kind in cues):
        return "RECALL"
    if _STATED.search(pre) or _STATED_AFTER.match(post):
        return "STATED"
    if _WEAK.search(pre) or _WEAK.match(post):
        return "WEAK"
    return "PLAIN"


_INHERIT = {"FIRST": "PLAIN", "OPENING": "PLAIN", "CORRECT": "NOW", "GREETING": "PLAIN"}


def _assign_roles(mentions: list[_Mention], text: str) -> None:
    for i, m in enumerate(mentions):
        m.role = _role(m, i > 0)
        if m.role == "PLAIN" and m.linked:
            m.role = _INHERIT.get(mentions[i - 1].role, mentions[i - 1].role)
        if m.role == "CORRECT":
            mentions[i - 1].role = "NEG"
    first = next((m for m in mentions if m.role != "GREETING"), None)
    if first is not None and first.role == "PLAIN" and set(normalize(text[:first.start]).split()) <= _FILLER:
        rest = [m for m in mentions if m is not first and m.role != "GREETING"]
        if not rest or (not rest[0].linked and rest[0].role != "PLAIN"):
            first.role = "OPENING"


def _hedge(text: str, mentions: list[_Mention], want: str) -> str | None:
    """The rival `want` is hedged with ("Red, or maybe Cream", "Red? Or was it Cream?"), if any."""
    for a, b in zip(mentions, mentions[1:]):
        va, vb = normalize(a.value), normalize(b.value)
        if want in (va, vb) and va != vb:
            between = normalize(text[a.end:b.start])
            if _HEDGE.search(between) and not _HEDGE_BREAK.search(between):
                return b.value if va == want else a.value
    return None


def _readings(mentions: list[_Mention]) -> tuple[list[str], str]:
    """The values the answer gives as current (more than one when it contradicts itself), and how it gives them."""
    told = [m for m in mentions if m.role not in ("NEG", "GREETING")]
    if not told:
        return [], "every value is denied"
    claims: list[int] = []  # indices into `told`
    for i, m in enumerate(told):
        if m.role in CLAIMS:
            claims.append(i)
        elif m.role == "NEXT" and i - 1 in claims:
            if told[i - 1].role in ("OPENING", "NEXT"):
                claims.remove(i - 1)  # the sequence goes on from the opening value: its end is the claim
            claims.append(i)
    if claims:
        return _distinct([told[i].value for i in claims]), _how([told[i] for i in claims])
    stamps = [m.stamp for m in told]
    if all(stamps) and len({s[0] for s in stamps if s}) == 1 and len(set(stamps)) > 1:
        latest = max(range(len(told)), key=lambda i: stamps[i] or ("", 0.0))
        return [told[latest].value], "the latest by its timestamps"
    order: list[int] = []
    for i, m in enumerate(told):
        previous = order.index(i - 1) if i > 0 else -1
        if m.role == "FIRST":
            order.insert(0, i)
        elif m.role == "PAST" and previous >= 0:
            order.insert(previous, i)
        else:
            order.insert(previous + 1, i)
    ordered = any(m.role in ("FIRST", "PAST", "NEXT") for m in told)
    return [told[order[-1]].value], "the latest of the history it tells" if ordered else "the last of the values stated"


def _distinct(values: list[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        if normalize(v) not in {normalize(o) for o in out}:
            out.append(v)
    return out


def _how(claims: list[_Mention]) -> str:
    roles = {m.role for m in claims}
    if roles <= {"NOW"}:
        return "marked as the current one"
    if roles <= {"OPENING", "STATED"}:
        return "stated as the answer"
    if roles <= {"CORRECT"}:
        return "given as a correction"
    if "NEXT" in roles and len(roles) == 1:
        return "the end of the sequence it tells"
    return "marked as the current one, stated, or the end of its sequence"


# -- timestamps ----------------------------------------------------------------------------------------------------
def _stamp(text: str, mentions: list[_Mention]) -> None:
    """Give each mention the timestamp written next to it: before the values when the answer's first timestamp comes
    before its first value ("- 2024-03-01 10:02: blue"), else after them ("blue (2 days ago)")."""
    first = _STAMP.search(text)
    if first is None or not mentions:
        return
    leading = first.start() < mentions[0].start
    for i, m in enumerate(mentions):
        if leading:
            found = list(_STAMP.finditer(text, mentions[i - 1].end if i else 0, m.start))
            stamp = found[-1] if found else None
        else:
            stamp = _STAMP.search(text, m.end, mentions[i + 1].start if i + 1 < len(mentions) else len(text))
        m.stamp = _stamp_key(stamp) if stamp else None


def _stamp_key(s: re.Match[str]) -> tuple[str, float]:
    """(kind, a number that orders stamps of that kind): kinds are what the stamp gives (a year, a day, a time, an
    age), so "10:02" and "March 3" are never compared."""
    g = s.groupdict()
    if g["unit"]:
        n = int(g["n"]) if g["n"].isdigit() else _NUMBERS[g["n"].lower()]
        return "ago", -float(n * _SECONDS[g["unit"].lower()])
    kind, day = "", 0
    if g["y"]:
        kind, day = "ymd", date(int(g["y"]), min(max(int(g["m"]), 1), 12), min(max(int(g["d"]), 1), 28)).toordinal()
    elif g["mon"] or g["mon2"]:
        year = g["my"] or g["dmy"]
        kind = "ymd" if year else "md"
        month = _MONTHS.index((g["mon"] or g["mon2"]).lower()[:3]) + 1
        day = date(int(year or 2000), month, min(max(int(g["md"] or g["dm"]), 1), 28)).toordinal()
    seconds = 0
    if g["h"]:
        hour = int(g["h"])
        if g["ap"]:
            hour = hour % 12 + (12 if g["ap"].lower().startswith("p") else 0)
        kind, seconds = kind + "t", hour * 3600 + int(g["mi"]) * 60 + int(g["s"] or 0)
    return kind, float(day * 86400 + seconds)
