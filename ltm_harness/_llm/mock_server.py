"""An OpenAI-compatible mock server (aiohttp) for offline demos and tests: `python -m ltm_harness mock-llm`.

Endpoints: `POST /v1/chat/completions`, `POST /v1/embeddings`, `GET /v1/models`, and for tests `GET /mock/stats` and
`POST /mock/faults` (replace the fault settings of a running server).

Behaviour is chosen by the model name, and is deterministic:

| model                  | reply |
|------------------------|-------|
| `mock`, `mock-retrieval` | answers from its context: a JSON arithmetic answer for filler, the earlier user sentence that shares most words with a question, else "Noted." |
| `mock-memory`          | a memory layer's model (mem0): extracts facts as JSON when asked, else answers like `mock` from the memories it is given (below) |
| `mock-fixed[:TEXT]`    | always TEXT (default "I don't know.") |
| `mock-echo`            | the last user message |
| `mock-judge`           | a judge verdict as JSON: correct when the expected answer's words are all in the response (a yes/no prompt laid out as LongMemEval's gets "yes" or "no" by the same rule, or by whether the response declines; BEAM's prompts: `mock_beam`) |
| `mock-judge-garbage`   | text that is not a verdict (to test unscored handling) |
| `mock-generator`       | generated dataset stages (content/questions/answers) as JSON, about invented places |
| `mock-generator-short` | like mock-generator, but always one answer too few (to test count checks) |
| `mock-embed` (embeddings) | a hashed bag of words (below), `dimensions` long (default 256) |

Unknown model names get HTTP 404, as a real server would answer.

`mock-memory`, in the shape mem0 (2.x, its additive extraction prompt) asks for. A request whose last user message has a
`## New Messages` section is an extraction: each user message there (`user: ...` lines, a line without a role going on
the message before) that says something other than questions, and is not arithmetic filler (it mentions "as JSON"),
becomes one memory: its statements, with the message's `[date]` prefix kept (the date the fact was said); one already
in the prompt's `## Existing Memories` or `## Recently Extracted Memories` is not extracted again. The reply is
`{"memory": [{"id": "0", "text": ..., "attributed_to": "user"}, ...]}` (`{"memory": []}`: nothing to keep). mem0 2.x
only adds memories (it no longer asks a model to update or delete them), so that is all this model answers. Any
other request is answered like `mock`, the candidates being the memories given as bullet lines (`- ...`) of system
messages, then the earlier user messages, so a fact said later wins a tie.

`mock-embed`: the words of a text (lower-cased, stop words left out, a leading `[date]` prefix ignored) each add
1 to one coordinate of the vector, chosen with its sign by a hash of the word (blake2b), and the vector is scaled to
length 1; a text with no such word is a fixed unit vector. Texts sharing words are near (cosine = shared words'
weight), texts sharing none are near 0, and the same text always gets the same vector. `encoding_format` may be
`float` or `base64` (float32, as the OpenAI SDK decodes it); usage counts the input's tokens.

Faults (per server, seeded): a share of requests answered 429 with Retry-After, 500, dropped
connections, 200 with a malformed body, or stalled past the client's timeout; 429 storms (a drawn 429
goes on for `storm_429` requests in a row, whoever sends them, as a rate limit would); a fixed latency
per request; and an optional `script` of outcomes used first, in order (e.g. ["429", "500", "ok"]),
for exact tests. Embedding requests draw from the same faults. `stats` counts requests, each outcome,
`ok_replies`, the requests of each model (`model:NAME`), and `abandoned` (stalled requests whose client hung up
before the stall ended: they are not answered, and not kept in `requests`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import re
import struct
from collections import Counter
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._tokens import get_tokenizer

Outcome = Literal["ok", "429", "500", "drop", "malformed", "timeout"]
_PREFIX = re.compile(r"^\[[^\]\n]*\]\s*")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the is are was were be been am i you he she it we they my your his her its our their me to of in on at "
    "for and or but with what which who whom whose when where why how do did does done have has had this that these "
    "those there here not no yes can could would should will shall may might must about as by from into than then "
    "so if please tell remember said say told ago now one".split())


class FaultSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rate_429: float = Field(default=0.0, ge=0, le=1)
    retry_after: float = Field(default=0.05, ge=0, description="seconds sent in Retry-After with a 429")
    rate_500: float = Field(default=0.0, ge=0, le=1)
    rate_drop: float = Field(default=0.0, ge=0, le=1)
    rate_malformed: float = Field(default=0.0, ge=0, le=1)
    rate_timeout: float = Field(default=0.0, ge=0, le=1, description="share of requests stalled for timeout_ms")
    storm_429: int = Field(default=1, ge=1, description="a drawn 429 is the first of this many 429s in a row")
    latency_ms: float = Field(default=0.0, ge=0, description="added to every request")
    timeout_ms: float = Field(default=2000.0, ge=0, description="how long a 'timeout' outcome stalls")
    script: list[Outcome] = Field(default_factory=list, description="outcomes used first, in order")
    seed: int = 0


# -- behaviours --------------------------------------------------------------------------------------
def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _best_sentence(question: str, candidates: list[str]) -> str | None:
    """The candidate sentence sharing most words with `question` (shorter ones preferred, ties to the latest)."""
    wanted = set(_words(question))
    best, best_score = "", 0.0
    for earlier in candidates:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", earlier):
            words = _words(sentence)
            if not words or "as JSON" in sentence:
                continue
            score = len(wanted.intersection(words)) / (1 + 0.05 * len(words))
            if score >= best_score and score > 0:  # ties go to the latest sentence (values change over time)
                best, best_score = sentence.strip(), score
    return best if best_score > 0 else None


def retrieval_reply(messages: list[dict[str, Any]], remembered: list[str] | None = None) -> str:
    """`mock`: the answer from the earlier user messages (and `remembered` texts, taken as said before them)."""
    users = [_PREFIX.sub("", _text(m)) for m in messages if m.get("role") == "user"]
    if not users:
        return "Hello."
    last = users[-1]
    if "as JSON" in last:  # filler: answer the final question as asked
        numbers = re.findall(r"-?\d+", last.strip().splitlines()[-1])
        return json.dumps({"answer": int(numbers[-1]) if numbers else 0})
    if "?" not in last:
        return "Noted."
    found = _best_sentence(last, [*(remembered or []), *users[:-1]])
    return found if found is not None else "I don't know."


# -- mock-memory: a memory layer's extraction and answers (mem0) ---------------------------------------------------
_ROLE_LINE = re.compile(r"^(user|assistant|system): ", re.M)


def _section(prompt: str, name: str) -> str | None:
    """The text of a `## NAME` section of a prompt (up to the next `## ` heading), None when there is none."""
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |^# Output|\Z)", prompt, re.S | re.M)
    return found.group(1).strip() if found else None


def _known_memories(prompt: str) -> set[str]:
    known: set[str] = set()
    for name in ("Existing Memories", "Recently Extracted Memories"):
        try:
            listed = json.loads(_section(prompt, name) or "[]")
        except json.JSONDecodeError:
            continue
        if isinstance(listed, list):
            known.update(str(m.get("text", "")).strip() for m in listed if isinstance(m, dict))
    return known


def extracted_facts(new_messages: str) -> list[str]:
    """The memories `mock-memory` keeps of a conversation written as `role: content` lines (see the docstring)."""
    facts = []
    starts = list(_ROLE_LINE.finditer(new_messages))
    for i, start in enumerate(starts):
        if start.group(1) != "user":
            continue
        content = new_messages[start.end():starts[i + 1].start() if i + 1 < len(starts) else None].strip()
        prefix = _PREFIX.match(content)
        body = content[prefix.end():] if prefix else content
        if "as JSON" in body:
            continue
        said = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", body)
                if s.strip() and not s.strip().endswith("?")]
        if said and _words(" ".join(said)):
            facts.append((prefix.group(0) if prefix else "") + " ".join(said))
    return facts


def memory_reply(messages: list[dict[str, Any]]) -> str:
    """`mock-memory`: an extraction as JSON when the prompt asks for one, else an answer from the memories."""
    users = [_text(m) for m in messages if m.get("role") == "user"]
    prompt = users[-1] if users else ""  # the sections are in the user's part (the system's part describes them)
    new = _section(prompt, "New Messages")
    if new is not None:
        known = _known_memories(prompt)
        facts = [f for f in dict.fromkeys(extracted_facts(new)) if f not in known]
        return json.dumps({"memory": [{"id": str(i), "text": fact, "attributed_to": "user"}
                                      for i, fact in enumerate(facts)]})
    remembered = [line[2:].strip() for m in messages if m.get("role") == "system"
                  for line in _text(m).splitlines() if line.startswith("- ")]
    return retrieval_reply(messages, [_PREFIX.sub("", r) for r in remembered])


# -- mock-embed: deterministic embeddings ---------------------------------------------------------------------
EMBED_DIMENSIONS = 256
MAX_DIMENSIONS = 4096


def embed(text: str, dimensions: int = EMBED_DIMENSIONS) -> list[float]:
    """`mock-embed`'s vector of `text`: a hashed bag of words of length 1 (see the module's docstring)."""
    vector = [0.0] * dimensions
    words = _words(_PREFIX.sub("", text)) or [""]
    for word in words:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[(value >> 1) % dimensions] += 1.0 if value & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:  # every word cancelled out: the fixed vector
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


def _tag(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", text, re.S)
    return found.group(1) if found else None


_LABELLED = re.compile(r"(Reference answer|Rubric|Explanation|Assistant's response): (.*?)(?:\n\n|$)", re.S)
_DECLINES = re.compile(r"\b(don'?t know|do not know|never (told|mentioned|said)|not mentioned|no information)\b", re.I)


def yes_no_reply(prompt: str) -> str | None:
    """A yes/no verdict for a judge prompt laid out as LongMemEval's (`Reference answer:` / `Rubric:` /
    `Explanation:` and `Assistant's response:`): yes when the response holds every word of the reference answer (or
    the rubric's), or, against an explanation of why the question cannot be answered, when it declines; None for
    other prompts."""
    if "yes or no" not in prompt.lower():
        return None
    found = {label: text.strip() for label, text in _LABELLED.findall(prompt)}
    response = found.get("Assistant's response")
    if response is None:
        return None
    if "Explanation" in found:
        return "yes" if _DECLINES.search(response) else "no"
    expected = found.get("Reference answer") or found.get("Rubric") or ""
    want = _words(expected) or _WORD.findall(expected.lower())
    got = set(_WORD.findall(response.lower()))
    return "yes" if want and all(w in got for w in want) else "no"


def judge_reply(messages: list[dict[str, Any]]) -> str:
    from ltm_harness._llm.mock_beam import beam_judge_reply

    prompt = "\n".join(_text(m) for m in messages)
    beam = beam_judge_reply(prompt)  # BEAM's rubric items and event alignment
    if beam is not None:
        return beam
    said = yes_no_reply(prompt)
    if said is not None:
        return said
    expected, response = _tag(prompt, "expected"), _tag(prompt, "response")
    if expected is None or response is None:
        return json.dumps({"score": 0.0, "reason": "the request had no <expected> and <response> sections"})
    want = _words(expected) or _WORD.findall(expected.lower())
    got = set(_WORD.findall(response.lower()))
    missing = [w for w in want if w not in got]
    if not missing:
        return json.dumps({"score": 1.0, "reason": "the response contains the expected answer"})
    return json.dumps({"score": 0.0, "reason": f"the response lacks: {', '.join(missing[:5])}"})


_PLACES = ["Quorvia", "Maltessa", "Drunwick", "Velorath", "Ysmere", "Kaldrun", "Orvane", "Pellucid Reach",
           "Thistlemoor", "Brannock", "Seravel", "Ulmgard"]
_ATTRS = [("capital", ["Kestrel", "Amberfall", "Noor", "Tessary", "Glimmerton", "Hollowmere"]),
          ("national flower", ["the glass tulip", "the ember lily", "the frost poppy", "the bell moss"]),
          ("currency", ["the silver reed", "the copper wheel", "the salt mark", "the amber bead"]),
          ("oldest festival", ["the Night of Lanterns", "the Tide Feast", "the Ash Parade", "the Kite Vigil"]),
          ("main export", ["blue clay", "whistling glass", "cloud wool", "river pearls", "ironwood"]),
          ("ruling council", ["the Circle of Nine", "the Loom Assembly", "the Lantern Court", "the Twelve Wardens"])]


def _facts(n: int, seed_text: str) -> list[tuple[str, str, str]]:
    rng = random.Random(seed_text)
    facts = []
    for i in range(n):
        attr, values = _ATTRS[i % len(_ATTRS)]
        facts.append((rng.choice(_PLACES), attr, rng.choice(values)))
    return facts


def generator_reply(messages: list[dict[str, Any]], short: bool = False) -> str:
    """Stages are told apart by the JSON key the request asks for: content, questions or answers."""
    from ltm_harness._llm.counted import asked_count

    prompt = _text(messages[-1])
    first = next(_text(m) for m in messages if m.get("role") == "user")  # the content step: the set's seed
    n = asked_count(first) or 5
    facts = _facts(n, first)
    if '"answers"' in prompt:
        answers = [value for _, _, value in facts]
        return json.dumps({"answers": answers[:-1] if short else answers})
    if '"questions"' in prompt:
        return json.dumps({"questions": [f"What is the {attr} of {place}?" for place, attr, _ in facts]})
    return json.dumps({"content": [f"The {attr} of {place} is {value}." for place, attr, value in facts]})


def reply_for(model: str, messages: list[dict[str, Any]]) -> str | None:
    base, _, arg = model.partition(":")
    if base in ("mock", "mock-retrieval"):
        return retrieval_reply(messages)
    if base == "mock-memory":
        return memory_reply(messages)
    if base == "mock-fixed":
        return arg or "I don't know."
    if base == "mock-echo":
        users = [m for m in messages if m.get("role") == "user"]
        return _text(users[-1]) if users else ""
    if base == "mock-judge":
        return judge_reply(messages)
    if base == "mock-judge-garbage":
        return "Well, it depends on how you look at it."
    if base == "mock-generator":
        return generator_reply(messages)
    if base == "mock-generator-short":
        return generator_reply(messages, short=True)
    return None


MODELS = ["mock", "mock-retrieval", "mock-memory", "mock-fixed", "mock-echo", "mock-judge", "mock-judge-garbage",
          "mock-generator", "mock-generator-short"]
EMBEDDING_MODELS = ["mock-embed"]


# -- the server --------------------------------------------------------------------------------------
class MockLLMServer:
    def __init__(self, faults: FaultSettings | None = None, tokenizer: str = "cl100k_base") -> None:
        self.faults = faults or FaultSettings()
        self._rng = random.Random(f"mock-llm:{self.faults.seed}")
        self._script = list(self.faults.script)
        self._storm = 0  # 429s still due in the current storm
        self._tokenizer = get_tokenizer(tokenizer)
        self._counts: dict[str, int] = {}
        self.stats: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []  # every request body, for tests that inspect what was sent
        self.keys: set[str] = set()  # the bearer keys requests came with (tests check which key was used)
        self._runner: web.AppRunner | None = None
        self.url = ""

    def set_faults(self, faults: FaultSettings) -> None:
        self.faults = faults
        self._rng = random.Random(f"mock-llm:{faults.seed}")
        self._script = list(faults.script)
        self._storm = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/mock/stats", self._stats)
        app.router.add_post("/mock/faults", self._set_faults)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        real_port = self._runner.addresses[0][1]
        self.url = f"http://{host}:{real_port}/v1"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "MockLLMServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _outcome(self) -> Outcome:
        if self._script:
            return self._script.pop(0)
        if self._storm:
            self._storm -= 1
            return "429"
        f = self.faults
        x = self._rng.random()
        for outcome, rate in (("429", f.rate_429), ("500", f.rate_500), ("drop", f.rate_drop),
                              ("malformed", f.rate_malformed), ("timeout", f.rate_timeout)):
            if x < rate:
                if outcome == "429":
                    self._storm = f.storm_429 - 1
                return outcome  # type: ignore[return-value]
            x -= rate
        return "ok"

    @staticmethod
    async def _stall(request: web.Request, seconds: float) -> bool:
        """Wait `seconds`, or until the client hangs up (then False: nobody is left to answer)."""
        deadline = asyncio.get_running_loop().time() + seconds
        while True:
            transport = request.transport
            if transport is None or transport.is_closing():
                return False
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return True
            await asyncio.sleep(min(left, 0.01))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "ltm-harness"}
                                                             for m in MODELS + EMBEDDING_MODELS]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.stats))

    async def _set_faults(self, request: web.Request) -> web.Response:
        self.set_faults(FaultSettings.model_validate(await request.json()))
        return web.json_response({"ok": True})

    def _count_cached(self, text: str) -> int:
        """Token count of a message; the history repeats in every request, so counts are kept."""
        n = self._counts.get(text)
        if n is None:
            if len(self._counts) > 200_000:
                self._counts.clear()
            n = self._counts[text] = self._tokenizer.count(text)
        return n

    def _count(self, messages: list[dict[str, Any]], text: str) -> tuple[int, int]:
        prompt = sum(self._count_cached(_text(m)) + 3 for m in messages) + 3
        return prompt, self._tokenizer.count(text)

    async def _fault(self, request: web.Request) -> web.StreamResponse | None:
        """The drawn fault's response (None: the request is answered), counted in `stats`."""
        self.stats["requests"] += 1
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        outcome = self._outcome()
        self.stats[outcome] += 1
        if outcome == "429":
            return web.json_response({"error": {"message": "rate limited (mock)", "type": "rate_limit_error"}},
                                     status=429, headers={"Retry-After": f"{self.faults.retry_after:g}"})
        if outcome == "500":
            return web.json_response({"error": {"message": "internal error (mock)", "type": "server_error"}}, status=500)
        if outcome == "drop":
            if request.transport is not None:
                request.transport.close()  # the client sees the connection drop with no response
            return web.Response(status=500)
        if outcome == "timeout" and not await self._stall(request, self.faults.timeout_ms / 1000):
            self.stats["abandoned"] += 1
            return web.Response(status=499)  # never reaches the client, which has gone
        if outcome == "malformed":
            return web.Response(text='{"id": "x", "choices": [{"message": ', content_type="application/json")
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": {"message": "the body is not JSON"}}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": {"message": "the body is not a JSON object"}}, status=400)
        self.requests.append(body)
        self.keys.add(request.headers.get("Authorization", "").removeprefix("Bearer "))
        self.stats[f"model:{body.get('model', '')}"] += 1
        return body

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        faulted = await self._fault(request)
        if faulted is not None:
            return faulted
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        model = str(body.get("model", ""))
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return web.json_response({"error": {"message": "messages must be a non-empty list"}}, status=400)
        text = reply_for(model, messages)
        if text is None:
            return web.json_response({"error": {"message": f"The model `{model}` does not exist (mock models: "
                                                           f"{', '.join(MODELS)})", "type": "invalid_request_error"}},
                                     status=404)
        prompt_tokens, completion_tokens = self._count(messages, text)
        self.stats["ok_replies"] += 1
        return web.json_response({
            "id": f"chatcmpl-mock-{self.stats['requests']}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        faulted = await self._fault(request)
        if faulted is not None:
            return faulted
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        model = str(body.get("model", ""))
        if model not in EMBEDDING_MODELS:
            return web.json_response({"error": {"message": f"The embedding model `{model}` does not exist (mock "
                                                           f"embedding models: {', '.join(EMBEDDING_MODELS)})",
                                                "type": "invalid_request_error"}}, status=404)
        given = body.get("input")
        texts = [given] if isinstance(given, str) else given
        dimensions = body.get("dimensions", EMBED_DIMENSIONS)
        form = body.get("encoding_format", "float")
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return web.json_response({"error": {"message": "input must be a string or a non-empty list of strings"}},
                                     status=400)
        if not isinstance(dimensions, int) or not 1 <= dimensions <= MAX_DIMENSIONS or form not in ("float", "base64"):
            return web.json_response({"error": {"message": f"dimensions must be 1 to {MAX_DIMENSIONS} and "
                                                           "encoding_format float or base64"}}, status=400)
        data = []
        for i, text in enumerate(texts):
            vector: list[float] | str = embed(text, dimensions)
            if form == "base64":
                vector = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(self._count_cached(t) for t in texts)
        self.stats["ok_replies"] += 1
        return web.json_response({"object": "list", "data": data, "model": model,
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
