"""Tool calls from the mock models, and streamed replies, shaped as the OpenAI chat completions API shapes them.

When a request offers `tools` (function tools) and no tool has answered since the last user message:

* `mock-tools` calls a tool: each offered tool whose name (its words, `search_notes` -> "search notes") is in the
  user's message, else the one the message calls for (`best_tool`: a question a tool that reads, a statement one
  that writes, then the words shared with the tool's name and description; the first offered on a tie); several at once only when `parallel_tool_calls` is not false (else the first
  of them). Each call's arguments come from the message, by the tool's JSON schema: a string parameter gets the
  message's text (its `[date]` prefix left out), an integer or number the message's first number (0 without one), a
  boolean `false`, an enum its first value, an array `[]`; only required parameters (all, when none are marked).
  Call ids are `call_<n>_<index>`, n counting the requests, so a run is deterministic.
* `mock` calls a tool only when the user's message names it (the same rule), so agents that are offered tools but
  not asked for them answer as before.

After a tool answered (`role: "tool"` messages after the last user message), both answer with the tool results'
text (joined by a space), so the reply shows what the tool returned; no tool is called again in that turn.

`stream: true` gets server-sent events: a first chunk with the role, the content in pieces (or each tool call's id
and name, then its arguments in two pieces, by `index`), a last chunk with the `finish_reason` (`stop` or
`tool_calls`), a usage chunk with no choices when `stream_options.include_usage` is true, then `data: [DONE]`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from ltm_harness._llm.mock_replies import _PREFIX, _text, _words

TOOL_MODELS = ["mock-tools"]
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _since_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for k in range(len(messages) - 1, -1, -1):
        if messages[k].get("role") == "user":
            return messages[k + 1:]
    return messages


def _named(name: str, text: str) -> bool:
    words = [w for w in re.split(r"[_\W]+", name.lower()) if w]
    return bool(words) and " ".join(words) in " ".join(re.findall(r"[a-z0-9]+", text.lower()))


_READS = frozenset("search find recall retrieve lookup look get query read fetch list load check answer".split())
_WRITES = frozenset("save store remember add write record note put update create memorize memorise keep upsert "
                    "insert log".split())


def best_tool(tools: list[dict[str, Any]], said: str) -> dict[str, Any]:
    """The tool the message calls for when it names none: a question wants a tool that reads (search, recall, get,
    ...), a statement one that writes (save, remember, add, ...), then the most words shared between the message
    and the tool's name and description; ties (and no clue at all) go to the first tool offered."""
    words = set(_words(said))
    wants = _READS if said.rstrip().endswith("?") else _WRITES

    def score(tool: dict[str, Any]) -> tuple[int, int]:
        named = set(re.split(r"[_\W]+", tool["name"].lower()))
        described = set(_words(str(tool.get("description") or "")))
        return len(wants & (named | described)) + 2 * len(wants & named), len(words & (named | described))

    best = tools[0]
    for tool in tools[1:]:
        if score(tool) > score(best):
            best = tool
    return best


def _argument(schema: dict[str, Any], text: str) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if kind in ("integer", "number"):
        found = _NUMBER.search(text)
        if found is None:
            return 0
        return int(float(found.group())) if kind == "integer" else float(found.group())
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return text


def arguments(parameters: Any, text: str) -> dict[str, Any]:
    """A tool call's arguments from the user's message `text`, by the tool's JSON schema (see the docstring)."""
    if not isinstance(parameters, dict):
        return {}
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or list(properties)
    return {name: _argument(properties.get(name) or {}, text) for name in required if name in properties}


def tool_calls(model: str, body: dict[str, Any], request: int) -> list[dict[str, Any]] | None:
    """The tool calls the mock makes for this request (None: it answers with text)."""
    base = model.partition(":")[0]
    offered = [t.get("function") for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    tools: list[dict[str, Any]] = [t for t in offered if isinstance(t, dict) and isinstance(t.get("name"), str)]
    messages = body.get("messages") or []
    if not tools or base not in ("mock", "mock-tools") or not messages:
        return None
    after = _since_user(messages)
    if any(m.get("role") == "tool" for m in after) or len(after) == len(messages):
        return None  # a tool answered already in this turn (or there is no user message)
    said = _PREFIX.sub("", _text(messages[-len(after) - 1]))
    chosen = [t for t in tools if _named(t["name"], said)]
    if not chosen:
        if base == "mock":
            return None
        chosen = [best_tool(tools, said)]
    if body.get("parallel_tool_calls") is False:
        chosen = chosen[:1]
    return [{"id": f"call_{request}_{i}", "type": "function",
             "function": {"name": t["name"], "arguments": json.dumps(arguments(t.get("parameters"), said))}}
            for i, t in enumerate(chosen)]


def after_tools(model: str, messages: list[dict[str, Any]]) -> str | None:
    """The answer once tools have answered in this turn: their results' text (None: no tool answered)."""
    if model.partition(":")[0] not in ("mock", "mock-tools"):
        return None
    results = [_text(m) for m in _since_user(messages) if m.get("role") == "tool"]
    if not results:
        return None
    return " ".join(r.strip() for r in results if r.strip()) or "Noted."


def stream_events(head: dict[str, Any], message: dict[str, Any], usage: dict[str, int] | None) -> Iterator[bytes]:
    """The server-sent events of a streamed reply (`head`: the id, object, created and model of each chunk)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        event = {**head, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(event)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    calls = message.get("tool_calls") or []
    for i, call in enumerate(calls):
        yield chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        args = call["function"]["arguments"]
        for piece in (args[:len(args) // 2], args[len(args) // 2:]):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    text = message.get("content") or ""
    for piece in re.findall(r"\S+\s*|\s+", text):
        yield chunk({"content": piece})
    yield chunk({}, "tool_calls" if calls else "stop")
    if usage is not None:
        yield f"data: {json.dumps({**head, 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"
