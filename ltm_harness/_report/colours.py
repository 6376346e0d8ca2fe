"""One colour per agent name, the same in every report and comparison.

The colour of an agent is its name's SHA-256 taken modulo the palette (Paul Tol's "muted" scheme, whose nine colours
stay distinct to readers with the common colour-vision deficiencies), so `retrieval` has the same colour in every
page. Two agents of one page whose names land on the same colour (or one agent in two runs of a comparison) are told
apart by moving the later one to the next free colour; only when a page holds more agents than the palette has
colours do colours repeat.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

# Paul Tol, "muted" qualitative scheme (https://personal.sron.nl/~pault/): colour-blind safe, readable on white.
PALETTE = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]


def home_slot(name: str) -> int:
    """The palette slot an agent name gets when nothing else in the page claims it."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % len(PALETTE)


def agent_slots(names: Sequence[str]) -> list[int]:
    """A palette slot per agent (in the order given): its name's home slot, or the next free one when an earlier
    agent of the page holds it. Agents are served in the order given, so the first of a name keeps its colour."""
    taken: set[int] = set()
    slots = []
    for name in names:
        slot = home_slot(name)
        if len(taken) < len(PALETTE):
            while slot in taken:
                slot = (slot + 1) % len(PALETTE)
        taken.add(slot)
        slots.append(slot)
    return slots


def slot_colour(slot: int) -> str:
    return PALETTE[slot % len(PALETTE)]
