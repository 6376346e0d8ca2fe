"""Test definitions kept in the user cache, so that a new run on the same data, settings and code does not make them
again.

A run folder reuses its own definitions while its config and dataset code are unchanged (`definitions.fingerprint`).
A new run folder (another run name, or `run` again after a finished run) would generate them again: for a benchmark
made from a data file (LoCoMo, LongMemEval, BEAM) that is reading, checking and tokenizing the whole file each time.
So each set of definitions generated is also kept in the user cache (`<cache>/definitions/<key>/`, see
`datafiles.cache_dir`) and copied from there into the next run folder with the same key. The key is the definitions'
fingerprint (the config's dataset settings, each dataset's module file and the files it names in `source_files()`, such
as a benchmark's data file) with the harness's own code (every `.py` file of the package and every file of the
built-in datasets' folder) and pydantic's version (which writes them): an edit or an upgrade makes them again.

Bounded: a set larger than `MAX_BYTES` is not kept, and at most `KEEP` sets are (the least recently used go first).
`LTM_DEFINITIONS_CACHE=off` turns it off. Only datasets whose settings are all in their `Params` are kept (see
`cacheable`). What is copied back is read by the same checked reader as every run folder's
definitions (`definitions.read_definition`); nothing in it runs. A cache that cannot be written or read is passed over
in silence: the definitions are then generated, as without it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ltm_harness._authoring.datafiles import cache_dir, cache_turned_off
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._guard.files import hash_file
from ltm_harness._resources import PACKAGE_DIR, shipped
from ltm_harness._store.layout import MANIFEST

ENV = "LTM_DEFINITIONS_CACHE"  # "off" (or 0, false, no): never kept nor reused
KEEP = 8  # sets of definitions kept, the most recently used
MAX_BYTES = 256 << 20  # a larger set (a 10M-token haystack) is made again rather than kept twice on disk


@lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of the harness's code: its `.py` files and the built-in datasets' folder (their data files too)."""
    import pydantic

    digest = hashlib.sha256(pydantic.VERSION.encode() + b"\0")
    datasets = shipped("datasets")
    files = [p for p in PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts]
    if datasets.is_dir() and not datasets.is_relative_to(PACKAGE_DIR):  # a checkout's (a wheel's is in the package)
        files += [p for p in datasets.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in sorted(files):
        digest.update(path.as_posix().encode() + b"\0")
        hash_file(digest, path)
    return digest.hexdigest()[:16]


def _root() -> Path | None:
    if cache_turned_off(ENV):
        return None
    return cache_dir() / "definitions"


def cacheable(datasets: Sequence[DatasetInterface]) -> bool:
    """Whether the fingerprint sees every setting of these datasets: their args are their `Params` (a dataset that takes
    arguments of its own in an `__init__` of its own may hold settings the fingerprint does not see: its definitions
    are reused in their run folder only, as before)."""
    return all(type(d).__init__ is DatasetInterface.__init__ for d in datasets)


def _kept(fingerprint: str) -> Path | None:
    root = _root()
    return None if root is None else root / f"{fingerprint}-{code_hash()}"


def restore(folder: Path, fingerprint: str) -> bool:
    """Copy the definitions kept for `fingerprint` into `folder` (which does not exist), the manifest last; False
    (and no folder) when none are kept or the copy failed."""
    kept = _kept(fingerprint)
    if kept is None or not (kept / MANIFEST).is_file():
        return False
    try:
        shutil.copytree(kept, folder, ignore=shutil.ignore_patterns(MANIFEST))
        shutil.copyfile(kept / MANIFEST, folder / MANIFEST)  # last: a copy cut short is never taken for whole
        os.utime(kept)  # recently used
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return False
    return True


def keep(folder: Path, fingerprint: str) -> None:
    """Keep a copy of the definitions just generated in `folder` (unless too big, or already kept), then forget the
    least recently used beyond `KEEP`."""
    kept = _kept(fingerprint)
    if kept is None or kept.exists():
        return
    try:
        if sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) > MAX_BYTES:
            return
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.parent / f".{kept.name}.{uuid.uuid4().hex}.tmp"
        try:
            shutil.copytree(folder, tmp)
            os.replace(tmp, kept)  # whole or not at all (another process may have kept the same one first)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        sets = sorted((p for p in kept.parent.iterdir() if p.is_dir() and not p.name.startswith(".")),
                      key=lambda p: p.stat().st_mtime, reverse=True)
        for old in sets[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return
