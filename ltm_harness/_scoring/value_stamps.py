"""Timestamps written next to values in an answer ("- 2024-03-01 10:02: blue", "blue (2 days ago)"), read by a few
patterns for the forms answers use (a fuzzy date parser finds dates in anything), so that `current_value` can order
values by them. Kinds keep stamps apart: a date with or without its year, a time, an age."""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import datetime

Stamp = tuple[str, float]  # (kind, a number that orders stamps of that kind)

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
_TIME = (r"(?:,?\s*(?:at\s+)?(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?::(?P<s>[0-5]\d))?\b\s*"
         r"(?:(?P<ap>[ap])\.?m\b\.?)?)?")
STAMP = re.compile(
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


def stamps(text: str, spans: list[tuple[int, int]]) -> list[Stamp | None]:
    """The timestamp written next to each value at `spans` (start, end, in reading order): before the values ("-
    2024-03-01 10:02: blue", "on March 3 you said blue") or after them ("blue (2 days ago)"), whichever way stamps
    more of them (before, on a tie)."""
    before = [_last_stamp(text, spans[i - 1][1] if i else 0, start) for i, (start, _) in enumerate(spans)]
    after = [_first_stamp(text, end, nxt[0]) for (_, end), nxt in zip(spans, spans[1:])]
    after.append(_first_stamp(text, spans[-1][1], len(text)) if spans else None)
    return before if sum(map(bool, before)) >= sum(map(bool, after)) else after


def _last_stamp(text: str, start: int, end: int) -> Stamp | None:
    found = list(STAMP.finditer(text, start, end))
    return _stamp_key(found[-1]) if found else None


def _first_stamp(text: str, start: int, end: int) -> Stamp | None:
    found = STAMP.search(text, start, end)
    return _stamp_key(found) if found else None


def _stamp_key(s: re.Match[str]) -> Stamp:
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
