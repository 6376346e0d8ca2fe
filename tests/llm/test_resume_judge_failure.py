"""A run whose judge failed a call (not for good: a 503 after its retries) and that was then stopped (Ctrl-C) resumes:
the failure is in its event log, so the resume gives the same unscored verdict from it instead of asking the judge
again (which made an event the log did not hold: "event N of the log differs"). The judge is a server the test starts
on 127.0.0.1 that fails its first call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ltm_harness._api import run_async
from ltm_harness._store.events import TestEnd, parse_event
from ltm_harness._store.records import LLMCall
from ltm_harness.testing import make_config, serve_local
from tests.core.test_judge_failures import JudgeEndpoint

from .gpt_fixture import write_gpt_dataset


def results(run: Path) -> list[dict]:
    return [{k: r[k] for k in ("dataset", "example_id", "status", "score", "reasons", "verdicts")}
            for r in json.loads((run / "oracle" / "results.json").read_text())]


async def test_a_run_stopped_after_a_judge_failure_resumes_with_the_same_verdicts_and_no_call_again(tmp_path):
    write_gpt_dataset(tmp_path / "ds")
    judge = JudgeEndpoint(503, {"message": "overloaded"}, models=["j"], failing=1)  # its first call fails
    async with serve_local(judge.app()) as url:
        cfg = make_config(["fictional_facts", "colours"], span=1000, examples=2, dataset_dirs=[str(tmp_path / "ds")],
                          judge={"base_url": f"{url}/v1"}, llm={"max_attempts": 1, "cache": False})
        ref = (await run_async(cfg, ["oracle"], results=tmp_path / "ref", judge="j")).path
        asked = judge.chats
        log = ref / "oracle" / "events.jsonl"
        lines = log.read_bytes().splitlines(keepends=True)
        events = [parse_event(line) for line in lines]
        failed = next(i for i, e in enumerate(events) if isinstance(e, LLMCall) and e.error is not None)
        assert "HTTP 503: overloaded" in (events[failed].error or "") and events[failed].role == "judge"
        assert isinstance(events[failed + 1], TestEnd) and events[failed + 1].status == "unscored"
        for cut in (failed + 1, failed + 3):  # stopped as its test ended, and a few turns later
            work = tmp_path / f"cut{cut}" / ref.name
            shutil.copytree(ref, work)
            (work / "oracle" / "events.jsonl").write_bytes(b"".join(lines[:cut]))
            for name in ("results.json", "summary.json"):
                (work / "oracle" / name).unlink()
            judge.chats = asked
            resumed = (await run_async(cfg, ["oracle"], results=work.parent, run_name=ref.name, resume=True,
                                       judge="j")).path
            assert (resumed / "oracle" / "events.jsonl").read_bytes() == log.read_bytes()
            assert results(resumed) == results(ref)
            made = sum(isinstance(e, LLMCall) and e.role == "judge" for e in events[cut:])
            assert judge.chats == asked + made  # the failed call was not asked again
