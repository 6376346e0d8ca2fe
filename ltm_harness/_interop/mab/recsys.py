"""The recommendation source's Recall@5 as the reference computes it (`_process_recsys_dataset`):

* `entity2id.json` maps movie entities (DBpedia-style paths or names) to ids; each key is reduced to a name (its
  last "/" segment, "_", "-" and ">" as spaces, parenthesised parts dropped, whitespace collapsed);
* the output is split after its first "1." into lines (commas as line breaks when it has no "1."), each line
  stripped of a leading number ("3.", "3)", "3 -") and parenthesised parts, then snapped to the movie name nearest
  by Levenshtein distance on lower case (rapidfuzz; the reference uses `editdistance`, the same distance);
* the golds (movie ids) become names; recall@k = the share of gold names among the first k snapped names.

Ours differs in two places (`args: {scoring: reference}` gives the reference's): an empty line of the output (a
blank line between items) is not a recommendation here, where the reference snaps it to the shortest name and lets
it take a place in the top five; and of names equally near, the first in sorted order wins, where the reference's
pick follows Python's set order (it changes with the hash seed). A gold id the map does not have leaves the question
unscored (the reference stops with a KeyError)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.mab.rows import EXTRA

_PARENS = re.compile(r"\([^()]*\)")
_NUMBERING = re.compile(r"^(?:\d+[\.\)、]?\s*[\-\—\–]?\s*)?")


def movie_name(key: str) -> str:
    name = key.split("/")[-1].replace("_", " ").replace("-", " ").replace(">", " ")
    return " ".join(_PARENS.sub("", name).split())


def clean_item(text: str) -> str:
    text = _NUMBERING.sub("", _PARENS.sub("", text))
    return " ".join(text.split())


def recommendation_items(output: str) -> list[str]:
    if "1." in output:
        rest = output.split("1.", 1)[1]
    else:
        rest = output.replace(",", "\n")
    return [clean_item(line.strip()) for line in rest.split("\n")]


@dataclass
class Movies:
    """The movie names of an entity map, ready to snap outputs to."""

    id_to_name: dict[int, str]
    names: list[str]  # unique, sorted
    lowered: list[str]

    @classmethod
    def from_entity2id(cls, entity2id: Mapping[str, int]) -> "Movies":
        id_to_name = {int(v): movie_name(k) for k, v in entity2id.items()}
        names = sorted(set(id_to_name.values()))
        return cls(id_to_name, names, [n.lower() for n in names])

    def nearest(self, item: str) -> str:
        process, levenshtein = _rapidfuzz()
        found = process.extractOne(item.lower(), self.lowered, scorer=levenshtein.distance)
        return self.names[found[2]] if found is not None else ""


def _rapidfuzz() -> tuple[Any, Any]:
    """rapidfuzz's `process` and `Levenshtein`, or one line naming the extra to install."""
    try:
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        raise DefinitionError(f"memoryagentbench: the recommendation source's scoring needs rapidfuzz; {EXTRA}") from None
    return process, Levenshtein


def recall_at(output: str, gold_ids: Sequence[str], movies: Movies, reference: bool = False
              ) -> tuple[dict[int, float], list[str], list[str]] | str:
    """{1: r@1, 5: r@5, 10: r@10}, the snapped names and the gold names; or why it cannot be scored."""
    try:
        ids = [int(str(g).strip()) for g in gold_ids]
    except ValueError:
        return f"a gold is not a movie id ({list(gold_ids)[:3]!r})"
    missing = [i for i in ids if i not in movies.id_to_name]
    if missing or not ids:
        return f"gold movie id {missing[0]} is not in entity2id.json" if missing else "the question has no gold movie"
    golds = [movies.id_to_name[i] for i in ids]
    items = recommendation_items(output)
    if not reference:
        items = [i for i in items if i]
    snapped = [movies.nearest(i) for i in items[:10]]
    return {k: sum(g in snapped[:k] for g in golds) / len(golds) for k in (1, 5, 10)}, snapped, golds
