"""Sizing the filler message that should end a wait: where the scheduler's filler lands after a wake-up point.

Pure arithmetic over the recent filler reply sizes (no I/O), used by the scheduler (`scheduler.py`, rule 4)."""

from __future__ import annotations

from typing import Sequence

# Filler aims to end a wait within this share of the gap after its wake-up point (replies of unknown length land it
# anywhere between the shortest and the longest reply seen).
LANDING_BAND = 0.08
MIN_REPLIES_SEEN = 5  # filler replies seen before their spread is planned for


def landing_filler(need: int, shortest_reply: int, replies: Sequence[int], smallest: int, gap: int) -> int:
    """Filler for a wake-up point `need` tokens away, sized after every reply: where replies vary more than
    the wait's landing band, a message that may fall short (and be followed by a smaller one) can beat one
    aimed with the shortest reply, whose landing spreads over the whole range of reply lengths.

    `replies`: the recent filler reply sizes; `smallest`: the smallest filler message; `gap`: the planned gap of
    the nearest wake-up point (its band is `LANDING_BAND` of it).

    Each size is scored by the chance, over the recent filler replies, that its turn ends inside the band
    after the wake-up point, plus the chance that it ends short times the chance a later turn still lands
    (about the band over a mean turn); the best size wins, and of equals the largest."""
    direct = need - shortest_reply
    band = int(LANDING_BAND * gap)
    if len(replies) < MIN_REPLIES_SEEN or max(replies) - shortest_reply <= band:
        return direct  # the replies all land inside the band: aim with the shortest
    n = len(replies)
    retry = min(0.9, band / (smallest + sum(replies) / n))

    def score(size: int) -> float:
        short = need - size  # a reply shorter than this ends before the wake-up point
        hit = sum(short <= r <= short + band for r in replies)
        under = sum(r < short for r in replies)
        return (hit + retry * under) / n

    # The score is a step function of the size; the largest best size is `direct` or one where a reply just enters
    # the band (a size where a reply just falls short only loses that reply to the retry, so it never wins).
    best, best_score = direct, score(direct)
    for size in sorted({c for c in (need - r + band for r in replies) if smallest <= c < direct}, reverse=True):
        value = score(size)
        if value > best_score + 1e-9:
            best, best_score = size, value
    return best
