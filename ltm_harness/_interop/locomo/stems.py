"""Porter stems kept between runs, so that a LoCoMo run whose words were all stemmed before does not import NLTK.

LoCoMo's F1 stems every word with NLTK's `PorterStemmer`. The stemmer is fast; importing NLTK is not (its package
loads most of NLTK, about 0.3 CPU s, a fifth of a LoCoMo run with an instant agent). A stem depends only on the word
and the stemmer's code, so the stems a run made are kept in the user cache (`<cache>/stems/porter-nltk-<version>.json`,
see `datafiles.cache_dir`; the NLTK version in the name, so an upgrade starts a new file) and read by the next run: a
word found there is not stemmed again, and NLTK is imported only for a word that is not (then the file gains it when
the process ends). Agents answer mostly in the conversation's words, so after the first run few words are new.

Bounded: words longer than `MAX_WORD` characters are stemmed but not kept, the file holds at most `MAX_WORDS` words
and is not read beyond `MAX_BYTES`. `LTM_STEM_CACHE=off` turns it off. A file that cannot be read, or that is not a
JSON object of strings, is passed over (and replaced by the next write); a cache that cannot be written is passed over
in silence. Like the definitions kept in the user cache, the file is trusted as the user's own.
"""

from __future__ import annotations

import atexit
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ltm_harness._authoring.datafiles import CACHE_ENV, cache_dir, cache_turned_off
from ltm_harness._guard.files import read_bytes
from ltm_harness._store.files import write_shared_text

if TYPE_CHECKING:  # pragma: no cover
    from nltk.stem.porter import PorterStemmer

ENV = "LTM_STEM_CACHE"  # "off" (or 0, false, no): neither read nor written
MAX_WORD = 40  # characters of a word kept (a longer "word" is a hostile or broken reply's, stemmed all the same)
MAX_WORDS = 200_000  # words in the file (LoCoMo's conversations and answers hold about 10,000 distinct ones)
MAX_BYTES = 16 << 20


@lru_cache(maxsize=1)
def porter() -> "PorterStemmer":
    from nltk.stem.porter import PorterStemmer  # imported on first use: nltk takes ~0.3 s to import

    return PorterStemmer()


@lru_cache(maxsize=1)
def _nltk_version() -> str | None:
    """The installed NLTK's version, read from its metadata (without importing it); None: not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nltk")
    except PackageNotFoundError:
        return None


@lru_cache(maxsize=16)
def _memo_path(off: bool, cache: str | None) -> Path | None:
    """`memo_path` for these settings (`cache`: the user cache's place, as $LTM_HARNESS_CACHE says, a key here)."""
    release = None if off else _nltk_version()
    return None if release is None else cache_dir() / "stems" / f"porter-nltk-{release}.json"


def memo_path() -> Path | None:
    """Where the stems are kept now (None: turned off, or no NLTK to name the file by)."""
    return _memo_path(cache_turned_off(ENV), os.environ.get(CACHE_ENV))


def _read(path: Path) -> dict[str, str]:
    try:
        data = json.loads(read_bytes(path, MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        return {}
    return data


class StemMemo:
    """Word -> Porter stem: from the kept file, else from NLTK (and kept when the process ends)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: dict[str, str] | None = None  # read when the first word is asked for
        self.new: dict[str, str] = {}
        self._saving = False

    @property
    def known(self) -> dict[str, str]:
        if self._known is None:
            self._known = _read(self.path) if self.path is not None else {}
        return self._known

    def stem(self, word: str) -> str:
        found = self.known.get(word)
        if found is None:
            found = self.known[word] = str(porter().stem(word))
            if self.path is not None and len(word) <= MAX_WORD:
                self.new[word] = found
                if not self._saving:
                    self._saving = True
                    atexit.register(self.save)
        return found

    def save(self) -> None:
        """Add the words stemmed now to the file (read again first: another process may have added some)."""
        if self.path is None or not self.new:
            return
        merged = _read(self.path)
        room = MAX_WORDS - len(merged)
        added = {w: s for w, s in self.new.items() if w not in merged}
        if room <= 0 or not added:
            return
        merged.update(dict(list(added.items())[:room]))
        try:  # whole or not at all; of two processes the last to write wins
            write_shared_text(self.path, json.dumps(merged, ensure_ascii=False, separators=(",", ":")))
        except OSError:
            return
        self.new.clear()


_MEMOS: dict[Path | None, StemMemo] = {}


def memo() -> StemMemo:
    """The process's stems for the cache in use now (the environment may move the user cache between runs)."""
    path = memo_path()
    found = _MEMOS.get(path)
    if found is None:
        found = _MEMOS[path] = StemMemo(path)
    return found
