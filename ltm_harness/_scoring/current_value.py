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
`expected` and another value: then a judge decides, or the test stays unscored. It is inconclusive too when the rule
cannot read the answer with certainty: values named as examples of what people like ("Popular colours include red,
blue and green") or after the answer says it has no memory of the fact; `expected` given only approximately ("a
shade of red"); values given as alternatives of one another rather than as changes ("initially Red, later
alternative descriptions Cream and Brown"); a value followed by others recalled in no order ("I remember Red, and
you also mentioned Cream and Brown": the last one recalled is not the latest).

The mentions and their roles are read in `value_mentions`, timestamps in `value_stamps`.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

from ltm_harness._scoring.rules import normalize
from ltm_harness._scoring.value_mentions import Mention, Role, mentions_of


class LatestVerdict(BaseModel):
    """The rule's verdict on one answer: a score of 0 or 1, why, and whether the rule could tell."""

    score: float
    reason: str
    conclusive: bool


_CLAIMS = {Role.NOW, Role.STATED, Role.OPENING, Role.CORRECT}
_HOW = {Role.NOW: "marked as the current one", Role.STATED: "stated as the answer", Role.OPENING: "stated as the answer",
        Role.REPORTED: "stated as the answer", Role.CORRECT: "given as a correction",
        Role.NEXT: "the end of the sequence it tells"}
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure)\b")
_HEDGE_BREAK = re.compile(r"\b(not(?! sure| certain)|no longer|rather than|instead of|than|nor|or rather|or actually)\b")
_UNSURE = re.compile(r"\b(?:not sure|unsure|not certain|dont know|do not know|cant remember|cannot remember|cant recall|"
                     r"dont remember|cant tell|cannot tell)(?: \w+){0,3} (?:which|whether)\b|\blost track\b|"
                     r"\bwhich (?:one |of (?:these|them|those) )?(?:would|do|should|shall|did) you\b|"
                     r"\bwhich (?:one )?is (?:it|correct|right)\b|\btorn between\b|\b(?:cant|cannot) decide\b")
_NEWEST_FIRST = re.compile(r"\b(?:(?:newest|latest|most recent)(?: one| ones| entries)? (?:first|at the top|on top)|"
                           r"(?:in )?reverse(?: chronological)? order)\b")

_ARROW = re.compile(r"\s*(?:->|=>|\u2192|\u27f6|\u21d2)\s*")
# What makes a reading uncertain (in normalised text): values named as examples of what people like, or after the
# answer said it has no memory of the fact; a value given only approximately; values given as alternatives of one
# another rather than as changes.
_GENERIC = re.compile(r"\b(?:popular|common|commonly|many people|most people|some people|a lot of people|"
                      r"people (?:often|usually|tend|generally|typically|commonly)|typical|typically|for example|"
                      r"for instance|eg|examples?)\b")
_NO_MEMORY = re.compile(r"\b(?:(?:dont|do not|i have no|i dont keep) (?:have )?(?:any )?(?:memory|memories|record|records|"
                        r"information|info|data|access)|no (?:memory|record|information) (?:of|about)|as an ai|"
                        r"(?:cant|cannot|can not|unable to) (?:access|see) (?:past|previous|earlier|our)|"
                        r"(?:havent|have not|never|didnt|did not) (?:told|tell|given|give|mentioned|mention|shared|share)"
                        r" (?:me|it|that|your))\b")
_APPROX = re.compile(r"\b(?:shade|shades|kind|sort|type|tone|tones|hue|variant|variation|version|form) of(?: \w+)?$|"
                     r"\b(?:something|somewhere) (?:like|around|between)$|\b(?:close|similar|akin) to$")
_ALTERNATIVE = re.compile(r"\b(?:alternatives?|alternatively|alternate|variations?|also (?:described|called|known|"
                          r"referred to) as|also goes by|aka|synonyms?|interchangeably)\b")


def read_latest(response: str, expected: str, rivals: list[str], noun: str) -> LatestVerdict:
    """Whether the value `response` gives as the current one is `expected`; `rivals` are the values that can be
    confused with it (the other values the user stated), `noun` names the fact in reasons ("colour")."""
    want = normalize(expected)
    text = unicodedata.normalize("NFKC", response).replace("\u2019", "'")
    text = _ARROW.sub(" then ", text)
    mentions = mentions_of(text, [c for c in rivals if normalize(c) != want] + [expected])
    named = {normalize(m.value) for m in mentions}
    if want not in named:
        return LatestVerdict(score=0.0, reason=f"{expected!r} is not in the answer.", conclusive=True)
    doubt = _uncertain(text, mentions, want, len(named))
    if doubt is not None:
        return LatestVerdict(score=0.0, conclusive=False, reason=f"The answer names {expected!r} but {doubt}.")
    if named == {want}:
        if all(m.role is Role.NEG for m in mentions):
            return LatestVerdict(score=0.0, reason=f"The answer denies {expected!r}.", conclusive=True)
        return LatestVerdict(score=1.0, reason=f"{expected!r} is the only {noun} in the answer.", conclusive=True)
    hedged = _hedge(text, mentions, want)
    if hedged is not None:
        return LatestVerdict(score=0.0, reason=f"The answer hedges between {expected!r} and {hedged!r}.", conclusive=True)
    readings = _readings(mentions, text)
    if readings is None:
        return LatestVerdict(score=0.0, conclusive=False, reason=f"The answer names {expected!r} but gives no {noun} "
                                                                 "as the current one and recalls the others in no order.")
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


def _uncertain(text: str, mentions: list[Mention], want: str, values: int) -> str | None:
    """Why the rule cannot read the answer with certainty, if it cannot: it names values only as examples of what
    people like ("Popular colours include red, blue and green") or after saying it has no memory of the fact; it
    gives `want` only approximately ("a shade of red"); or it gives values as alternatives of one another rather than
    as changes ("initially Red, later alternative descriptions Cream and Brown")."""
    words = normalize(text)
    if _NO_MEMORY.search(words):
        return "says it has no memory of it"
    sentences = {m.sentence for m in mentions if normalize(m.value) == want}
    for m in mentions:
        if m.sentence in sentences and _GENERIC.search(normalize(m.before)):
            return "only as an example of what people like, not as one it remembers"
    if any(normalize(m.value) == want and _APPROX.search(normalize(m.before)) for m in mentions):
        return "only approximately"
    if values > 1 and _ALTERNATIVE.search(words):
        return "gives the values as alternatives of one another, not as changes"
    return None


def _hedge(text: str, mentions: list[Mention], want: str) -> str | None:
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


def _readings(mentions: list[Mention], text: str) -> list[tuple[str, str]] | None:
    """The values the answer gives as current (more than one when it contradicts itself), each with how it gives it;
    None when it tells values with no claim and in no order the rule can read."""
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
    if not ordered and order[-1].role is Role.RECALL and any(m.role is not Role.RECALL for m in told):
        return None  # "a shade of Red, and you also mentioned Cream and Brown": what is recalled after is in no order
    return [(order[-1].value, "the latest of the history it tells" if ordered else "the last of the values stated")]


def _claims(told: list[Mention]) -> list[int]:
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


def _goes_on(before: Mention, m: Mention) -> bool:
    """Whether `m` (marked next or now) takes over the claim of the value before it ("Brown, then Cream", "Brown,
    and now Red"); a stated value keeps its claim ("Your favourite is Brown. Later you changed it to Cream.")."""
    if before.role is Role.NEXT:
        return True
    if before.role in (Role.OPENING, Role.REPORTED) and m.role is Role.NEXT:
        return True
    return before.role is Role.OPENING and before.sentence == m.sentence


def _history(told: list[Mention]) -> list[Mention]:
    """The mentions in the order of the history the answer tells: first ones first, "before that" before the value
    before it, "then" after it (or after everything, at the start of a sentence), the rest in the order told."""
    order: list[Mention] = []
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

