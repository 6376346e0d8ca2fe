"""A test program's LLM call (`ctx.llm`, the restaurant's waiter) that failed after its retries (a 503) errors its
test, and the failure is kept in the event log: a run stopped after it resumes by replaying the failure (asking the
test LLM again got an answer this time, and the resume stopped with "event N of the log differs"); a rescore replays
it too; `--retry-errored` asks again and scores the test. The test LLM is a mock server started on 127.0.0.1 whose
second chat call answers 503."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ltm_harness._api import rescore_async, run_async
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer
from ltm_harness._store.events import TestEnd, parse_event
from ltm_harness._store.records import LLMCall
from ltm_harness.testing import make_config

WAITER = "mock-fixed:Lovely evening."


def config(url: str):
    return make_config(["restaurant", "colours"], span=1000, examples=2, llm={"max_attempts": 1, "cache": False},
                       test_llm={"model": WAITER, "base_url": url})


def results(folder: Path) -> list[dict]:
    return [{k: r[k] for k in ("dataset", "example_id", "status", "score", "reasons")}
            for r in json.loads((folder / "results.json").read_text())]


def llm_calls_of_tests(events: list) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, LLMCall) and e.role == "test"]


async def failed_run(tmp_path: Path, server: MockLLMServer) -> tuple[Path, list]:
    """A finished run whose second test-LLM call failed (503, one attempt), and its events."""
    server.set_faults(FaultSettings(script=["ok", "503"]))
    ref = (await run_async(config(server.url), ["oracle"], results=tmp_path / "ref")).path
    events = [parse_event(line) for line in (ref / "oracle" / "events.jsonl").read_bytes().splitlines()]
    return ref, events


def cut_copy(ref: Path, into: Path, keep: int) -> Path:
    """The run `ref` copied to `into` with its event log cut after `keep` events (as a kill leaves it)."""
    work = into / ref.name
    shutil.copytree(ref, work)
    log = work / "oracle" / "events.jsonl"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:keep]))
    for name in ("results.json", "summary.json"):
        (work / "oracle" / name).unlink()
    return work


async def test_a_run_stopped_after_a_failed_test_llm_call_resumes_with_the_same_log_and_no_call_again(tmp_path):
    async with MockLLMServer() as server:
        ref, events = await failed_run(tmp_path, server)
        failed = next((i for i in llm_calls_of_tests(events) if events[i].error is not None), None)
        assert failed is not None, "the failed test-LLM call is not in the event log"
        call = events[failed]
        assert "HTTP 503" in (call.error or "") and call.response is None
        assert (call.prompt_tokens, call.completion_tokens, call.cost_usd) == (0, 0, 0.0)
        ended = next(e for e in events[failed:] if isinstance(e, TestEnd) and e.test == call.test)
        assert ended.status == "errored" and "LLMError" in ended.reasons[0] and "HTTP 503" in ended.reasons[0]
        asked = server.stats["requests"]
        log = (ref / "oracle" / "events.jsonl").read_bytes()
        # stopped just after the failed call, as its test ended, and a few events later
        for keep in (failed + 1, events.index(ended) + 1, failed + 4):
            work = cut_copy(ref, tmp_path / f"cut{keep}", keep)
            server.stats["requests"] = asked
            resumed = (await run_async(config(server.url), ["oracle"], results=work.parent, run_name=ref.name,
                                       resume=True)).path
            assert (resumed / "oracle" / "events.jsonl").read_bytes() == log, keep
            assert results(resumed / "oracle") == results(ref / "oracle")
            made = sum(1 for i in llm_calls_of_tests(events) if i >= keep)
            assert server.stats["requests"] == asked + made, keep  # the failed call was not asked again

        # a rescore replays the failure too: the same test errored the same way, the test LLM not asked
        before, asked = results(ref / "oracle"), server.stats["requests"]
        await rescore_async(ref)
        assert results(ref / "oracle") == before
        assert server.stats["requests"] == asked


async def test_retry_errored_asks_a_failed_test_llm_call_again_and_scores_its_test(tmp_path):
    async with MockLLMServer() as server:
        clean = (await run_async(config(server.url), ["oracle"], results=tmp_path / "clean")).path
        clean_calls = server.stats["requests"]
        ref, events = await failed_run(tmp_path, server)
        failed = next(i for i in llm_calls_of_tests(events) if events[i].error is not None)
        errored = [r for r in results(ref / "oracle") if r["status"] == "errored"]
        assert len(errored) == 1 and errored[0]["dataset"] == "restaurant"
        asked = server.stats["requests"]
        retried = (await run_async(config(server.url), ["oracle"], results=ref.parent, run_name=ref.name,
                                   retry_errored=True)).path
        # the failed call asked again (answered now) and the test calls after it made, none made before it again
        before = sum(1 for i in llm_calls_of_tests(events) if i < failed)
        assert before and server.stats["requests"] - asked == clean_calls - before
        assert results(retried / "oracle") == results(clean / "oracle")
        assert not [r for r in results(retried / "oracle") if r["status"] == "errored"]
        # as if it had never failed: the same events as the run whose test LLM always answered
        assert (retried / "oracle" / "events.jsonl").read_bytes() == (clean / "oracle" / "events.jsonl").read_bytes()
