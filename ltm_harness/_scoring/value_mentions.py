"""The mentions of known values in an answer, each with the words around it and its *role*: what the answer says of
it (marked current, stated, opening the answer, reported, a correction, first or earlier, the next of a sequence,
recalled, denied, a greeting). `current_value` reads the value given as current from them; the rules of reading
are in its docstring.

The cues are a closed list of English phrases in normalised text; the one parse that matters (which value a cue
belongs to) needs the values' positions, which a tagger would not give, so it is done here by hand."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, auto

from ltm_harness._scoring.rules import normalize
from ltm_harness._scoring.value_stamps import STAMP, Stamp, stamps


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


ORDER_CUES = {Role.NOW, Role.FIRST, Role.PAST, Role.NEXT}  # cue words that place a value in time
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

# -- the text around values ----------------------------------------------------------------------------------------
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


@dataclass
class Mention:
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
    stamp: Stamp | None = None  # (kind, order) of the timestamp written next to it



def _values_pattern(values: list[str]) -> re.Pattern[str]:
    """Any of `values` as whole words, any case, any spacing ("navy" in "Navy!" and in "navy-blue", not in
    "navyish"); the longer of two values that start at one place wins ("Red Orange" over "Red")."""
    longest_first = sorted((v for v in values if v.strip()), key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(re.escape(w) for w in v.split()) for v in longest_first)
    return re.compile(r"(?<!\w)(?:" + alternatives + r")(?!\w)", re.IGNORECASE)


def mentions_of(text: str, values: list[str]) -> list[Mention]:
    """Every mention of a value in reading order, with its words and role."""
    if not any(v.strip() for v in values):
        return []
    pattern = _values_pattern(values)
    by_words = {normalize(v): v for v in values}
    spans = [(m.start(), m.end(), by_words[normalize(m.group())]) for m in pattern.finditer(text)]
    ends = [m.end() for m in _BOUNDARY.finditer(text)]
    clauses = list(zip([0] + ends, ends + [len(text)]))
    out: list[Mention] = []
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
        out.append(Mention(value, start, end, text[max(clause, cursor):start], gap, phrase, rest,
                            linked=bool(out) and _listed(text, gap, out[-1], start, end), alone=alone,
                            sentence=len(_SENTENCE_END.findall(text, 0, start))))
        cursor = after.end() if after else end
    for m, stamp in zip(out, stamps(text, [(m.start, m.end) for m in out])):
        m.stamp = stamp
    _assign_roles(out, text, clauses)
    return out


def _listed(text: str, gap: str, previous: Mention, start: int, end: int) -> bool:
    """Whether a value is the next item of a list after `previous`: nothing but commas, "and", bullets or timestamps
    between them, and, across a line break, each on a line of its own ("- Brown\n- Cream", not "Red\nBrown was
    the first")."""
    if _LIST_GAP.match(STAMP.sub(" ", gap)) is None:
        return False
    return "\n" not in gap or (_item_line(text, previous.start, previous.end) and _item_line(text, start, end))


def _item_line(text: str, start: int, end: int) -> bool:
    """Whether the line of the value at start:end holds nothing else but bullets, numbers, timestamps and notes in
    brackets."""
    line_start, line_end = text.rfind("\n", 0, start) + 1, (text + "\n").find("\n", end)
    rest = STAMP.sub(" ", text[line_start:start] + " " + text[end:line_end])
    return all(w.isdigit() for w in normalize(re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", rest)).split())


def _words(text: str) -> str:
    """`text` normalised, with "'s" read as "is" ("your name's Juliet")."""
    return normalize(re.sub(r"'s\b", " is", text))


def _cues(text: str) -> list[tuple[int, str]]:
    """(end, kind) of each cue phrase in normalised `text`."""
    return [(c.end(), str(c.lastgroup)) for c in _CUE.finditer(text) if c.lastgroup != "NONE"]


def _role(m: Mention, has_previous: bool) -> tuple[Role, bool]:
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
    placed = [(end, Role[kind]) for end, kind in cues if Role[kind] in ORDER_CUES]
    if placed:
        return placed[-1][1], True  # the nearest
    post = normalize(m.after)
    post_cues = [Role[kind] for _, kind in _cues(post) if Role[kind] in ORDER_CUES | {Role.NEG}]
    if post_cues:
        return post_cues[0], False
    recalled = any(kind == "RECALL" for _, kind in cues)
    if not recalled and (_STATED.search(pre) or _STATED_AFTER.match(post)):
        return Role.STATED, True
    rest_cues = [Role[kind] for _, kind in _cues(normalize(m.rest)) if Role[kind] in ORDER_CUES]
    if rest_cues:
        return rest_cues[0], False
    if recalled:
        return (Role.REPORTED if _REPORTED.search(pre) else Role.RECALL), True
    if _WEAK.search(pre) or _WEAK.match(post):
        return Role.WEAK, True
    return Role.PLAIN, False


def _assign_roles(mentions: list[Mention], text: str, clauses: list[tuple[int, int]]) -> None:
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

