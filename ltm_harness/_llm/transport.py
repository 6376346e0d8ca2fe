"""The HTTP transport under the OpenAI SDK: a response body is read here with its decoded size capped
(`llm.max_reply_bytes`), decompressing gzip/deflate itself (bounded), so an endless or bomb-sized response fails
the call (not retried: a server that sent one will send it again) instead of filling memory. Each response's status
and headers are handed to the call under way (`ratelimit.SEEN`), which paces its endpoint by them.

The SDK's HTTP library is `httpx` (or its fork `httpx2` in newer SDKs): the transport is made for whichever the
installed SDK's client is built on."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType
from typing import Any

from ltm_harness._guard.body import ACCEPT_ENCODING, BoundedBody, TooLarge
from ltm_harness._llm.ratelimit import SEEN


class ReplyTooLarge(Exception):
    """A response body over the limit (or in an encoding that cannot be bounded)."""


@cache
def _http_module() -> ModuleType:
    """The HTTP library the installed OpenAI SDK's client is built on."""
    from openai import DefaultAsyncHttpxClient

    for klass in DefaultAsyncHttpxClient.__mro__[1:]:
        if klass.__name__ == "AsyncClient":
            return importlib.import_module(klass.__module__.split(".")[0])
    return importlib.import_module("httpx")  # pragma: no cover - every SDK so far derives from AsyncClient


@cache
def _transport_class() -> type:
    http: Any = _http_module()

    class BoundedTransport(http.AsyncBaseTransport):
        def __init__(self, limit: int) -> None:
            self.limit = limit
            self.inner = http.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = ACCEPT_ENCODING
            response = await self.inner.handle_async_request(request)
            seen = SEEN.get()
            if seen is not None:  # the status and rate-limit headers, for the call's RateGate
                seen.status, seen.headers = response.status_code, response.headers
            try:
                body = BoundedBody(self.limit, response.headers.get("Content-Encoding"))
                async for chunk in response.stream:
                    body.feed(chunk)
                content = body.finish()
            except TooLarge as exc:
                raise ReplyTooLarge(f"{exc} (limit: llm.max_reply_bytes)") from None
            finally:
                await response.aclose()
            headers = [(k, v) for k, v in response.headers.multi_items()
                       if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            return http.Response(response.status_code, headers=headers, content=content, request=request,
                                 extensions=response.extensions)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BoundedTransport


def http_client(limit: int, timeout: float) -> Any:
    """The SDK's default async client, over a transport that bounds every response body to `limit` bytes."""
    from openai import DefaultAsyncHttpxClient

    return DefaultAsyncHttpxClient(transport=_transport_class()(limit), timeout=timeout)
