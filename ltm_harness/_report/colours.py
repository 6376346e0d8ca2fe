"""One colour per agent name, the same on every page of a results folder.

A page (a run's report, a comparison, a study, the results index) gives each distinct agent name one colour,
wherever it appears on the page: `retrieval` has one colour in every row of the index and for every run of a
comparison. Within a results folder a name keeps its colour from page to page: the folder keeps each name's colour
(`.colours.json` beside the run folders, `folder_slots`), given the first time a page of the folder shows the name
and never changed, so two names of one folder never share a colour and the order in which pages list agents or
runs played them changes nothing. A name new to the folder gets the first colour on its own list that no name of
the folder holds: each name ranks the palette's colours by hashes of the name (SHA-256, the same ranking on every
machine), new names served in sorted order. Past the nine colours of the palette, names get further colours,
generated deterministically. A page with no folder of its own, or whose folder cannot be written, gives its names
colours the same way among themselves (`page_slots`).

The same agent shown several times on one page (in several runs of a comparison, or several configs of a study)
keeps its colour; charts tell those apart by a *variant* (0 for its first appearance, 1, 2, ... after), drawn
as dashed lines and lighter fills (svg.py) and a striped legend swatch (`.swatch.alt`).

The palette is Paul Tol's "muted" scheme, nine colours that stay distinct to readers with the common colour-vision
deficiencies; the generated ones are not chosen for that.
"""

from __future__ import annotations

import colorsys
import hashlib
import json
from pathlib import Path
from typing import Iterable

from ltm_harness._errors import LTMError
from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import read_text
from ltm_harness._store.files import write_shared_text
from ltm_harness._store.layout import colours_file

MAX_COLOURS_BYTES = 2 * 1024 * 1024

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


MAX_NAMES = 10_000  # names a results folder's colours keep; past it, new names get page colours only


def folder_slots(root: Path | None, names: Iterable[str]) -> dict[str, int]:
    """A colour slot for every distinct name, kept in the results folder `root` (see the module docstring): names it
    holds keep theirs, new ones are given free slots and saved. With no folder, or one that cannot be written, the
    page's own slots."""
    wanted = sorted(set(names))
    if root is None:
        return page_slots(wanted)
    kept = _read_slots(colours_file(root))
    new = [name for name in wanted if name not in kept]
    if new and len(kept) + len(new) <= MAX_NAMES:
        kept = {**_read_slots(colours_file(root)), **kept}  # read again just before writing: a narrower race
        taken = set(kept.values())
        extra = max([len(PALETTE) - 1, *taken]) + 1
        for name in new:
            free = [slot for slot in preferences(name) if slot not in taken]
            kept[name] = free[0] if free else extra
            extra += 0 if free else 1
            taken.add(kept[name])
        try:
            write_shared_text(colours_file(root), json.dumps({"version": 1, "slots": kept}, indent=1, sort_keys=True)
                              + "\n")
        except (OSError, LTMError):
            return page_slots(wanted)  # a folder that cannot be written: this page's colours only
    if any(name not in kept for name in wanted):
        return page_slots(wanted)
    return {name: kept[name] for name in wanted}


def _read_slots(path: Path) -> dict[str, int]:
    """The slots a results folder keeps; a missing, unreadable or malformed file keeps none (it is rewritten)."""
    try:
        data = jsonsafe.loads(read_text(path, MAX_COLOURS_BYTES))
    except (OSError, ValueError, LTMError):
        return {}
    slots = data.get("slots") if isinstance(data, dict) else None
    if not isinstance(slots, dict):
        return {}
    return {name: slot for name, slot in slots.items() if isinstance(name, str) and isinstance(slot, int)
            and not isinstance(slot, bool) and 0 <= slot < len(PALETTE) + MAX_NAMES}


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
