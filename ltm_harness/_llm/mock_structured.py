"""Structured output from the mock models: a request's `response_format` honoured, as the OpenAI API honours it.

* `{"type": "json_schema", "json_schema": {"schema": S, ...}}` (an Agents SDK agent with an `output_type`, LangChain's
  `with_structured_output`): the reply is a JSON instance of S, filled from the model's plain reply: a string gets
  that reply's text, an integer or number the first number in it (0 without one), a boolean `false`, an enum its first
  value, an array one item (an empty array when the item is an object or array), an object each of its properties
  (all of them: a strict schema requires all); `$ref`s into `$defs`/`definitions` are followed, `anyOf`/`oneOf` take
  their first branch that is not null. Nesting past MAX_DEPTH gets null.
* `{"type": "json_object"}`: the plain reply's text as `{"answer": TEXT}`.
* anything else (`text`, absent): the plain reply.

A plain reply that is a JSON object already (`mock-fixed:{...}`, a judge's verdict) is sent as it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 12
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def structured_reply(text: str, response_format: Any) -> str:
    """The reply to send for the plain reply `text` under the request's `response_format` (see the docstring)."""
    if not isinstance(response_format, dict) or _is_object(text):
        return text  # no format asked, or the reply is a JSON object already (`mock-fixed:{...}`, a judge)
    kind = response_format.get("type")
    if kind == "json_object":
        return json.dumps({"answer": text})
    if kind != "json_schema":
        return text
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        return json.dumps({"answer": text})
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return json.dumps(_instance(schema, text, defs, 0))


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    for _ in range(MAX_DEPTH):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema
        target = defs.get(ref.rpartition("/")[2])
        if not isinstance(target, dict):
            return {}
        schema = target
    return {}


def _instance(schema: Any, text: str, defs: dict[str, Any], depth: int) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    schema = _resolve(schema, defs)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            usable = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")] or branches
            return _instance(usable[0], text, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), dict)):
        properties = schema.get("properties") or {}
        return {name: _instance(sub, text, defs, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        item = _resolve(schema.get("items") or {}, defs) if isinstance(schema.get("items"), dict) else {}
        value = _instance(item, text, defs, depth + 1)
        return [value] if not isinstance(value, (dict, list)) else []
    if kind in ("integer", "number"):
        found = _NUMBER.search(text)
        number = float(found.group()) if found else 0.0
        return int(number) if kind == "integer" else number
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return text
