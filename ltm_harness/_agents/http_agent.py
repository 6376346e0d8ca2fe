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

History that needs no reply (a benchmark's earlier sessions; the agent should remember it)::

    POST URL  {"session": "ltm-1", "message": "Caroline: I went to a support group.",
               "timestamp": "2023-05-08T13:56:00+00:00", "reset": false, "observe": true}
    -> 2xx    an empty body, or JSON: ``reply`` optional (recorded, never scored), usage fields as above

A message said by someone other than the user carries ``"role"``: ``"assistant"`` (history the agent itself said
earlier, in a benchmark's user-assistant chat) or a speaker's name (LoCoMo's ``"Caroline"``); no ``role``: the user.

Going back (optional; independent questions, as LoCoMo's and BEAM's reference asks them)::

    POST URL  {"session": "ltm-1", "snapshot": true}    -> 2xx  {"snapshot": ANY_JSON_VALUE}
    POST URL  {"session": "ltm-1", "rewind": ANY_JSON_VALUE}  -> any 2xx

An agent without it answers the snapshot request with an error status (or JSON without ``snapshot``): its
questions are then asked in sequence, and the run says so.

A reset (the harness wants the agent to forget the session)::

    POST URL  {"session": "ltm-1", "reset": true}
    -> any 2xx (the body is ignored)

A non-2xx status, a body that is not JSON, or JSON without a string ``reply`` stops the run with an
error naming the URL and the problem. Each request times out after ``timeout`` seconds (default 300).

Redirects are not followed (a 3xx answer is an error naming where it points: the conversation is never sent
on to another host); a body is read up to ``max_reply_bytes`` decoded bytes (gzip and deflate are unpacked here,
bounded), so an endless or bomb-sized reply fails its turn instead of filling memory. A 429 or 503 with a
``Retry-After`` header (seconds or an HTTP date) is retried after that wait, capped by ``turns.retry_after_max``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
from typing import Any

import aiohttp

from ltm_harness._agents.base import USER, Agent, AgentMessage, Reply
from ltm_harness._errors import AgentError, option
from ltm_harness._guard import jsonsafe
from ltm_harness._guard.body import ACCEPT_ENCODING, BoundedBody, TooLarge
from ltm_harness._guard.limits import MAX_REPLY_BYTES, MAX_SECONDS, cut_words
from ltm_harness._guard.redact import redact_url
from ltm_harness._guard.redirects import FOLLOW_ON_ENDPOINTS, endpoint_redirect
from ltm_harness._guard.retry_after import retry_after_seconds
from ltm_harness._guard.urls import BadURL, split_url, try_split_url, unparsed_display

DEFAULT_TIMEOUT = 300.0
PING_TIMEOUT = 30.0  # seconds the ping before the first turn waits for an answer
_SNIPPET = 200


def _shown(parts: Any) -> str:
    """The URL without any user:password part or query (either may hold a secret), safe to show and store."""
    netloc = parts.netloc.rpartition("@")[2]
    return redact_url(f"{parts.scheme}://{netloc}{parts.path}")


def shown_url(spec: str) -> str:
    parts = try_split_url(spec)
    return redact_url(unparsed_display(spec)) if parts is None else _shown(parts)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return cut_words(text, _SNIPPET)


class HTTPAgent(Agent):
    description = "http://HOST:PORT/PATH an agent behind HTTP (JSON protocol: docs/http-agent.md)"

    _ids = itertools.count(1)  # session ids ltm-1, ltm-2, ... in the order agents are made

    def __init__(self, spec: str, *, timeout: float | None = None, max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        super().__init__(spec)
        if timeout is None:
            raw = os.environ.get("LTM_HTTP_TIMEOUT", "")
            try:
                timeout = float(raw) if raw else DEFAULT_TIMEOUT
            except ValueError:
                raise AgentError(f"LTM_HTTP_TIMEOUT={raw!r}: give the HTTP agent timeout as a number of seconds") from None
        try:
            parts = split_url(spec)
        except BadURL as exc:
            raise AgentError(f"agent {shown_url(spec)!r}: {exc}; write the agent's URL as http://HOST:PORT/PATH") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AgentError(f"agent {shown_url(spec)!r}: write the agent's URL as http://HOST:PORT/PATH")
        if not 0 < timeout <= MAX_SECONDS:
            raise AgentError(f"agent {shown_url(spec)!r}: the timeout must be a positive number of seconds, at most "
                             f"{MAX_SECONDS:g}; set LTM_HTTP_TIMEOUT or http.timeout")
        self.url = spec
        self.shown_url = _shown(parts)
        self.timeout = float(timeout)
        self.max_reply_bytes = max_reply_bytes
        self.session_id = f"ltm-{next(HTTPAgent._ids)}"
        self._http: aiohttp.ClientSession | None = None
        self._started = False  # the session's first request was sent (a fresh one begins with a reset)

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            # the body is unpacked by BoundedBody, not by aiohttp, so that its decoded size is bounded
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout), auto_decompress=False)
        return self._http

    async def _post(self, payload: dict[str, Any]) -> tuple[int, str]:
        """One POST; returns (status, body text). Connection problems, redirects and bodies over the limit become an
        AgentError; a 429/503 asking to retry later carries its wait (`retry_after`)."""
        try:
            async with self._client().post(self.url, json=payload, allow_redirects=FOLLOW_ON_ENDPOINTS,
                                           headers={"Accept-Encoding": ACCEPT_ENCODING}) as response:
                if 300 <= response.status < 400:
                    raise self._fail(endpoint_redirect(response.status, response.headers.get("Location"))
                                     + " as the agent")
                try:
                    body = BoundedBody(self.max_reply_bytes, response.headers.get("Content-Encoding"))
                    async for chunk in response.content.iter_chunked(65536):
                        body.feed(chunk)
                    text = body.finish().decode("utf-8", errors="replace")
                except TooLarge as exc:
                    raise self._fail(f"{exc} (limit: http.max_reply_bytes)") from None
                if response.status in (429, 503):
                    wait = retry_after_seconds(response.headers)
                    if wait is not None:
                        error = self._fail(f"answered HTTP status {response.status}, asking to retry after {wait:g} s")
                        error.retry_after = wait  # type: ignore[attr-defined]
                        raise error
                return response.status, text
        except asyncio.TimeoutError:
            raise AgentError(f"agent {self.shown_url}: no answer within {self.timeout:g} s; check the agent or raise the timeout (LTM_HTTP_TIMEOUT=seconds)") from None
        except aiohttp.ClientError as exc:
            raise AgentError(f"agent {self.shown_url}: cannot be reached ({type(exc).__name__}: {exc}); check that it is running") from None

    async def preflight(self) -> str | None:
        """The ping (docs/http-agent.md): `GET URL`, once; any HTTP answer, whatever its status, shows the agent is
        there (an agent need not implement it); a connection that fails or no answer within PING_TIMEOUT seconds
        stops the run in one line."""
        wait = min(self.timeout, PING_TIMEOUT)
        try:
            async with self._client().get(self.url, allow_redirects=FOLLOW_ON_ENDPOINTS, timeout=aiohttp.ClientTimeout(total=wait),
                                          headers={"Accept": "application/json"}):
                return None  # the body is not read
        except asyncio.TimeoutError:
            raise AgentError(f"agent {self.shown_url}: no answer to the ping (GET) within {wait:g} s; check that it is "
                             "running", fatal=True) from None
        except aiohttp.ClientError as exc:
            raise AgentError(f"agent {self.shown_url}: cannot be reached ({type(exc).__name__}: {exc}); check that it "
                             "is running", fatal=True) from None

    def _fail(self, what: str) -> AgentError:
        return AgentError(f"agent {self.shown_url}: {what}; see docs/http-agent.md for the protocol")

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        data = await self._send(message)
        if data is None or not isinstance(data.get("reply"), str):
            got = "no \"reply\" field" if data is None or "reply" not in data else \
                f"\"reply\" of type {type(data['reply']).__name__}"
            raise self._fail(f"answered JSON without a string \"reply\" ({got})")
        return self._reply(data, data["reply"])

    async def observe(self, message: AgentMessage) -> Reply | None:
        """History: sent with `"observe": true`; any 2xx answer will do, an empty body included."""
        data = await self._send(message)
        if data is None:
            return None
        said = data.get("reply")
        if said is not None and not isinstance(said, str):
            raise self._fail(f"answered JSON with \"reply\" of type {type(said).__name__} to history (observe)")
        return self._reply(data, said or "")

    async def _start(self) -> None:
        """A fresh conversation begins with a reset of its session id: session ids repeat from one run to the next
        (ltm-1, ltm-2, ...), so a server left running would otherwise answer from an earlier run's memory. An agent
        that does not accept the reset (an error status) is said once, in one line, and the run goes on."""
        if self._started:
            return
        status, body = await self._post({"session": self.session_id, "reset": True})  # no answer: the turn fails
        self._started = True  # answered: not sent again, whatever the status
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            logging.getLogger("ltm_harness.http").warning(
                "agent %s: answered HTTP status %d to the reset sent before session %s's first turn%s; an agent that "
                "keeps sessions across runs may answer from an earlier run's memory (docs/http-agent.md, 'A reset')",
                self.shown_url, status, self.session_id, detail)

    async def _send(self, message: AgentMessage) -> dict[str, Any] | None:
        """POST a message; the JSON object it was answered with (None: an empty body, accepted for history only)."""
        await self._start()
        payload: dict[str, Any] = {
            "session": self.session_id,
            "message": message.text,
            "timestamp": message.timestamp.isoformat(),
            "reset": False,
        }
        if message.observe:
            payload["observe"] = True
        if message.role != USER:
            payload["role"] = message.role
        status, body = await self._post(payload)
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise self._fail(f"answered HTTP status {status}{detail}")
        if message.observe and not body.strip():
            return None
        try:
            data = jsonsafe.loads(body)
        except jsonsafe.TooDeep as exc:
            raise self._fail(f"answered JSON {exc}") from None
        except ValueError:
            raise self._fail(f"answered with a body that is not JSON ({_snippet(body) or 'empty'!r})") from None
        if not isinstance(data, dict):
            raise self._fail("answered JSON without a string \"reply\" (no \"reply\" field)")
        return data

    def _reply(self, data: dict[str, Any], text: str) -> Reply:
        return Reply(
            text=text,
            prompt_tokens=self._number(data, "prompt_tokens", int),
            completion_tokens=self._number(data, "completion_tokens", int),
            cost_usd=self._number(data, "cost_usd", float),
        )

    def _number(self, data: dict[str, Any], field: str, kind: type) -> Any:
        value = data.get(field)
        if value is None:
            return None
        ok = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok or not math.isfinite(value) or value < 0:
            want = "a non-negative integer" if kind is int else "a non-negative number"
            raise self._fail(f"answered \"{field}\": {value!r}, which is not {want} or null")
        return kind(value)

    async def reset(self) -> None:
        self._started = True
        status, body = await self._post({"session": self.session_id, "reset": True})
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise self._fail(f"answered HTTP status {status} to a reset{detail}")

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Resuming a run: the agent is sent the turns it had answered, to rebuild its memory (docs/http-agent.md)."""
        if not turns:
            return
        self._started = True  # the restore request says what the session holds: no reset before it
        payload = {"session": self.session_id, "reset": False, "restore": [
            {"message": m.text, "timestamp": m.timestamp.isoformat(), "reply": reply,
             **({"observe": True} if m.observe else {}), **({"role": m.role} if m.role != USER else {})}
            for m, reply in turns]}
        status, body = await self._post(payload)
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise AgentError(f"agent {self.shown_url} cannot be resumed: it answered HTTP status {status} to the restore "
                            f"request{detail} (see 'Resuming' in docs/http-agent.md); run it again with "
                            f"{option('overwrite')}")

    async def snapshot(self) -> Any:
        """Independent questions: `{"session": ..., "snapshot": true}` answered with `{"snapshot": VALUE}` (any JSON
        value the agent understands). Any other answer (an error status, no such field) says the agent cannot go
        back: its questions are then asked in sequence (docs/http-agent.md, "Going back")."""
        status, body = await self._post({"session": self.session_id, "snapshot": True})
        if not 200 <= status < 300 or not body.strip():
            raise NotImplementedError
        try:
            data = jsonsafe.loads(body)
        except (ValueError, jsonsafe.TooDeep):
            raise NotImplementedError from None
        if not isinstance(data, dict) or "snapshot" not in data:
            raise NotImplementedError
        return data["snapshot"]

    async def rewind(self, snapshot: Any) -> None:
        """`{"session": ..., "rewind": VALUE}` (the snapshot's value): back to that state; any 2xx is success."""
        status, body = await self._post({"session": self.session_id, "rewind": snapshot})
        if not 200 <= status < 300:
            detail = f": {_snippet(body)}" if body.strip() else ""
            raise self._fail(f"answered HTTP status {status} to a rewind{detail}")

    async def close(self) -> None:
        if self._http is not None:
            http, self._http = self._http, None
            await http.close()
