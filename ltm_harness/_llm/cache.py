"""A disk cache of LLM responses (judge and generation), keyed by endpoint, model, messages and parameters
(`client.cache_key`). Agents' calls are never cached: they are what is tested.

One small JSON file per response, under `<dir>/<first two hex>/<hash>.json`, written atomically
(temporary file + rename), so concurrent runs and a killed process never leave a torn entry. A hit
costs nothing and makes re-scoring reproducible; delete the folder to start afresh.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ValidationError


class CacheEntry(BaseModel):
    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_counted: bool = False
    batch: str | None = None  # the judge batch that answered it (priced at the batch discount)


class LLMCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        path = self._path(key)
        try:
            entry = CacheEntry.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):  # missing, or unreadable: treat as a miss and overwrite later
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int, usage_counted: bool,
            batch: str | None = None) -> None:
        """Keep a response. The cache only saves calls: a write that fails (a full disk, a read-only folder) leaves
        no entry, not even a temporary file, and the run goes on."""
        path = self._path(key)
        data = CacheEntry(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                          usage_counted=usage_counted, batch=batch).model_dump_json(exclude_none=True)
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
