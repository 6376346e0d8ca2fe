"""One colour per agent name, the same in every report and comparison.

Each agent name ranks the palette's colours by hashes of the name (SHA-256, so the ranking is the same on every
machine and in every run) and gets the first colour on its list that no other agent of the page holds. Names are
served in sorted order, whatever order the page lists them in, so the same agents get the same colours in every
page; an agent's colour only changes when a page also holds an agent that ranks the same colour first and is served
before it. A second agent of the same name (the same agent in two runs of a comparison) takes its name's next free
colour. Only a page with more agents than colours repeats one.

The palette is Paul Tol's "muted" scheme, nine colours that stay distinct to readers with the common colour-vision
deficiencies.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

# Paul Tol, "muted" qualitative scheme (https://personal.sron.nl/~pault/): colour-blind safe, readable on white.
PALETTE = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]


def preferences(name: str) -> list[int]:
    """The palette slots in the order the agent name prefers them."""
    return sorted(range(len(PALETTE)), key=lambda slot: hashlib.sha256(f"{slot}:{name}".encode("utf-8")).digest())


def home_slot(name: str) -> int:
    """The palette slot an agent name gets when nothing else in the page claims it."""
    return preferences(name)[0]


def agent_slots(names: Sequence[str]) -> list[int]:
    """A palette slot per agent (in the order given): the first free slot of its name's preferences, names served
    in sorted order, then any second agent of a name (in the order given)."""
    order = sorted(range(len(names)), key=lambda i: (names[:i].count(names[i]) > 0, names[i] if names[:i].count(names[i]) == 0 else "", i))
    taken: set[int] = set()
    slots = [0] * len(names)
    for i in order:
        wanted = preferences(names[i])
        free = [slot for slot in wanted if slot not in taken]
        slots[i] = free[0] if free else wanted[0]
        taken.add(slots[i])
    return slots


def slot_colour(slot: int) -> str:
    return PALETTE[slot % len(PALETTE)]
