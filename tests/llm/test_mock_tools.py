"""The mock server's tool calls (`mock-tools`, and `mock` when the message names a tool) and its streamed replies,
read through the OpenAI SDK as any client reads the real API."""

from __future__ import annotations

import json

from openai import AsyncOpenAI

from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._llm.mock_tools import arguments

TOOLS = [{"type": "function", "function": {
    "name": "search_notes", "description": "Search the notes.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                   "required": ["query", "limit"]}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}}}}]
ASK = [{"role": "user", "content": "[2024-01-01 09:00 UTC] Please search notes for the 3 keys."}]


def test_arguments_come_from_the_message_by_the_schema() -> None:
    schema = TOOLS[0]["function"]["parameters"]
    assert arguments(schema, "Find 12 cats") == {"query": "Find 12 cats", "limit": 12}
    assert arguments(TOOLS[1]["function"]["parameters"], "rain?") == {"city": "rain?", "unit": "celsius"}
    assert arguments(None, "x") == {}


async def test_a_tool_is_called_once_then_the_answer_is_its_result() -> None:
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")
        first = await client.chat.completions.create(model="mock-tools", messages=ASK, tools=TOOLS)
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        [call] = choice.message.tool_calls
        assert call.function.name == "search_notes" and call.id == "call_1_0"
        assert json.loads(call.function.arguments) == {"query": "Please search notes for the 3 keys.", "limit": 3}
        assert first.usage.completion_tokens > 0
        again = await client.chat.completions.create(model="mock-tools", messages=ASK, tools=TOOLS)
        assert again.choices[0].message.tool_calls[0].function.arguments == call.function.arguments  # deterministic
        answered = [*ASK, choice.message.model_dump(exclude_none=True),
                    {"role": "tool", "tool_call_id": call.id, "content": "The keys are in the drawer."}]
        second = await client.chat.completions.create(model="mock-tools", messages=answered, tools=TOOLS)
        assert second.choices[0].finish_reason == "stop" and not second.choices[0].message.tool_calls
        assert second.choices[0].message.content == "The keys are in the drawer."
        assert server.stats["tool_calls"] == 2
        await client.close()


async def test_parallel_calls_for_every_tool_named_unless_parallel_calls_are_off() -> None:
    both = [{"role": "user", "content": "Search notes and get weather for Oslo."}]
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")
        reply = await client.chat.completions.create(model="mock-tools", messages=both, tools=TOOLS)
        assert [c.function.name for c in reply.choices[0].message.tool_calls] == ["search_notes", "get_weather"]
        one = await client.chat.completions.create(model="mock-tools", messages=both, tools=TOOLS,
                                                   parallel_tool_calls=False)
        assert [c.function.name for c in one.choices[0].message.tool_calls] == ["search_notes"]
        # `mock` calls a tool only when the message names it; else it answers as it always has
        plain = await client.chat.completions.create(model="mock", messages=[{"role": "user", "content": "Hi."}],
                                                     tools=TOOLS)
        assert plain.choices[0].message.content == "Noted." and not plain.choices[0].message.tool_calls
        named = await client.chat.completions.create(model="mock", messages=both, tools=TOOLS)
        assert len(named.choices[0].message.tool_calls) == 2
        await client.close()


async def test_streamed_tool_calls_and_text_add_up_as_the_sdk_reads_them() -> None:
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")
        stream = await client.chat.completions.create(model="mock-tools", messages=ASK, tools=TOOLS, stream=True,
                                                      stream_options={"include_usage": True})
        calls: dict[int, dict[str, str]] = {}
        finish, usage = None, None
        async for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                finish = choice.finish_reason or finish
                for delta in choice.delta.tool_calls or []:
                    got = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                    got["id"] += delta.id or ""
                    got["name"] += (delta.function.name or "") if delta.function else ""
                    got["arguments"] += (delta.function.arguments or "") if delta.function else ""
        assert finish == "tool_calls" and usage is not None and usage.completion_tokens > 0
        assert calls[0]["name"] == "search_notes" and json.loads(calls[0]["arguments"])["limit"] == 3
        text = ""
        stream = await client.chat.completions.create(model="mock", stream=True, messages=[
            {"role": "user", "content": "My cat is called Tom."}, {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "What is my cat called?"}])
        async for chunk in stream:
            text += "".join(c.delta.content or "" for c in chunk.choices)
        assert text == "My cat is called Tom."
        await client.close()


MEMORY_TOOLS = [
    {"type": "function", "function": {"name": "save_memory", "description": "Store a fact the user tells you.",
                                      "parameters": {"type": "object", "properties": {"fact": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "search_memory", "description": "Look up stored facts.",
                                      "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]


async def test_mock_tools_chooses_the_tool_the_message_calls_for() -> None:
    """A statement goes to the tool that writes, a question to the one that reads (it always called the first)."""
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")

        async def called(text: str, tools: list) -> str:
            reply = await client.chat.completions.create(model="mock-tools", tools=tools,
                                                         messages=[{"role": "user", "content": text}])
            return reply.choices[0].message.tool_calls[0].function.name

        assert await called("My cat is called Tom.", MEMORY_TOOLS) == "save_memory"
        assert await called("What is my cat called?", MEMORY_TOOLS) == "search_memory"
        assert await called("What is my cat called?", MEMORY_TOOLS[::-1]) == "search_memory"
        assert await called("Hello there.", TOOLS[::-1]) == "get_weather"  # no clue: the first offered, as before
        await client.close()


async def test_every_mock_model_honours_a_json_schema_response_format() -> None:
    schema = {"type": "object", "properties": {
        "answer": {"type": "string"}, "confidence": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
        "kind": {"$ref": "#/$defs/Kind"}, "note": {"anyOf": [{"type": "null"}, {"type": "string"}]}},
        "required": ["answer", "confidence", "tags", "kind", "note"], "additionalProperties": False,
        "$defs": {"Kind": {"enum": ["fact", "opinion"]}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "Out", "schema": schema, "strict": True}}
    said = [{"role": "user", "content": "My cat is called Tom."}, {"role": "user", "content": "What is my cat called?"}]
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")
        reply = await client.chat.completions.create(model="mock", messages=said, response_format=fmt)
        assert json.loads(reply.choices[0].message.content) == {
            "answer": "My cat is called Tom.", "confidence": 0.0, "tags": ["My cat is called Tom."], "kind": "fact",
            "note": "My cat is called Tom."}
        plain = await client.chat.completions.create(model="mock", messages=said, response_format={"type": "json_object"})
        assert json.loads(plain.choices[0].message.content) == {"answer": "My cat is called Tom."}
        text = await client.chat.completions.create(model="mock", messages=said)
        assert text.choices[0].message.content == "My cat is called Tom."  # no format: the plain reply, as before
        await client.close()


async def test_a_summary_asked_for_is_a_summary_of_what_the_user_said() -> None:
    """LangMem's running summary and a summarising node ask with an instruction: the mock answers with the user's
    statements (it said 'Noted.')."""
    said = [{"role": "user", "content": "[2024-01-01 09:00 UTC] My cat is called Tom."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "What is 2 + 2? Answer as JSON."},
            {"role": "user", "content": "I moved to Oslo. Where do I live?"},
            {"role": "user", "content": "Create a summary of the conversation above:"}]
    async with MockLLMServer() as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x")
        reply = await client.chat.completions.create(model="mock", messages=said)
        assert reply.choices[0].message.content == "The user said: My cat is called Tom. I moved to Oslo."
        await client.close()
