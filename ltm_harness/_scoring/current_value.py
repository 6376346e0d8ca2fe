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
_CLAIMS = ("NOW", "STATED", "OPENING", "CORRECT")
_STRONG = ("NOW", "FIRST", "PAST", "NEXT")
_CUES = {  # phrases in normalised text (lower case, no punctuation, "it's" -> "its"); longer phrases first
    "NONE": r"(?:newest|latest|most recent)(?: one| ones| entries)? (?:first|at the top|on top)|first of all|"
            r"at first glance|last (?:week|month|year|night|time)|next time|not (?:\w+ )?(?:sure|certain)|"
            r"(?:have|ve|has) now|now that|for now on|in order|i (?:will|would) say|ill say|id say",
    "NEG": r"no longer|rather than|instead of|not|nor|isnt|arent|wasnt|havent|hasnt|hadnt|didnt|doesnt|dont|never|"
           r"anymore|any more",
    "NOW": r"right now|as of now|at the moment|at present|these days|nowadays|most recently|most recent|"
           r"in the end|at last|currently|current|presently|now|today|latest|newest|lastly|last|finally|final|"
           r"ultimately|eventually|still|new|updated(?! to)",
    "FIRST": r"at first|to begin with|in the beginning|first|originally|original|initially|initial|earliest|"
             r"started (?:out )?with|start(?:ed)? (?:off|out)|began with",
    "PAST": r"used to|before (?:that|then|this)|prior to (?:that|this)|back then|in the past|previously|previous|"
            r"before|prior|formerly|former|earlier|(?:changed|switched|moved) (?:it |that |this )?from|old|older|"
            r"had been|dropped|abandoned|ditched|gave up(?: on)?|moved (?:on |away )?from|(?:which |that |it )?replaced(?! (?:it |that )?(?:with|by)\b)",
    "NEXT": r"and then|then|after that|after this|afterwards|afterward|after which|later on|later|next|"
            r"subsequently|followed by|since then|since|more recently|went (?:with|for|to)|replaced (?:it |that )?(?:with|by)|"
            r"(?:changed|switched|updated|moved|swapped|turned|changing|switching)(?: it| that| this| (?:your|my) "
            r"(?:mind|answer))?(?: over| on)? to|changed|switched|became|become",
    "RECALL": r"mentioned|mention|said|say|saying|told|tell|telling|also|too|as well|gave|given|shared|listed|"
              r"named|stated|noted|several|various|multiple|others|other|history|including|such as",
}
_CUE = re.compile(r"\b(?:" + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _CUES.items()) + r")\b")
_WEAK = re.compile(r"\b(?:was|were|had)\b")
_STATED = re.compile(r"\b(?:is|is it|its|it is|thats|that is|youre|you are|are|be|call (?:you|me)|called|go by|"
                     r"goes by|known as|described as|i am|im|i (?:will|would) say|ill say|(?:have|got|know|noted|remember) you(?: down)? as|"
                     r"answer|name|colou?r|favou?rite|fave|like|love|prefer|i believe|i think|id say|i guess)"
                     r"(?: (?:definitely|probably|actually|indeed|clearly|certainly|surely|i believe|i think))*$")
_BACK = re.compile(r"(?:that|this|it|which) (?:is|was)\b")
_REPORTED = re.compile(r"\b(?:is|it is|you are|youre|call you|be)$")  # "you told me your name is Yusuf"
_STATED_AFTER = re.compile(r"^(?:is|its|remains|stays) (?:your|the) (?:\w+ )?(?:favou?rite|fave|name|colou?r|answer|one)\b")
_CORRECT = re.compile(r"\b(?:or rather|rather(?! than)|actually|i mean|correction|scratch that|no wait|wait|sorry|make that|"
                      r"oops|my mistake|my bad)(?: \w+){0,3}$")
_GREETING = re.compile(r"\b(?:hi|hello|hey|dear|thanks|thank you|welcome back|good (?:morning|afternoon|evening)|"
                       r"nice to (?:see|hear from) you(?: again)?|greetings)$")
_FILLER = {"sure", "ok", "okay", "yes", "yeah", "no", "well", "hmm", "of", "course", "certainly", "absolutely", "got",
           "it", "the", "answer", "that", "would", "be", "oh", "ah", "right", "so", "plain", "just", "simply",
           "definitely", "probably", "surely", "easy", "i", "think", "believe", "guess", "id", "say"}
_NEG_REACH = 3  # a denial reaches this many words
_NEAR = 12  # words before a value that can mark it
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure)\b")
_HEDGE_BREAK = re.compile(r"\b(not(?! sure| certain)|no longer|rather than|instead of|than|nor|or rather|or actually)\b")

# Text the rule reads around values.
_ARROW = re.compile(r"\s*(?:->|=>|\u2192|\u27f6|\u21d2)\s*")
# Clause ends: sentence ends, line ends (a line ending in ":" runs on into the list it opens), brackets, dashes and
# words of contrast ("Cream, but then Red").
_BOUNDARY = re.compile(r"[.!?;]+(?=[\s\"')*_\]]|$)|(?<!:)\n|[()\[\]\u2013\u2014]|\s-(?=\s)|"
                       r",?\s+(?:but|although|though|however|whereas)\b(?!\s*,)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_LIST_GAP = re.compile(r"^(?:[\s,/&+*_\-\u2022\u00b7|>#]|\d+[.)]|\band\b|\bor\b|\bnor\b)*$", re.IGNORECASE)
_PREDICATE = re.compile(r"^[\s*_]*(?:\((?P<paren>[^()]*)\)|\s*(?:[\u2013\u2014]|-(?=\s))\s*(?P<aside>[^\n.;!?()\u2013\u2014]+)|"
                        r":?\s*(?P<words>(?:is|was|were|are|came|comes|"
                        r"being|became|had been|has been|remains|stays|isn't|wasn't)\b[^,;.!?()\n\u2013\u2014]*|(?:first|at first|originally|"
                        r"initially|before(?: that| then)?|earlier(?: on)?|previously|then|later|next|now|currently|"
                        r"(?:most|more) recently|recently|last|lastly|finally)(?=\s*(?:[,;.!?)\n]|$|and\b|but\b))))",
                        re.IGNORECASE)
_ORDER_NOTE = r"(?:newest|latest|most recent)(?: one| ones| entries)? (?:first|at the top|on top)|(?:in )?reverse(?: chronological)? order"
_NEWEST_FIRST = re.compile(r"\b(?:" + _ORDER_NOTE + r")\b")
_UNSURE = re.compile(r"\b(?:not sure|unsure|not certain|dont know|do not know|cant remember|cannot remember|cant recall|"
                     r"dont remember|cant tell|cannot tell)(?: \w+){0,3} (?:which|whether)\b|\blost track\b|"
                     r"\bwhich (?:one |of (?:these|them|those) )?(?:would|do|should|shall|did) you\b|"
                     r"\bwhich (?:one )?is (?:it|correct|right)\b|\btorn between\b|\b(?:cant|cannot) decide\b")

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_TIME = r"(?:,?\s*(?:at\s+)?(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ap>[ap]\.?m\b\.?)?)?"
_STAMP = re.compile(
    r"\b(?:(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:T|\b)"
    r"|(?P<mon>" + _MONTH + r")\s+(?P<md>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<my>\d{4})\b)?"
    r"|(?P<dm>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon2>" + _MONTH + r")(?:\s+(?P<dmy>\d{4})\b)?"
    r"|(?=\d{1,2}:\d{2}))" + _TIME +
    r"|\b(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?P<unit>second|minute|hour|day|week|month)s?\s+ago\b"
    r"|\b(?P<rel>yesterday|just now|today)\b",
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
    since: str  # the text since the previous value, across clauses ("Aaron; no, Sabrina")
    after: str  # a cue phrase just after it ("(latest)", "was the first"), or ""
    rest: str  # when it is the last value of its clause and has no such phrase: the rest of the clause
    linked: bool  # an item of a list with the previous value (nothing but commas, "and", bullets between)
    alone: bool  # the only value of its clause, among filler words only ("Red.", "No - plain Red!")
    sentence: int  # which sentence of the answer it is in
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
    readings = _readings(mentions, text)
    if not readings:
        return LatestVerdict(score=0.0, reason=f"The answer denies every {noun} it names.", conclusive=True)
    given = [(v, how) for v, how in readings if normalize(v) != want]
    if not given:
        return LatestVerdict(score=1.0, reason=f"{expected!r} is the {noun} the answer gives ({readings[0][1]}).",
                             conclusive=True)
    if len(given) == len(readings):
        return LatestVerdict(score=0.0, reason=f"The answer gives {given[0][0]!r} as the {noun} ({given[0][1]}), not "
                                               f"{expected!r}.", conclusive=True)
    how = next(h for v, h in readings if normalize(v) == want)
    return LatestVerdict(score=0.0, conclusive=False, reason=f"The answer gives both {expected!r} ({how}) and "
                                                             f"{given[0][0]!r} ({given[0][1]}) as the current {noun}.")


def _prepare(response: str) -> str:
    text = unicodedata.normalize("NFKC", response).replace("\u2019", "'").replace("\u2018", "'")
    return _ARROW.sub(" then ", text)


def _value_pattern(value: str) -> re.Pattern[str]:
    """A value as whole words, any case, any spacing ("navy" in "Navy!", not in "navy-ish"... but in "navy-blue")."""
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in value.split()) + r"(?!\w)", re.IGNORECASE)


def _mentions(text: str, values: list[str]) -> list[_Mention]:
    """Every mention of a value in reading order (a longer value wins an overlap), with its words and role."""
    spans: list[tuple[int, int, str]] = []
    for v in sorted((v for v in values if v.strip()), key=lambda v: -len(v)):
        for m in _value_pattern(v).finditer(text):
            if not any(a < m.end() and m.start() < b for a, b, _ in spans):
                spans.append((m.start(), m.end(), v))
    spans.sort()
    ends = [m.end() for m in _BOUNDARY.finditer(text)]
    clauses = list(zip([0] + ends, ends + [len(text)]))
    out: list[_Mention] = []
    cursor = 0  # where the words of the next mention begin: after the previous one and its cue
    for start, end, value in spans:
        clause, clause_end = next((a, b) for a, b in clauses if a <= start < b)
        others = [a for a, _, _ in spans if clause <= a < clause_end and a != start]
        alone = not others and all(w in _FILLER or w.isdigit()
                                   for w in normalize(text[clause:start] + " " + text[end:clause_end]).split())
        gap = text[cursor:start]
        linked = bool(out) and _LIST_GAP.match(_STAMP.sub(" ", gap)) is not None
        after = _PREDICATE.match(text[end:])
        cue = (after.group("paren") or after.group("aside") or after.group("words") or after.group(0)) if after else ""
        if after and any(_value_pattern(v).search(cue) for v in values if v.strip()):
            after, cue = None, ""  # "(you said Brown)" belongs to Brown
        # The last value of its clause: the rest of the clause may speak of it ("olive, in your latest message").
        rest = text[end:clause_end] if not after and not any(a > start for a in others) else ""
        sentence = len(_SENTENCE_END.findall(text, 0, start))
        out.append(_Mention(value, start, end, text[max(clause, cursor):start], gap, cue, rest, linked, alone,
                            sentence))
        cursor = end + (after.end() if after else 0)
    _stamp(text, out)
    _assign_roles(out, text, clauses)
    return out


def _role(m: _Mention, has_previous: bool) -> str:
    words = normalize(re.sub(r"'s\b", " is", m.before)).split()[-_NEAR:]  # "your name's" -> "your name is"
    pre = " ".join(words)
    if _GREETING.search(pre):
        return "GREETING"
    since = normalize(m.since)
    if has_previous and (_CORRECT.search(since) or since == "no" or since.endswith(" no")):
        return "CORRECT"
    if has_previous and re.search(r"\b(before|after)\s*$", m.since, re.IGNORECASE):
        # "Brown came before Cream": Cream is the later one; "you switched to it after Walter": Walter the earlier
        return "NEXT" if m.since.rstrip().lower().endswith("before") else "PAST"
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
    recalled = any(kind == "RECALL" for _, kind in cues)
    if not recalled and (_STATED.search(pre) or _STATED_AFTER.match(post)):
        return "STATED"
    rest_cues = [str(c.lastgroup) for c in _CUE.finditer(normalize(m.rest)) if c.lastgroup in _STRONG]
    if rest_cues:
        return rest_cues[0]
    if recalled:
        return "REPORTED" if _REPORTED.search(pre) else "RECALL"
    if _WEAK.search(pre) or _WEAK.match(post):
        return "WEAK"
    return "PLAIN"


_INHERIT = {"FIRST": "PLAIN", "OPENING": "PLAIN", "CORRECT": "NOW", "GREETING": "PLAIN", "REPORTED": "RECALL"}


def _assign_roles(mentions: list[_Mention], text: str, clauses: list[tuple[int, int]]) -> None:
    for i, m in enumerate(mentions):
        m.role = _role(m, i > 0)
        if m.role == "PLAIN" and m.linked:
            m.role = _INHERIT.get(mentions[i - 1].role, mentions[i - 1].role)
        if m.role == "CORRECT" and normalize(mentions[i - 1].value) != normalize(m.value):
            mentions[i - 1].role = "NEG"
    # "Orange? That's the last one you gave me", "Beige? No, that was the first one": a clause naming no value marks
    # the value before it.
    for a, b in clauses:
        said = normalize(re.sub(r"'s\b", " is", text[a:b]))
        earlier = [m for m in mentions if m.end <= a]
        marks = [str(c.lastgroup) for c in _CUE.finditer(said) if c.lastgroup in ("NOW", "FIRST", "PAST")]
        if earlier and marks and _BACK.match(said) and not any(a <= m.start < b for m in mentions) and \
                earlier[-1].role not in ("NEG", "GREETING"):
            earlier[-1].role = marks[0]
    # A value said on its own, outside any list ("Red.", "No - plain Red!"), is the answer when it is the only one
    # said so; so is the value that opens the answer when the next one has words of its own ("Red, but you also
    # mentioned Brown").
    listed = {i for i, m in enumerate(mentions) if m.linked} | {i - 1 for i, m in enumerate(mentions) if m.linked}
    alone = [m for i, m in enumerate(mentions) if m.alone and i not in listed and m.role != "GREETING"]
    if len(alone) == 1 and alone[0].role == "PLAIN":
        alone[0].role = "OPENING"
        return
    told = [m for m in mentions if m.role != "GREETING"]
    first = told[0] if told else None
    if first is not None and first.role == "PLAIN" and set(normalize(text[:first.start]).split()) <= _FILLER:
        if len(told) == 1 or (not told[1].linked and told[1].role != "PLAIN"):
            first.role = "OPENING"


def _hedge(text: str, mentions: list[_Mention], want: str) -> str | None:
    """The rival `want` is hedged with ("Red, or maybe Cream", "Red? Or was it Cream?", "I'm not sure which of Red
    and Cream"), if any."""
    for a, b in zip(mentions, mentions[1:]):
        va, vb = normalize(a.value), normalize(b.value)
        if want in (va, vb) and va != vb:
            between = normalize(text[a.end:b.start])
            if _HEDGE.search(between) and not _HEDGE_BREAK.search(between):
                return b.value if va == want else a.value
    if _UNSURE.search(normalize(text)):
        return next(m.value for m in mentions if normalize(m.value) != want)
    return None


def _readings(mentions: list[_Mention], text: str) -> list[tuple[str, str]]:
    """The values the answer gives as current (more than one when it contradicts itself), each with how it gives it."""
    told = [m for m in mentions if m.role not in ("NEG", "GREETING")]
    if not told:
        return []
    claims: list[int] = []  # indices into `told`
    strong = any(m.role in _CLAIMS and m.role != "OPENING" for m in told)
    for i, m in enumerate(told):
        before = told[i - 1] if i else None
        goes_on = before is not None and i - 1 in claims and (
            before.role == "NEXT" or (before.role in ("OPENING", "REPORTED") and m.role == "NEXT")
            or (before.role == "OPENING" and m.role == "NOW" and before.sentence == m.sentence))
        if m.role == "CORRECT":
            claims.clear()  # a correction takes back the answer given before it
        if goes_on and m.role in ("NEXT", "NOW"):
            # a sequence going on from a claimed value ends in the claim ("Brown, then Cream, and now Red"); from a
            # stated one it is a second claim ("Your favourite is Brown. Later you changed it to Cream.")
            claims.remove(i - 1)
            claims.append(i)
        elif m.role in _CLAIMS or (m.role == "REPORTED" and not strong):
            claims.append(i)
        elif m.role == "NEXT" and i - 1 in claims:
            claims.append(i)
    if claims and all(told[i].role == "STATED" for i in claims):
        # Statements one after another ("My favourite colour is Coral. My favourite colour is Gold."), no word on
        # which is current: the latest last, as with values listed.
        return [(told[claims[-1]].value, "the last of the values stated" if len(claims) > 1 else _HOW["STATED"])]
    if claims:
        out: dict[str, tuple[str, str]] = {}
        for i in claims:
            out[normalize(told[i].value)] = (told[i].value, _HOW[told[i].role])
        return list(out.values())
    stamps = [m.stamp for m in told]
    if all(stamps) and len({s[0] for s in stamps if s}) == 1 and len(set(stamps)) > 1:
        latest = max(range(len(told)), key=lambda i: stamps[i] or ("", 0.0))
        return [(told[latest].value, "the latest by its timestamps")]
    order: list[int] = []
    for i, m in enumerate(told):
        previous = order.index(i - 1) if i > 0 else -1
        if m.role == "FIRST":
            order.insert(0, i)
        elif m.role == "PAST" and previous >= 0:
            order.insert(previous, i)
        elif m.role == "NEXT" and i > 0 and told[i - 1].sentence != m.sentence:
            order.append(i)  # a sentence opening on "then" goes on with the story told so far
        else:
            order.insert(previous + 1, i)
    if _NEWEST_FIRST.search(normalize(text)):
        return [(told[order[0]].value, "the first of the values stated, newest first")]
    ordered = any(m.role in ("FIRST", "PAST", "NEXT") for m in told)
    return [(told[order[-1]].value, "the latest of the history it tells" if ordered else "the last of the values stated")]


_HOW = {"NOW": "marked as the current one", "STATED": "stated as the answer", "OPENING": "stated as the answer",
        "REPORTED": "stated as the answer", "CORRECT": "given as a correction", "NEXT": "the end of the sequence it tells"}


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
    if g["rel"]:
        return "ago", -86400.0 if g["rel"].lower() == "yesterday" else 0.0
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
