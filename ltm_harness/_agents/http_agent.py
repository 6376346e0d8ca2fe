"""An agent written in any language, reached over HTTP with a small JSON protocol.

Spec: the agent's URL, ``http://HOST:PORT/PATH`` (or ``https://...``). Every request is a POST of JSON
to that URL. Full description with an example server: docs/http-agent.md.

A message::

    POST URL  {"session": "ltm-1", "message": "My favourite colour is Red.",
               "timestamp": "2024-01-01T09:00:00+00:00", "reset": false}
    -> 2xx    {"reply": "Noted.", "prompt_tokens": 120, "completion_tokens": 3, "cost_usd": 0.0001}

``reply`` (a string) is required; ``prompt_tokens``, ``completion_tokens`` (integers) and ``cost_usd``
(a number) are optional and may be null. ``timestamp`` is the message's virtual time in ISO 8601 with a
UTC offset. ``session`` names one conversation: each agent instance of a run uses its own id, ``ltm-<n>``,
numbered in creation order (so a run is reproducible); keep a separate memory per session id.

A reset (the harness wants the agent to forget the session)::

    POST URL  {"session": "ltm-1", "reset": true}
    -> any 2xx (the body is ignored)

A non-2xx status, a body that is not JSON, or JSON without a string ``reply`` stops the run with an
error naming the URL and the problem. Each request times out after ``timeout`` seconds (default 300).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import json
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._errors import AgentError

DEFAULT_TIMEOUT = 300.0
_SNIPPET = 200


def _shown(parts: Any) -> str:
    """The URL without any user:password part or query (either may hold a secret), safe to show and store."""
    netloc = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{netloc}{parts.path}"


def shown_url(spec: str) -> str:
    return _shown(urlsplit(spec))


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "..."


class HTTPAgent(Agent):
    description = "http://HOST:PORT/PATH an agent behind HTTP (JSON protocol: docs/http-agent.md)"

    _ids = itertools.count(1)  # session ids ltm-1, ltm-2, ... in the order agents are made

    def __init__(self, spec: str, *, timeout: float | None = None) -> None:
        super().__init__(spec)
        if timeout is None:
            raw = os.environ.get("LTM_HTTP_TIMEOUT", "")
            try:
                timeout = float(raw) if raw else DEFAULT_TIMEOUT
            except ValueError:
                raise AgentError(f"LTM_HTTP_TIMEOUT={raw!r}: give the HTTP agent timeout as a number of seconds") from None
        parts = urlsplit(spec)
        try:
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            raise AgentError(f"agent {shown_url(spec)!r}: the port is not a number from 0 to 65535; write http://HOST:PORT/PATH") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AgentError(f"agent {shown_url(spec)!r}: write the agent's URL as http://HOST:PORT/PATH")
        if timeout <= 0:
            raise AgentError(f"agent {shown_url(spec)!r}: the timeout must be a positive number of seconds")
        self.url = spec
        self.shown_url = _shown(parts)
        self.timeout = float(timeout)
        self.session_id = f"ltm-{next(HTTPAgent._ids)}"
        self._http: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self._http

    async def _post(self, payload: dict[str, Any]) -> tuple[int, str]:
        """One POST; returns (status, body text). Connection problems become a AgentError."""
        try:
            async with self._client().post(self.url, json=payload) as response:
                return response.status, await response.text(errors="replace")
        except asyncio.TimeoutError:
            raise AgentError(f"agent {self.shown_url}: no answer within {self.timeout:g} s; check the agent or raise the timeout (LTM_HTTP_TIMEOUT=seconds)") from None
        except aiohttp.ClientError as exc:
            raise AgentError(f"agent {self.shown_url}: cannot be reached ({type(exc).__name__}: {exc}); check that it is running") from None

    def _fail(self, what: str) -> AgentError:
        return AgentError(f"agent {self.shown_url}: {what}; see docs/http-agent.md for the protocol")

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        payload = {
            "session": self.session_id,
            "message": message.text,
            "timestamp": message.timestamp.isoformat(),
            "reset": False,
        }
        status, body = await self._post(payload)
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise self._fail(f"answered HTTP status {status}{detail}")
        try:
            data = json.loads(body)
        except ValueError:
            raise self._fail(f"answered with a body that is not JSON ({_snippet(body) or 'empty'!r})") from None
        if not isinstance(data, dict) or not isinstance(data.get("reply"), str):
            got = "no \"reply\" field" if not isinstance(data, dict) or "reply" not in data else f"\"reply\" of type {type(data['reply']).__name__}"
            raise self._fail(f"answered JSON without a string \"reply\" ({got})")
        return Reply(
            text=data["reply"],
            prompt_tokens=self._number(data, "prompt_tokens", int),
            completion_tokens=self._number(data, "completion_tokens", int),
            cost_usd=self._number(data, "cost_usd", float),
        )

    def _number(self, data: dict[str, Any], field: str, kind: type) -> Any:
        value = data.get(field)
        if value is None:
            return None
        ok = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok or value < 0:
            want = "a non-negative integer" if kind is int else "a non-negative number"
            raise self._fail(f"answered \"{field}\": {value!r}, which is not {want} or null")
        return kind(value)

    async def reset(self) -> None:
        status, body = await self._post({"session": self.session_id, "reset": True})
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise self._fail(f"answered HTTP status {status} to a reset{detail}")

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Resuming a run: the agent is sent the turns it had answered, to rebuild its memory (docs/http-agent.md)."""
        if not turns:
            return
        payload = {"session": self.session_id, "reset": False, "restore": [
            {"message": m.text, "timestamp": m.timestamp.isoformat(), "reply": reply} for m, reply in turns]}
        status, body = await self._post(payload)
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise AgentError(f"agent {self.shown_url} cannot be resumed: it answered HTTP status {status} to the restore "
                            f"request{detail} (see 'Resuming' in docs/http-agent.md); run it again with --overwrite")

    async def close(self) -> None:
        if self._http is not None:
            http, self._http = self._http, None
            await http.close()
