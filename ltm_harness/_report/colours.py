"""One colour per agent name on a page, and the same colour on every page.

A page (a report, a comparison, a study, the results index) collects the names of all its agents and gives each
distinct name one colour, wherever it appears on the page: `retrieval` has one colour in every row of the index
and for every run of a comparison. Each name ranks the palette's colours by hashes of the name (SHA-256, so the
ranking is the same on every machine and in every run) and gets the first colour on its list that no other name
of the page holds, names served in sorted order. So a name has its own first colour on every page unless a page
also holds a name that ranks the same colour first and sorts before it; the same agents get the same colours on
every page, whatever order the page lists them in. Two names on one page never share a colour: past the nine
colours of the palette, names (still in sorted order) get further colours, generated deterministically.

The same agent shown several times on one page (in several runs of a comparison, or several configs of a study)
keeps its colour; charts tell those apart by a *variant* (0 for its first appearance, 1, 2, ... after), drawn
as dashed lines and lighter fills (svg.py) and a striped legend swatch (`.swatch.alt`).

The palette is Paul Tol's "muted" scheme, nine colours that stay distinct to readers with the common colour-vision
deficiencies; the generated ones are not chosen for that.
"""

from __future__ import annotations

import colorsys
import hashlib
from typing import Iterable

# Paul Tol, "muted" qualitative scheme (https://personal.sron.nl/~pault/): colour-blind safe, readable on white.
PALETTE = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]
GOLDEN_ANGLE = 137.508  # degrees: successive generated hues stay far apart


def preferences(name: str) -> list[int]:
    """The palette slots in the order the agent name prefers them."""
    return sorted(range(len(PALETTE)), key=lambda slot: hashlib.sha256(f"{slot}:{name}".encode("utf-8")).digest())


def home_slot(name: str) -> int:
    """The palette slot an agent name gets when nothing else on the page claims it."""
    return preferences(name)[0]


def page_slots(names: Iterable[str]) -> dict[str, int]:
    """A colour slot for every distinct agent name of a page: the first free slot of its preferences, names served
    in sorted order; once the palette is used up, the next generated slot (9, 10, ...), in the same order."""
    slots: dict[str, int] = {}
    taken: set[int] = set()
    extra = len(PALETTE)
    for name in sorted(set(names)):
        free = [slot for slot in preferences(name) if slot not in taken]
        if free:
            slots[name] = free[0]
        else:
            slots[name], extra = extra, extra + 1
        taken.add(slots[name])
    return slots


def variants(names: Iterable[str]) -> list[int]:
    """For each agent in page order, how many times its name came before it (0: its first appearance)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        out.append(seen.get(name, 0))
        seen[name] = out[-1] + 1
    return out


def slot_colour(slot: int) -> str:
    """The colour of a slot: the palette's, then generated ones (hues a golden angle apart, two lightnesses)."""
    if slot < len(PALETTE):
        return PALETTE[slot]
    k = slot - len(PALETTE)
    red, green, blue = colorsys.hls_to_rgb((k * GOLDEN_ANGLE % 360) / 360, 0.42 if k % 2 else 0.58, 0.55)
    return "#{:02X}{:02X}{:02X}".format(round(red * 255), round(green * 255), round(blue * 255))


def colour_css(slots: Iterable[int]) -> str:
    """The page's swatch classes: `.c<slot>` for every slot it uses, and `.swatch.alt` for an agent's later
    appearances."""
    rules = [f".c{slot} {{ background-color: {slot_colour(slot)}; }}" for slot in sorted(set(slots))]
    rules.append(".swatch.alt { background-image: repeating-linear-gradient(135deg, rgba(255, 255, 255, .65) 0 2px, "
                 "transparent 2px 4px); }")
    return "\n".join(rules) + "\n"
