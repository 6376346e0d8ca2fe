"""The shipped mock server: models, behaviours, faults and its command."""

from __future__ import annotations

import asyncio
import json
import sys

import aiohttp
import pytest

from ltm_harness._llm.mock_server import (EMBED_DIMENSIONS, FaultSettings, MockLLMServer, embed, judge_reply,
                                          memory_reply, retrieval_reply)
from ltm_harness._tokens import get_tokenizer


async def post(url: str, model: str, messages: list[dict]) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{url}/chat/completions", json={"model": model, "messages": messages}) as r:
            return r.status, await r.json()


async def test_models_and_an_openai_shaped_reply(mock_llm):
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{mock_llm.url}/models") as r:
            ids = [m["id"] for m in (await r.json())["data"]]
    assert {"mock", "mock-judge", "mock-generator"} <= set(ids)
    status, body = await post(mock_llm.url, "mock-fixed:Hello there.", [{"role": "user", "content": "Hi"}])
    assert status == 200 and body["choices"][0]["message"]["content"] == "Hello there."
    assert body["usage"]["completion_tokens"] == 3 and body["usage"]["prompt_tokens"] == 1 + 3 + 3


async def test_unknown_model_is_404(mock_llm):
    status, body = await post(mock_llm.url, "gpt-9", [{"role": "user", "content": "Hi"}])
    assert status == 404 and "gpt-9" in body["error"]["message"]


def test_retrieval_answers_from_context_filler_and_statements():
    msgs = [{"role": "user", "content": "[2024-01-01 09:00 UTC] My favourite colour is teal. I live in Oslo."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "[2024-01-01 09:01 UTC] Arithmetic practice. Answer as JSON.\nWhat is 2 plus 40?"},
            {"role": "assistant", "content": '{"answer": 40}'},
            {"role": "user", "content": "What is my favourite colour?"}]
    assert retrieval_reply(msgs) == "My favourite colour is teal."
    assert retrieval_reply(msgs[:3]) == '{"answer": 40}'  # the final number of the last line, as JSON
    assert retrieval_reply(msgs[:1]) == "Noted."
    assert retrieval_reply([{"role": "user", "content": "Where is the moon base?"}]) == "I don't know."


def test_judge_verdicts():
    ok = judge_reply([{"role": "user", "content": "<expected>Kestrel</expected><response>It is Kestrel.</response>"}])
    bad = judge_reply([{"role": "user", "content": "<expected>Kestrel</expected><response>Noor</response>"}])
    assert json.loads(ok)["score"] == 1.0 and json.loads(bad)["score"] == 0.0


async def test_fault_rates_are_seeded():
    async def outcomes(seed: int) -> list[str]:
        server = MockLLMServer(FaultSettings(rate_429=0.3, rate_500=0.2, seed=seed))
        return [server._outcome() for _ in range(200)]

    a, b, c = await outcomes(1), await outcomes(1), await outcomes(2)
    assert a == b != c
    assert 40 < a.count("429") < 80 and 20 < a.count("500") < 60


async def test_the_mock_llm_command_serves(unused_tcp_port):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--port", str(unused_tcp_port), "--rate-500", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert f"http://127.0.0.1:{unused_tcp_port}/v1" in line
        status, body = await post(f"http://127.0.0.1:{unused_tcp_port}/v1", "mock-echo",
                                  [{"role": "user", "content": "ping"}])
        assert status == 200 and body["choices"][0]["message"]["content"] == "ping"
    finally:
        proc.terminate()
        await proc.wait()


async def test_the_mock_llm_command_rejects_bad_rates():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--rate-429", "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode == 2 and err.decode().startswith("error: --rate-429:") and "Traceback" not in err.decode()


# -- what memory layers need: embeddings and mock-memory -------------------------------------------------------
async def embed_request(url: str, body: dict) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{url}/embeddings", json=body) as r:
            return r.status, await r.json()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


async def test_embeddings_are_deterministic_unit_vectors_near_for_texts_sharing_words(mock_llm):
    texts = ["My favourite colour is blue.", "[2024-01-01 09:00 UTC] What is my favourite colour?",
             "The cat is called Tom.", "", "My favourite colour is blue."]
    status, body = await embed_request(mock_llm.url, {"model": "mock-embed", "input": texts})
    assert status == 200 and [d["index"] for d in body["data"]] == [0, 1, 2, 3, 4]
    vectors = [d["embedding"] for d in body["data"]]
    assert all(len(v) == EMBED_DIMENSIONS and abs(cosine(v, v) - 1) < 1e-9 for v in vectors)
    assert vectors[0] == vectors[4] == embed(texts[0])  # the same text, the same vector, in every request
    colour, question, cat = vectors[:3]
    assert cosine(colour, question) > 0.7 > abs(cosine(colour, cat))  # the date prefix and stop words do not count
    assert body["usage"]["prompt_tokens"] == sum(get_tokenizer().count(t) for t in texts) > 0
    assert mock_llm.stats["model:mock-embed"] == 1


async def test_embeddings_as_the_openai_sdk_asks_for_them(mock_llm):
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=mock_llm.url, api_key="x")
    got = await client.embeddings.create(model="mock-embed", input="Tom is a cat.", dimensions=32)  # base64
    assert got.data[0].embedding == pytest.approx(embed("Tom is a cat.", 32), abs=1e-6)
    assert (await client.embeddings.create(model="mock-embed", input=["a cat"], encoding_format="float")
            ).data[0].embedding == embed("a cat")
    await client.close()


@pytest.mark.parametrize("body,status", [({"model": "text-embedding-3-small", "input": "x"}, 404),
                                         ({"model": "mock-embed", "input": [1, 2]}, 400),
                                         ({"model": "mock-embed", "input": "x", "dimensions": 0}, 400)])
async def test_bad_embedding_requests_are_refused(mock_llm, body, status):
    got, answer = await embed_request(mock_llm.url, body)
    assert got == status and answer["error"]["message"]


MEM0_STYLE = """## Summary

## Last k Messages
user: [2024-01-01 08:00 UTC] hello

## Recently Extracted Memories
[]

## Existing Memories
[{"id": "0", "text": "[2024-01-01 09:00 UTC] I live in Oslo."}]

## New Messages
user: [2024-01-01 09:00 UTC] I live in Oslo.
assistant: Noted.
user: [2024-01-01 09:05 UTC] My favourite colour is blue. What is yours?
user: [2024-01-01 09:06 UTC] What is my name?
user: [2024-01-01 09:07 UTC] Arithmetic practice. Answer as JSON.
What is 2 plus 40?
user: [2024-01-01 09:08 UTC] Remember this list:
eggs, milk.
assistant: I will remember that my name is Bot.

## Observation Date
2026-01-01

# Output:"""


def test_mock_memory_extracts_the_user_statements_as_mem0_asks():
    reply = json.loads(memory_reply([{"role": "system", "content": "You are a Memory Extractor."},
                                     {"role": "user", "content": MEM0_STYLE}]))
    assert reply == {"memory": [
        {"id": "0", "text": "[2024-01-01 09:05 UTC] My favourite colour is blue.", "attributed_to": "user"},
        {"id": "1", "text": "[2024-01-01 09:08 UTC] Remember this list: eggs, milk.", "attributed_to": "user"}]}
    nothing = MEM0_STYLE.split("## New Messages")[0] + "## New Messages\nuser: What is my name?\n\n# Output:"
    assert json.loads(memory_reply([{"role": "user", "content": nothing}])) == {"memory": []}


def test_mock_memory_answers_from_the_memories_it_is_given_the_latest_winning_a_tie():
    system = ("You answer from memories.\nWhat you remember:\n- [2024-01-01 09:00 UTC] My favourite colour is blue.\n"
              "- [2024-01-02 09:00 UTC] My favourite colour is red.\n- The cat is called Tom.")
    ask = [{"role": "system", "content": system}, {"role": "user", "content": "[2024-01-03 09:00 UTC] What is my "
                                                                             "favourite colour?"}]
    assert memory_reply(ask) == "My favourite colour is red."
    assert memory_reply([{"role": "system", "content": "Remember your favourite colour."}, ask[1]]) == "I don't know."
    assert memory_reply([ask[0], {"role": "user", "content": "I like tea."}]) == "Noted."


async def test_mock_memory_json_mode_through_the_server(mock_llm):
    status, body = await post(mock_llm.url, "mock-memory", [{"role": "user", "content": MEM0_STYLE}])
    assert status == 200 and len(json.loads(body["choices"][0]["message"]["content"])["memory"]) == 2
    assert mock_llm.stats["model:mock-memory"] == 1


async def test_the_batch_api_with_the_real_client_polls_lists_cancels_and_validates():
    from openai import AsyncOpenAI

    from ltm_harness._llm.mock_batch import BatchSettings

    line = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "mock-echo", "messages": [{"role": "user", "content": "hello there"}]}}
    async with MockLLMServer(batch=BatchSettings(polls=2)) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0)
        uploaded = await client.files.create(file=("b.jsonl", json.dumps(line).encode()), purpose="batch")
        batch = await client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                            completion_window="24h", metadata={"tag": "t1"})
        assert batch.status == "validating" and batch.request_counts.total == 1
        assert (await client.batches.retrieve(batch.id)).status == "in_progress"
        done = await client.batches.retrieve(batch.id)
        assert done.status == "completed" and done.request_counts.completed == 1 and done.error_file_id is None
        out = json.loads((await client.files.content(done.output_file_id)).content)
        assert out["custom_id"] == "a" and out["response"]["body"]["choices"][0]["message"]["content"] == "hello there"
        assert server.bill.batch["mock-echo"].requests == 1 and not server.bill.online
        second = await client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                             completion_window="24h")
        assert (await client.batches.cancel(second.id)).status == "cancelling"
        assert (await client.batches.retrieve(second.id)).status == "cancelled"
        assert [b.id for b in (await client.batches.list()).data] == [second.id, batch.id]  # newest first
        twice = await client.files.create(file=("c.jsonl", (json.dumps(line) + "\n" + json.dumps(line)).encode()),
                                          purpose="batch")
        failed = await client.batches.create(input_file_id=twice.id, endpoint="/v1/chat/completions",
                                             completion_window="24h")
        assert failed.status == "failed" and "custom_id missing or given twice" in failed.errors.data[0].message
        await client.close()
