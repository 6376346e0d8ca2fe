"""Which value an answer gives as the current one, for facts the user changed (a favourite colour, a name).

Models answer "What is my favourite colour?" in many ways: the value alone, the value then the history ("Red.
Before that Cream"), the history in order ("first Brown, then Cream, and most recently Red"), a statement then a
recalled list ("Your favourite colour is Yellow. You've mentioned Magenta, Cyan, Purple"), a chain of changes ("it
was Brown, but it was changed to Cream and then Red"), a question back ("I think you said Cream, but then you said
Red?"), bullet lists with timestamps. The rule reads each mention of a known value with the words around it:

- its *role* (`Role`): marked current ("now", "most recently", "the latest"), stated ("your favourite colour is
  Red"), said alone or opening the answer ("Red. Before that..."), reported ("you told me your name is Juliet"), a
  correction ("or rather Red", "no wait, Red"), first or earlier ("originally", "used to", "before that", "Brown
  came before Cream"), the next of a sequence ("then", "changed to", an arrow), recalled ("you also mentioned"),
  denied ("not Cream") or a greeting ("Hi Juliet"). The words before a value count nearest first; a phrase just
  after it ("Red (latest)", "Brown was the first", "olive, in your latest message") counts too; items of a list
  share the cue before the list; a clause naming no value can mark the one before it ("Orange? That's the last
  one you gave me").
- the values the answer *claims* as current: the marked, stated, opening and corrected ones (a correction takes
  back what came before it); a sequence going on from an opening value ends in the claim ("Brown, then Cream, and
  now Red"), one going on from a stated value is a second claim ("Your favourite is Brown. Later you changed it to
  Cream."). Reported values claim only when nothing else does. Statements one after another with no word on which
  is current, each in a sentence of its own ("My favourite colour is Coral. My favourite colour is Gold."), read as
  a list: the latest last.
- with no claim, the history it tells: by timestamps when every value carries one of the same kind, else by its
  order words (first, before that, then) and, without them, in the order told (the latest last, or first when the
  answer says its list runs newest first).

The answer is right when it claims `expected` alone, wrong when it does not claim `expected` (or hedges between
`expected` and another value: "Red, or maybe Cream", "I'm not sure which"), and *inconclusive* when it claims
`expected` and another value: then a judge decides, or the test stays unscored.

Hand-written rather than taken from an NLP library: the cues are a closed list of English phrases, and the one
parse that matters (which value a cue belongs to) needs the values' positions, which a tagger would not give;
timestamps are read by a few patterns for the forms answers use (a fuzzy date parser finds dates in anything).
"""

from __future__ import annotations

import re
import unicodedata
from calendar import monthrange
from dataclasses import dataclass
from datetime import datetime
from enum import Enum, auto

from pydantic import BaseModel

from ltm_harness._scoring.rules import normalize


class LatestVerdict(BaseModel):
    """The rule's verdict on one answer: a score of 0 or 1, why, and whether the rule could tell."""

    score: float
    reason: str
    conclusive: bool


class Role(Enum):
    """What an answer says of one mention of a value."""

    NOW = auto()  # marked current
    STATED = auto()  # stated as the answer
    OPENING = auto()  # said alone, or opening the answer before words on the others
    REPORTED = auto()  # "you told me your name is Juliet"
    CORRECT = auto()  # a correction of what came before
    FIRST = auto()
    PAST = auto()  # earlier than the value before it, or than now
    NEXT = auto()  # later than the value before it
    RECALL = auto()  # recalled, no word on when
    WEAK = auto()  # in the past tense only ("it was Brown")
    NEG = auto()  # denied
    GREETING = auto()  # "Hi Juliet"
    PLAIN = auto()  # no word on it


_CLAIMS = {Role.NOW, Role.STATED, Role.OPENING, Role.CORRECT}
_ORDER_CUES = {Role.NOW, Role.FIRST, Role.PAST, Role.NEXT}  # cue words that place a value in time
_HOW = {Role.NOW: "marked as the current one", Role.STATED: "stated as the answer", Role.OPENING: "stated as the answer",
        Role.REPORTED: "stated as the answer", Role.CORRECT: "given as a correction",
        Role.NEXT: "the end of the sequence it tells"}
# An item of a list takes the role of the cue before the list where it marks them all ("not Brown or Cream", "now
# Red and Cream"); a place in time is the first item's, the others follow it in the order told.
_INHERIT = {Role.FIRST: Role.PLAIN, Role.PAST: Role.PLAIN, Role.CORRECT: Role.NOW, Role.REPORTED: Role.RECALL,
            Role.GREETING: Role.PLAIN}

# -- the cues ------------------------------------------------------------------------------------------------------
_CUES = {  # phrases in normalised text (lower case, no punctuation, "it's" -> "its"); NONE swallows look-alikes
    "NONE": r"(?:newest|latest|most recent)(?: one| ones| entries)? (?:first|at the top|on top)|first of all|"
            r"at first glance|last (?:week|month|year|night|time)|next time|not (?:\w+ )?(?:sure|certain)|"
            r"(?:have|ve|has) now|now that|for now on|in order|i (?:will|would) say|ill say|id say",
    "NEG": r"no longer|rather than|instead of|not|nor|isnt|arent|wasnt|havent|hasnt|hadnt|didnt|never|anymore|any more",
    "NOW": r"right now|as of now|at the moment|at present|these days|nowadays|most recently|most recent|"
           r"in the end|at last|currently|current|presently|now|today|latest|newest|lastly|last|finally|final|"
           r"ultimately|eventually|still|new|updated(?! to)",
    "FIRST": r"at first|to begin with|in the beginning|first|originally|original|initially|initial|earliest|"
             r"started (?:out )?with|start(?:ed)? (?:off|out)|began with",
    "PAST": r"used to|before (?:that|then|this)|prior to (?:that|this)|back then|in the past|previously|previous|"
            r"before|prior|formerly|former|earlier|(?:changed|switched|moved) (?:it |that |this )?from|old|older|"
            r"had been|dropped|abandoned|ditched|gave up(?: on)?|moved (?:on |away )?from|"
            r"(?:which |that |it )?replaced(?! (?:it |that )?(?:with|by)\b)",
    "NEXT": r"and then|then|after that|after this|afterwards|afterward|after which|later on|later|next|"
            r"subsequently|followed by|since then|(?:have|ve|has) since|more recently|went (?:with|for|to)|"
            r"replaced (?:it |that )?(?:with|by)|(?:changed|switched|updated|moved|swapped|turned|changing|switching)"
            r"(?: it| that| this| (?:your|my) (?:mind|answer))?(?: over| on)? to|changed|switched|became|become",
    "RECALL": r"mentioned|mention|said|say|saying|told|tell|telling|also|too|as well|gave|given|shared|listed|"
              r"named|stated|noted|several|various|multiple|others|other|history|including|such as",
}
_CUE = re.compile(r"\b(?:" + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _CUES.items()) + r")\b")
_NEG_THROUGH = {"the", "a", "an", "your", "my", "really", "actually", "just", "any", "even", "ever", "more", "longer",
                "mentioned", "said", "say", "told", "tell", "me", "given", "gave", "named", "it", "its", "is", "was",
                "be", "been", "that", "to", "call", "you", "called", "go", "by", "like", "liked", "favourite",
                "favorite", "colour", "color", "name"}  # words a denial reaches through ("haven't mentioned Red")
_WEAK = re.compile(r"\b(?:was|were|had)\b")
_STATED = re.compile(r"\b(?:is|is it|its|it is|thats|that is|youre|you are|are|be|call (?:you|me)|called|go by|"
                     r"goes by|known as|described as|i am|im|i (?:will|would) say|ill say|"
                     r"(?:have|got|know|noted|remember) you(?: down)? as|answer|name|colou?r|favou?rite|fave|like|"
                     r"love|prefer|i believe|i think|id say|i guess)"
                     r"(?: (?:definitely|probably|actually|indeed|clearly|certainly|surely|i believe|i think))*$")
_STATED_AFTER = re.compile(r"^(?:is|its|remains|stays) (?:your|the) (?:\w+ )?(?:favou?rite|fave|name|colou?r|answer|one)\b")
_REPORTED = re.compile(r"\b(?:is|it is|you are|youre|call you|be)$")  # "you told me your name is Yusuf"
_CORRECT = re.compile(r"(?:\b(?:or rather|rather(?! than)|actually|i mean|correction|scratch that|no wait|wait|sorry|"
                      r"make that|oops|my mistake|my bad)(?: \w+){0,3}|\bno)$")
_GREETING = re.compile(r"\b(?:hi|hello|hey|dear|thanks|thank you|welcome back|good (?:morning|afternoon|evening)|"
                       r"nice to (?:see|hear from) you(?: again)?|greetings|hope (?:that|this) helps|take care|"
                       r"cheers)$")
_BACK = re.compile(r"(?:(?:no|wait|actually|oh|sorry|hmm|well|and|but|so) )*(?:that|this|it|which) (?:is|was)\b")
_SINCE_PAIR = re.compile(r"\b(before|after)\s*$", re.IGNORECASE)  # "Brown came before Cream", "after Walter"
_FILLER = {"sure", "ok", "okay", "yes", "yeah", "no", "well", "hmm", "of", "course", "certainly", "absolutely", "got",
           "it", "the", "answer", "that", "would", "be", "oh", "ah", "right", "so", "plain", "just", "simply",
           "definitely", "probably", "surely", "easy", "i", "think", "believe", "guess", "id", "say"}
_NEAR = 12  # words before a value that can mark it
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure)\b")
_HEDGE_BREAK = re.compile(r"\b(not(?! sure| certain)|no longer|rather than|instead of|than|nor|or rather|or actually)\b")
_UNSURE = re.compile(r"\b(?:not sure|unsure|not certain|dont know|do not know|cant remember|cannot remember|cant recall|"
                     r"dont remember|cant tell|cannot tell)(?: \w+){0,3} (?:which|whether)\b|\blost track\b|"
                     r"\bwhich (?:one |of (?:these|them|those) )?(?:would|do|should|shall|did) you\b|"
                     r"\bwhich (?:one )?is (?:it|correct|right)\b|\btorn between\b|\b(?:cant|cannot) decide\b")
_NEWEST_FIRST = re.compile(r"\b(?:(?:newest|latest|most recent)(?: one| ones| entries)? (?:first|at the top|on top)|"
                           r"(?:in )?reverse(?: chronological)? order)\b")

# -- the text around values ----------------------------------------------------------------------------------------
_ARROW = re.compile(r"\s*(?:->|=>|\u2192|\u27f6|\u21d2)\s*")
# Clause ends: sentence ends, line ends (a line ending in ":" runs on into the list it opens), brackets, dashes (not
# a bullet's) and words of contrast ("Cream, but then Red"; not "Most recently, though, ...").
_BOUNDARY = re.compile(r"[.!?;]+(?=[\s\"')*_\]]|$)|(?<!:)\n|[()\[\]\u2013\u2014]|[ \t]-(?=\s)|"
                       r",?\s+(?:but|although|though|however|whereas)\b(?!\s*,)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_LIST_GAP = re.compile(r"^(?:[\s,/&+*_:\-\u2013\u2014\u2022\u00b7|>#]|\d+[.)]|\band\b|\bor\b|\bnor\b)*$", re.IGNORECASE)
# A phrase just after a value that speaks of it: a parenthesis, an aside after a dash, a predicate, an order word.
_PREDICATE = re.compile(
    r"[\s*_]*(?:\((?P<paren>[^()]*)\)|\s*(?:[\u2013\u2014]|-(?=\s))\s*(?P<aside>[^\n.;!?()\u2013\u2014]+)|"
    r":?\s*(?P<words>(?:is|was|were|are|came|comes|being|became|had been|has been|remains|stays|isn't|wasn't)\b"
    r"[^,;.!?()\n\u2013\u2014]*|(?P<adverb>first|at first|originally|initially|before(?: that| then)?|"
    r"earlier(?: on)?|previously|then|later|next|now|currently|(?:most|more) recently|recently|last|lastly|finally)"
    r"(?=\s*(?:[,;.!?)\n]|$|and\b|but\b))))", re.IGNORECASE)

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
_TIME = (r"(?:,?\s*(?:at\s+)?(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?::(?P<s>[0-5]\d))?\b\s*"
         r"(?:(?P<ap>[ap])\.?m\b\.?)?)?")
_STAMP = re.compile(
    r"\b(?:(?P<y>[12]\d{3})-(?P<m>1[0-2]|0?[1-9])-(?P<d>" + _DAY + r")(?:T|\b)"
    r"|(?P<mon>" + _MONTH + r")\s+(?P<md>" + _DAY + r")(?:st|nd|rd|th)?\b(?:,?\s+(?P<my>[12]\d{3})\b)?"
    r"|(?P<dm>" + _DAY + r")(?:st|nd|rd|th)?\s+(?P<mon2>" + _MONTH + r")(?:\s+(?P<dmy>[12]\d{3})\b)?"
    r"|(?=\d{1,2}:\d{2}))" + _TIME +
    r"|\b(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?P<unit>second|minute|hour|day|week|month)s?"
    r"\s+ago\b|\b(?P<rel>yesterday|just now|today)\b",
    re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10}
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000}
_AGO = {"yesterday": -86400}  # "just now", "today": 0
_EPOCH = datetime(2000, 1, 1)  # dates without a year are read in 2000 (a leap year: February 29 exists)


@dataclass
class _Mention:
    value: str
    start: int
    end: int
    before: str  # the words of its clause before it, since the previous value
    since: str  # the text since the previous value, across clauses ("Aaron; no, Sabrina")
    after: str  # a phrase just after it that speaks of it ("(latest)", "was the first"), or ""
    rest: str  # when it is the last value of its clause and has no such phrase: the rest of the clause
    linked: bool  # an item of a list with the previous value (nothing but commas, "and", bullets between)
    alone: bool  # the only value of its clause ("Red.", "No - plain Red!", "I have Red.")
    sentence: int  # which sentence of the answer it is in
    role: Role = Role.PLAIN
    shared: bool = False  # its role comes from the words before it, which the items of a list share
    stamp: tuple[str, float] | None = None  # (kind, order) of the timestamp written next to it


def read_latest(response: str, expected: str, rivals: list[str], noun: str) -> LatestVerdict:
    """Whether the value `response` gives as the current one is `expected`; `rivals` are the values that can be
    confused with it (the other values the user stated), `noun` names the fact in reasons ("colour")."""
    want = normalize(expected)
    text = unicodedata.normalize("NFKC", response).replace("\u2019", "'")
    text = _ARROW.sub(" then ", text)
    mentions = _mentions(text, [c for c in rivals if normalize(c) != want] + [expected])
    named = {normalize(m.value) for m in mentions}
    if want not in named:
        return LatestVerdict(score=0.0, reason=f"{expected!r} is not in the answer.", conclusive=True)
    if named == {want}:
        if all(m.role is Role.NEG for m in mentions):
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


def _values_pattern(values: list[str]) -> re.Pattern[str]:
    """Any of `values` as whole words, any case, any spacing ("navy" in "Navy!" and in "navy-blue", not in
    "navyish"); the longer of two values that start at one place wins ("Red Orange" over "Red")."""
    longest_first = sorted((v for v in values if v.strip()), key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(re.escape(w) for w in v.split()) for v in longest_first)
    return re.compile(r"(?<!\w)(?:" + alternatives + r")(?!\w)", re.IGNORECASE)


def _mentions(text: str, values: list[str]) -> list[_Mention]:
    """Every mention of a value in reading order, with its words and role."""
    if not any(v.strip() for v in values):
        return []
    pattern = _values_pattern(values)
    by_words = {normalize(v): v for v in values}
    spans = [(m.start(), m.end(), by_words[normalize(m.group())]) for m in pattern.finditer(text)]
    ends = [m.end() for m in _BOUNDARY.finditer(text)]
    clauses = list(zip([0] + ends, ends + [len(text)]))
    out: list[_Mention] = []
    cursor = 0  # where the words of the next mention begin: after the previous one and its phrase
    for start, end, value in spans:
        clause, clause_end = next((a, b) for a, b in clauses if a <= start < b)
        later_in_clause = any(start < a < clause_end for a, _, _ in spans)
        alone = sum(clause <= a < clause_end for a, _, _ in spans) == 1
        gap = text[cursor:start]
        after = _PREDICATE.match(text, end)
        phrase = after.group(after.lastgroup or 0) if after else ""
        if pattern.search(phrase):
            after, phrase = None, ""  # "(you said Brown)" speaks of Brown
        rest = text[end:clause_end] if not after and not later_in_clause else ""
        out.append(_Mention(value, start, end, text[max(clause, cursor):start], gap, phrase, rest,
                            linked=bool(out) and _listed(text, gap, out[-1], start, end), alone=alone,
                            sentence=len(_SENTENCE_END.findall(text, 0, start))))
        cursor = after.end() if after else end
    _stamp(text, out)
    _assign_roles(out, text, clauses)
    return out


def _listed(text: str, gap: str, previous: _Mention, start: int, end: int) -> bool:
    """Whether a value is the next item of a list after `previous`: nothing but commas, "and", bullets or timestamps
    between them, and, across a line break, each on a line of its own ("- Brown\n- Cream", not "Red\nBrown was
    the first")."""
    if _LIST_GAP.match(_STAMP.sub(" ", gap)) is None:
        return False
    return "\n" not in gap or (_item_line(text, previous.start, previous.end) and _item_line(text, start, end))


def _item_line(text: str, start: int, end: int) -> bool:
    """Whether the line of the value at start:end holds nothing else but bullets, numbers, timestamps and notes in
    brackets."""
    line_start, line_end = text.rfind("\n", 0, start) + 1, (text + "\n").find("\n", end)
    rest = _STAMP.sub(" ", text[line_start:start] + " " + text[end:line_end])
    return all(w.isdigit() for w in normalize(re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", rest)).split())


def _words(text: str) -> str:
    """`text` normalised, with "'s" read as "is" ("your name's Juliet")."""
    return normalize(re.sub(r"'s\b", " is", text))


def _cues(text: str) -> list[tuple[int, str]]:
    """(end, kind) of each cue phrase in normalised `text`."""
    return [(c.end(), str(c.lastgroup)) for c in _CUE.finditer(text) if c.lastgroup != "NONE"]


def _role(m: _Mention, has_previous: bool) -> tuple[Role, bool]:
    """The role of a mention from its words, and whether it comes from the words before it."""
    words = _words(m.before).split()[-_NEAR:]
    pre = " ".join(words)
    if _GREETING.search(pre):
        return Role.GREETING, False
    since = normalize(m.since)
    if has_previous and _CORRECT.search(since):
        return Role.CORRECT, True
    if has_previous and (pair := _SINCE_PAIR.search(m.since)):
        return (Role.NEXT if pair.group(1).lower() == "before" else Role.PAST), True
    if words[-1:] == ["from"]:
        return Role.PAST, True  # "from Brown to Cream"
    cues = _cues(pre)
    if any(kind == "NEG" and set(pre[end:].split()) <= _NEG_THROUGH for end, kind in cues):
        return Role.NEG, True
    placed = [(end, Role[kind]) for end, kind in cues if Role[kind] in _ORDER_CUES]
    if placed:
        return placed[-1][1], True  # the nearest
    post = normalize(m.after)
    post_cues = [Role[kind] for _, kind in _cues(post) if Role[kind] in _ORDER_CUES | {Role.NEG}]
    if post_cues:
        return post_cues[0], False
    recalled = any(kind == "RECALL" for _, kind in cues)
    if not recalled and (_STATED.search(pre) or _STATED_AFTER.match(post)):
        return Role.STATED, True
    rest_cues = [Role[kind] for _, kind in _cues(normalize(m.rest)) if Role[kind] in _ORDER_CUES]
    if rest_cues:
        return rest_cues[0], False
    if recalled:
        return (Role.REPORTED if _REPORTED.search(pre) else Role.RECALL), True
    if _WEAK.search(pre) or _WEAK.match(post):
        return Role.WEAK, True
    return Role.PLAIN, False


def _assign_roles(mentions: list[_Mention], text: str, clauses: list[tuple[int, int]]) -> None:
    """Each mention's role: from its own words, from the list it is in, from a clause after it, from standing alone."""
    for i, m in enumerate(mentions):
        m.role, m.shared = _role(m, i > 0)
        if m.role is Role.PLAIN and m.linked and mentions[i - 1].shared:
            m.role, m.shared = _INHERIT.get(mentions[i - 1].role, mentions[i - 1].role), True
    # "Orange? That's the last one you gave me", "Beige? No, that was the first one": a clause naming no value marks
    # the value before it.
    for a, b in clauses:
        said = _words(text[a:b])
        earlier = [m for m in mentions if m.end <= a]
        marks = [Role[kind] for _, kind in _cues(said) if Role[kind] in {Role.NOW, Role.FIRST, Role.PAST}]
        if earlier and marks and _BACK.match(said) and not any(a <= m.start < b for m in mentions) and \
                earlier[-1].role not in (Role.NEG, Role.GREETING):
            earlier[-1].role = marks[0]
    # A value said on its own, outside any list ("Red.", "No - plain Red!"), is the answer when it is the only one
    # said so; so is the value that opens the answer when the next one has words of its own ("Red, but you also
    # mentioned Brown").
    listed = {i for i, m in enumerate(mentions) if m.linked} | {i - 1 for i, m in enumerate(mentions) if m.linked}
    alone = [m for i, m in enumerate(mentions) if m.alone and i not in listed and m.role is not Role.GREETING]
    if len(alone) == 1 and alone[0].role is Role.PLAIN:
        alone[0].role = Role.OPENING
        return
    told = [m for m in mentions if m.role is not Role.GREETING]
    if told and told[0].role is Role.PLAIN and set(normalize(text[:told[0].start]).split()) <= _FILLER and (
            len(told) == 1 or (not told[1].linked and told[1].role is not Role.PLAIN)):
        told[0].role = Role.OPENING


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
    told = [m for m in mentions if m.role not in (Role.NEG, Role.GREETING)]
    claims = _claims(told)
    if claims and all(told[i].role is Role.STATED for i in claims) and \
            len({told[i].sentence for i in claims}) == len(claims):
        # Statements one after another ("My favourite colour is Coral. My favourite colour is Gold."), no word on
        # which is current: the latest last, as with values listed.
        return [(told[claims[-1]].value, "the last of the values stated" if len(claims) > 1 else _HOW[Role.STATED])]
    if claims:
        readings = {normalize(told[i].value): (told[i].value, _HOW[told[i].role]) for i in claims}
        return list(readings.values())
    stamped = [(m.stamp, i) for i, m in enumerate(told) if m.stamp]
    if len(stamped) == len(told) and len({s[0] for s, _ in stamped}) == 1 and len({s for s, _ in stamped}) > 1:
        return [(told[max(stamped)[1]].value, "the latest by its timestamps")]
    order = _history(told)
    if not order:
        return []
    if _NEWEST_FIRST.search(normalize(text)):
        return [(order[0].value, "the first of the values stated, newest first")]
    ordered = any(m.role in (Role.FIRST, Role.PAST, Role.NEXT) for m in told)
    return [(order[-1].value, "the latest of the history it tells" if ordered else "the last of the values stated")]


def _claims(told: list[_Mention]) -> list[int]:
    """Which of the mentions the answer claims as current (indices into `told`)."""
    claims: list[int] = []
    strong = any(m.role in _CLAIMS - {Role.OPENING} for m in told)
    for i, m in enumerate(told):
        if m.role is Role.CORRECT:
            claims.clear()  # a correction takes back the answer given before it
        goes_on = i - 1 in claims and m.role in (Role.NEXT, Role.NOW) and _goes_on(told[i - 1], m)
        if goes_on:
            claims.remove(i - 1)  # a sequence going on from an opening value ends in the claim
        if goes_on or m.role in _CLAIMS or (m.role is Role.REPORTED and not strong) or (
                m.role is Role.NEXT and i - 1 in claims):
            claims.append(i)
    return claims


def _goes_on(before: _Mention, m: _Mention) -> bool:
    """Whether `m` (marked next or now) takes over the claim of the value before it ("Brown, then Cream", "Brown,
    and now Red"); a stated value keeps its claim ("Your favourite is Brown. Later you changed it to Cream.")."""
    if before.role is Role.NEXT:
        return True
    if before.role in (Role.OPENING, Role.REPORTED) and m.role is Role.NEXT:
        return True
    return before.role is Role.OPENING and before.sentence == m.sentence


def _history(told: list[_Mention]) -> list[_Mention]:
    """The mentions in the order of the history the answer tells: first ones first, "before that" before the value
    before it, "then" after it (or after everything, at the start of a sentence), the rest in the order told."""
    order: list[_Mention] = []
    for i, m in enumerate(told):
        if not order or (m.role is Role.NEXT and told[i - 1].sentence != m.sentence):
            order.append(m)  # a sentence opening on "then" goes on with the story told so far
            continue
        at = order.index(told[i - 1])
        if m.role is Role.FIRST:
            order.insert(0, m)
        elif m.role is Role.PAST:
            order.insert(at, m)
        else:
            order.insert(at + 1, m)
    return order


# -- timestamps ----------------------------------------------------------------------------------------------------
def _stamp(text: str, mentions: list[_Mention]) -> None:
    """Give each mention the timestamp written next to it: before the values ("- 2024-03-01 10:02: blue", "on March 3
    you said blue") or after them ("blue (2 days ago)"), whichever way stamps more of them (before, on a tie)."""
    before = [_last_stamp(text, mentions[i - 1].end if i else 0, m.start) for i, m in enumerate(mentions)]
    after = [_first_stamp(text, m.end, nxt.start) for m, nxt in zip(mentions, mentions[1:])]
    after.append(_first_stamp(text, mentions[-1].end, len(text)) if mentions else None)
    chosen = before if sum(map(bool, before)) >= sum(map(bool, after)) else after
    for m, stamp in zip(mentions, chosen):
        m.stamp = stamp


def _last_stamp(text: str, start: int, end: int) -> tuple[str, float] | None:
    found = list(_STAMP.finditer(text, start, end))
    return _stamp_key(found[-1]) if found else None


def _first_stamp(text: str, start: int, end: int) -> tuple[str, float] | None:
    found = _STAMP.search(text, start, end)
    return _stamp_key(found) if found else None


def _stamp_key(s: re.Match[str]) -> tuple[str, float]:
    """(kind, a number that orders stamps of that kind): kinds are what the stamp gives (a date with or without its
    year, a time, an age), so "10:02" and "March 3" are never compared."""
    g = s.groupdict()
    if g["rel"]:
        return "ago", float(_AGO.get(g["rel"].lower(), 0))
    if g["unit"]:
        n = int(g["n"]) if g["n"].isdigit() else _NUMBERS[g["n"].lower()]
        return "ago", -float(n * _SECONDS[g["unit"].lower()])
    kind, when = "", _EPOCH
    if g["y"]:
        kind, when = "ymd", _day(int(g["y"]), int(g["m"]), int(g["d"]))
    elif g["mon"] or g["mon2"]:
        year = g["my"] or g["dmy"]
        kind = "ymd" if year else "md"
        when = _day(int(year or _EPOCH.year), _MONTHS.index((g["mon"] or g["mon2"]).lower()[:3]) + 1,
                    int(g["md"] or g["dm"]))
    if g["h"]:
        hour = int(g["h"])
        if g["ap"]:
            hour = hour % 12 + (12 if g["ap"].lower() == "p" else 0)
        kind, when = kind + "t", when.replace(hour=hour, minute=int(g["mi"]), second=int(g["s"] or 0))
    return kind, (when - _EPOCH).total_seconds()


def _day(year: int, month: int, day: int) -> datetime:
    """The date, a day past the month's end read as its last ("February 30")."""
    return datetime(year, month, min(day, monthrange(year, month)[1]))
