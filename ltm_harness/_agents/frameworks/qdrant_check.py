"""Local Qdrant's files checked before Qdrant opens them: its points are pickles, and a pickle can name any code.

Local Qdrant (`QdrantClient(path=...)`, mem0's store in the run folder) keeps each collection in
`collection/<name>/storage.sqlite`, one row per point, the point a `pickle` of `PointStruct`; opening the client
unpickles every row (`CollectionPersistence.load`). A row replaced by a pickle naming `os.system` would run it. So
before the adapter opens (or re-opens, after a roll-back) the store, `check_points` unpickles every row itself with
an unpickler that builds only Qdrant's own models (the pydantic classes of `qdrant_client.http.models.models`, the
one global a point's pickle names) and plain data; any other name is refused with its module and name, and the
store is not opened. Python's pickle can call only what its unpickler's `find_class` returns (globals, `REDUCE`,
`NEWOBJ`, `INST`, `OBJ` and the extension registry all go through it; `persistent_load` is not given), so this
pass cannot run code, and what it accepts cannot either when Qdrant unpickles it again. (The recipe is the Python
documentation's "Restricting Globals".) The files are read with SQLite in read-only mode.
"""

from __future__ import annotations

import io
import pickle
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ltm_harness._agents.frameworks.store_trust import UntrustedStore, stores_trusted

MODELS = "qdrant_client.http.models.models"
STORAGE = "storage.sqlite"


class _PointUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == MODELS:
            import importlib

            found = getattr(importlib.import_module(MODELS), name, None)
            if isinstance(found, type) and issubclass(found, BaseModel) and found.__module__ == MODELS:
                return found
        raise _Named(f"{module}.{name}")


class _Named(Exception):
    """A pickle names a global the store's points never name."""


def check_points(root: Path, framework: str = "mem0") -> int:
    """Every point of every collection under `root` (local Qdrant's folder) unpickles to Qdrant's own models and
    plain data; UntrustedStore names the first file that holds anything else (unless the user trusts the folder).
    Returns the points checked."""
    if stores_trusted() or not root.is_dir():
        return 0
    checked = 0
    for path in sorted(root.rglob(STORAGE)):
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error:
            continue  # Qdrant itself will say it cannot open the file
        try:
            rows = conn.execute("SELECT point FROM points")
            for (blob,) in rows:
                checked += 1
                _check(blob, path, framework)
        except sqlite3.Error:
            continue  # no points table (yet): Qdrant makes it
        finally:
            conn.close()
    return checked


def _check(blob: Any, path: Path, framework: str) -> None:
    if not isinstance(blob, bytes):
        raise UntrustedStore(framework, path, f"holds a point stored as {type(blob).__name__}, not a pickle")
    try:
        _PointUnpickler(io.BytesIO(blob)).load()
    except _Named as named:
        raise UntrustedStore(framework, path,
                             f"holds a point whose pickle names {named}, which could run code") from None
    except (RecursionError, MemoryError):
        raise UntrustedStore(framework, path, "holds a point whose pickle is nested too deep to read") from None
    except Exception as exc:  # noqa: BLE001  (a damaged pickle: any error pickle raises)
        raise UntrustedStore(framework, path, f"holds a point that is not a readable pickle "
                             f"({type(exc).__name__})") from None
