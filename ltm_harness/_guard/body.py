"""A reply body read with its decoded size capped: the raw bytes are decompressed here (gzip, deflate), never by
the HTTP library, so that a small compressed body that unpacks to gigabytes (a "gzip bomb") or an endless body
stops at `limit` bytes with `TooLarge`, having held at most about `limit` bytes in memory."""

from __future__ import annotations

import zlib

ENCODINGS = ("gzip", "deflate", "identity")
ACCEPT_ENCODING = "gzip, deflate"
STEP = 1024 * 1024  # bytes unpacked per step


class TooLarge(ValueError):
    """A body over its limit, or in an encoding that cannot be bounded."""


class BoundedBody:
    """Feed raw chunks as they arrive; `feed` raises TooLarge as soon as the decoded size passes `limit`."""

    def __init__(self, limit: int, content_encoding: str | None = None) -> None:
        self.limit = limit
        self.size = 0
        self._chunks: list[bytes] = []
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ENCODINGS):
            raise TooLarge(f"the reply is encoded as {content_encoding!r}; only gzip and deflate are read")
        self._inflate = None
        if codings:
            # 47 = 32 + 15: a zlib or gzip header, detected; raw deflate is retried below
            self._inflate = zlib.decompressobj(47 if codings[0] == "gzip" else 15)
            self._raw_deflate = codings[0] == "deflate"

    def _take(self, data: bytes) -> None:
        if data:
            self.size += len(data)
            if self.size > self.limit:
                raise TooLarge(f"the reply is larger than {self.limit:,} bytes")
            self._chunks.append(data)

    def feed(self, chunk: bytes) -> None:
        if self._inflate is None:
            self._take(chunk)
            return
        data = chunk
        while data:
            room = min(self.limit - self.size + 1, STEP)  # unpacked a step at a time: never much beyond the limit
            try:
                out = self._inflate.decompress(data, room)
            except zlib.error:
                if self._raw_deflate and self.size == 0 and not self._chunks:  # deflate sent without its zlib header
                    self._inflate = zlib.decompressobj(-15)
                    self._raw_deflate = False
                    continue
                raise TooLarge("the reply's compressed body is damaged") from None
            self._take(out)
            data = self._inflate.unconsumed_tail
            if self._inflate.eof:
                break

    def finish(self) -> bytes:
        if self._inflate is not None:
            self._take(self._inflate.flush(self.limit - self.size + 1))
        body = b"".join(self._chunks)
        self._chunks = [body]
        return body
