"""`--judge-batch`: the judge's requests through the mock's Batch API (the real `openai` client's files and batches
calls), verdicts equal to the online judge's, the batch discount, a kill while waiting resumed by polling the same
batch, and batches that fail or expire."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ltm_harness._api import rescore_async, run_async
from ltm_harness._llm.batch import BatchStatus
from ltm_harness._llm.ledger import read_spend
from ltm_harness._llm.pricing import Price, PriceTable
from ltm_harness._llm.mock_batch import BatchSettings
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._runner import judge_batch
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
PRICE = {"mock-judge": {"prompt": 2.0, "completion": 8.0}}
JUDGED = 8  # judged questions (categories 1-4 with an answer) of the synthetic file's two conversations


async def killed_while_batched(results: Path) -> Path:
    """A batched run into `results`, cancelled as a kill would once it keeps its batch's id (the batch is waited for,
    its id on disk); its judge-batch.json. The bounds are hang guards, not speed checks (a cancellation lost in the
    batch's polling would otherwise wait forever)."""
    task = asyncio.ensure_future(run_async(config(), ["openai:mock"], judge="mock-judge", results=results,
                                           judge_batch=True))
    state = results / "t" / "judge-batch.json"
    for _ in range(6000):
        if state.is_file() and json.loads(state.read_text()).get("pending"):
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the run never kept a pending batch")
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=120)
    assert done, "the cancelled run did not stop: the cancellation was lost"
    with pytest.raises(asyncio.CancelledError):
        task.result()
    return state


@pytest.fixture(autouse=True)
def _fast_polls(monkeypatch):
    monkeypatch.setattr(judge_batch, "POLL_FIRST", 0.01)


def config():
    return make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                       llm={"prices": PRICE, "backoff_initial": 0.01})


def verdicts(run_dir: Path) -> list[list[dict]]:
    results = json.loads((run_dir / "openai_mock" / "results.json").read_text())
    return [[{k: v[k] for k in ("score", "reason", "raw", "model", "prompt_hash")} for v in r["verdicts"]]
            for r in results]


def judge_cost(run_dir: Path) -> float:
    return json.loads((run_dir / "openai_mock" / "summary.json").read_text())["cost_split"]["judge"]


async def test_batch_verdicts_equal_the_online_judges_at_half_the_price(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        online = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path / "online")
        online_calls = server.stats["model:mock-judge"]
        assert online_calls == JUDGED and server.stats["batches_created"] == 0
        seen: list[BatchStatus] = []
        batched = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path / "batch",
                                  judge_batch=True, on_judge_batch=seen.append)
        assert server.stats["model:mock-judge"] == online_calls  # no judge request was sent online
        assert server.stats["batches_created"] == 1 and server.stats["batch_lines"] == JUDGED
        assert verdicts(batched.path) == verdicts(online.path)
        assert sum(len(v) for v in verdicts(batched.path)) == JUDGED
        assert judge_cost(online.path) > 0 and judge_cost(batched.path) == pytest.approx(judge_cost(online.path) / 2)
        # our cost is the mock's own bill (its batch lines at the batch discount), and the run folder's ledger says it
        prices = PriceTable({m: Price(**p) for m, p in PRICE.items()})
        both = judge_cost(online.path) + judge_cost(batched.path)
        assert server.bill.usd(prices, {"mock-judge"}) == pytest.approx(both)
        assert server.bill.batch["mock-judge"].requests == JUDGED
        assert read_spend(batched.path / "spend.jsonl") == pytest.approx(judge_cost(batched.path))
        assert seen[0].status == "validating" and seen[-1].status == "completed"
        assert seen[-1].line() == f"judge batch {seen[-1].id}: {JUDGED}/{JUDGED} done (completed)"
        assert not (batched.path / "judge-batch.json").exists()
        summary = json.loads((batched.path / "openai_mock" / "summary.json").read_text())
        assert summary["usage"]["calls"]["judge"] == JUDGED and not summary["usage"]["cached"].get("judge")
        # the batch's answers are in the judge cache: a rescore of the batched run makes no call and pays nothing
        again = await rescore_async(batched.path)
        assert server.stats["model:mock-judge"] == online_calls and server.stats["batches_created"] == 1
        assert verdicts(again.path) == verdicts(online.path)
        summary = json.loads((batched.path / "openai_mock" / "summary.json").read_text())
        assert summary["usage"]["cached"]["judge"] == JUDGED and "judge" not in summary["cost_split"]


async def test_a_run_killed_while_waiting_polls_the_same_batch_when_resumed(tmp_path, monkeypatch):
    async with MockLLMServer(batch=BatchSettings(polls=10_000)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        state = await killed_while_batched(tmp_path)
        pending = json.loads(state.read_text())["pending"]
        assert len(pending["requests"]) == JUDGED
        server.batches.settings = BatchSettings(polls=1)
        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, resume=True,
                              judge_batch=True)
        assert server.stats["batches_created"] == 1  # never submitted twice
        assert server.stats["model:mock-judge"] == 0
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED and not state.exists()


async def test_a_rescore_collects_the_batch_a_stopped_run_waited_for(tmp_path, monkeypatch):
    async with MockLLMServer(batch=BatchSettings(polls=10_000)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        state = await killed_while_batched(tmp_path)
        server.batches.settings = BatchSettings(polls=1)
        out = await rescore_async(tmp_path / "t")  # no --judge-batch: the batch paid for is still collected
        assert server.stats["batches_created"] == 1 and server.stats["model:mock-judge"] == 0
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED and not state.exists()


async def test_an_expired_batch_sends_what_it_left_undone_again(tmp_path, monkeypatch):
    async with MockLLMServer(batch=BatchSettings(end="expired", answered=0.5)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        done = asyncio.ensure_future(run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path,
                                               judge_batch=True, on_judge_batch=lambda s: _complete_after_first(
                                                   server, s)))
        out = await done
        assert server.stats["batches_created"] == 2
        assert server.stats["batch_lines"] == JUDGED  # half in the first, the rest in the second
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED


def _complete_after_first(server: MockLLMServer, status: BatchStatus) -> None:
    if status.status == "expired":
        server.batches.settings = BatchSettings()


async def test_a_failed_batch_is_one_line_and_a_rescore_finishes_the_judging(tmp_path, monkeypatch):
    from ltm_harness._errors import LLMError

    async with MockLLMServer(batch=BatchSettings(end="failed")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        with pytest.raises(LLMError, match=r"judge batch batch_mock1 failed: the batch failed \(mock\) \(0 of 8 "
                                           r"requests answered, kept\); score the rest with rescore .* --judge-batch"):
            await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True)
        # the agent's answers are kept, their verdicts unscored for now
        results = json.loads((tmp_path / "t" / "openai_mock" / "results.json").read_text())
        assert not any(r["verdicts"] for r in results)
        server.batches.settings = BatchSettings()
        out = await rescore_async(tmp_path / "t", judge_batch=True)
        assert server.stats["batches_created"] == 2
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED


async def test_a_request_the_batch_refuses_fails_as_online_and_keeps_the_rule_score(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import FaultSettings

    async with MockLLMServer(FaultSettings(contexts={"mock-judge": 20})) as server:  # every judge prompt is longer
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True)
        assert server.stats["batches_created"] == 1 and server.stats["batch_lines"] == 0
        assert server.stats["model:mock-judge"] == 0  # never sent online instead
        results = json.loads((out.path / "openai_mock" / "results.json").read_text())
        reasons = " ".join(" ".join(r["reasons"]) for r in results)
        assert "answered HTTP 400 in judge batch batch_mock1" in reasons and "context length" in reasons
        assert not any(r["verdicts"] for r in results)
        assert sum(r["status"] == "ok" for r in results) >= JUDGED  # the F1 of every question stays

async def test_the_command_line_shows_the_batch_progress_and_needs_a_judge(tmp_path, monkeypatch, capsys):
    from ltm_harness._cli.main import main as cli

    async with MockLLMServer(batch=BatchSettings(polls=3)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        base = ["run", "-c", "locomo", "-a", "openai:mock", "--examples", "2", "--results", str(tmp_path), "--quiet",
                "--no-report", "--set", f"datasets.locomo.args.data_file={DATA}"]
        assert await asyncio.to_thread(cli, [*base, "--judge-batch"]) == 2
        assert capsys.readouterr().err.strip() == ("error: --judge-batch sends the judge's requests as a batch, but "
                                                   "there is no judge; give --judge MODEL (or config.judge.model)")
        assert await asyncio.to_thread(cli, [*base, "--judge", "mock-judge", "--judge-batch"]) == 0
        out = capsys.readouterr().out
        assert "judge batch batch_mock1: 0/8 done (validating)" in out
        assert "judge batch batch_mock1: 2/8 done (in_progress)" in out
        assert "judge batch batch_mock1: 8/8 done (completed)" in out
        assert server.stats["model:mock-judge"] == 0


async def test_the_batch_requests_are_retried_through_rate_limits_and_server_errors(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import FaultSettings

    async with MockLLMServer(batch=BatchSettings(polls=3)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)

        def storm(status: BatchStatus) -> None:
            if status.status == "validating":  # the next polls and the download meet a 429, a 500, a 429
                server.set_faults(FaultSettings(script=["429", "500", "429"], retry_after=0.01))

        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True,
                              on_judge_batch=storm)
        assert server.stats["429"] == 2 and server.stats["500"] == 1
        assert server.stats["batches_created"] == 1 and sum(len(v) for v in verdicts(out.path)) == JUDGED


async def test_a_batch_that_could_pass_the_budget_is_not_sent_and_a_resume_with_more_sends_it(tmp_path, monkeypatch):
    from ltm_harness._llm.ledger import BudgetReached

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        cfg = config()
        cfg.config.max_cost = 0.01  # the batch's worst case (8 requests, up to 16,384 tokens each) is more
        with pytest.raises(BudgetReached, match="budget reached"):
            await run_async(cfg, ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True)
        assert server.stats["batches_created"] == 0 and server.stats["model:mock-judge"] == 0
        cfg.config.max_cost = 5.0
        out = await run_async(cfg, ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True,
                              resume=True)
        assert server.stats["batches_created"] == 1 and sum(len(v) for v in verdicts(out.path)) == JUDGED
        assert read_spend(out.path / "spend.jsonl") == pytest.approx(judge_cost(out.path)) and judge_cost(out.path) > 0


async def test_a_run_killed_after_creating_its_batch_but_before_keeping_its_id_finds_it_again(tmp_path, monkeypatch):
    async with MockLLMServer(batch=BatchSettings(polls=10_000)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        state = await killed_while_batched(tmp_path)
        keys = list(json.loads(state.read_text())["pending"]["requests"])
        # as the folder is when the kill comes between the batch's creation and its id being written
        state.write_text(json.dumps({"tag": judge_batch._tag(keys)}))
        server.batches.settings = BatchSettings(polls=1)
        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, resume=True,
                              judge_batch=True)
        assert server.stats["batches_created"] == 1  # found by its tag, not submitted again
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED and not state.exists()


async def test_beam_asks_every_rubric_item_and_event_pair_of_an_answer_in_one_batch(tmp_path, monkeypatch):
    from ltm_harness.testing import load_script

    gen = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "beam_data.py")
    gen.write_dataset(tmp_path / "beam", "100K", 2)
    cfg = make_config([{"name": "beam", "args": {"data_dir": str(tmp_path / "beam")}}], span=32000, examples=2)

    def beam_verdicts(out) -> list:
        return [(r.example_id, r.score, r.status, [(v.score, v.raw) for v in r.verdicts])
                for r in out.results("retrieval")]

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        online = await run_async(cfg, ["retrieval", "oracle"], judge="mock-judge", results=tmp_path / "online")
        online = [(r.example_id, r.score, r.status, [(v.score, v.raw) for v in r.verdicts])
                  for r in online.results("retrieval")]
        sent = server.stats["model:mock-judge"]
        batched = await run_async(cfg, ["retrieval", "oracle"], judge="mock-judge", results=tmp_path / "online",
                                  judge_batch=True, no_cache=True, overwrite=True)  # the cached answers not used
        # one batch: the rubric's items and the event pairs are not asked one batch after another, and a request
        # asked twice in the run (the same answer of two agents) is sent once
        assert server.stats["batches_created"] == 1
        assert server.stats["model:mock-judge"] == sent  # nothing sent online
    assert beam_verdicts(batched) == online
    assert sum(len(v) for *_, v in beam_verdicts(batched)) > 40


async def test_a_test_judged_answer_by_answer_asks_every_answer_in_the_same_batch(tmp_path, monkeypatch):
    from .gpt_fixture import write_gpt_dataset

    write_gpt_dataset(tmp_path / "ds")
    cfg = make_config(["fictional_facts"], span=2000, examples=2, dataset_dirs=[str(tmp_path / "ds")])
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(cfg, ["oracle"], judge="mock-judge", results=tmp_path / "r", judge_batch=True)
        assert server.stats["batches_created"] == 1 and server.stats["batch_lines"] == 2 * 2
        assert [len(r.verdicts) for r in out.results("oracle")] == [2, 2]


async def test_a_batch_needs_the_judge_cache_said_before_anything_runs(tmp_path):
    from ltm_harness._errors import ConfigError

    cfg = config()
    cfg.config.llm.cache = False
    with pytest.raises(ConfigError, match=r"^judge_batch=True keeps the batch's answers in the judge cache, which "
                                          r"config.llm.cache turns off; set llm.cache: true$"):
        await run_async(cfg, ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True)
    assert not (tmp_path / "t").exists()


async def test_a_batch_run_stopped_while_playing_is_resumed_judging_in_batches(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        turns: list[object] = []

        def stop_midway(turn: object) -> None:
            turns.append(turn)
            if len(turns) == 12:  # some questions answered (their verdicts waiting), others not asked yet
                task.cancel()

        task = asyncio.ensure_future(run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path,
                                               judge_batch=True, on_turn=stop_midway))
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (tmp_path / "t" / "judge-batch.json").is_file() and server.stats["batches_created"] == 0
        # resumed without --judge-batch: judged as the run was started, the waiting verdicts not asked online
        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path, resume=True)
        assert server.stats["batches_created"] == 1 and server.stats["model:mock-judge"] == 0
        assert sum(len(v) for v in verdicts(out.path)) == JUDGED


async def test_a_batch_output_file_larger_than_one_reply_is_read(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        cfg = config()
        cfg.config.llm.max_reply_bytes = 1024  # one verdict fits; the batch's 8 answers (a few KB) do not
        out = await run_async(cfg, ["openai:mock"], judge="mock-judge", results=tmp_path, judge_batch=True)
        assert server.stats["batches_created"] == 1 and sum(len(v) for v in verdicts(out.path)) == JUDGED


async def test_a_rescore_whose_batch_is_not_sent_leaves_the_run_as_it_was(tmp_path, monkeypatch):
    from ltm_harness._llm.ledger import BudgetReached

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], judge="mock-judge", results=tmp_path)
        files = {p: p.read_bytes() for p in (out.path / "summary.json", out.path / "openai_mock" / "results.json",
                                             out.path / "openai_mock" / "summary.json")}
        with pytest.raises(BudgetReached):  # every verdict asked again, in a batch that could pass the budget
            await rescore_async(out.path, judge_batch=True, no_cache=True, max_cost=0.001)
        assert server.stats["batches_created"] == 0
        assert {p: p.read_bytes() for p in files} == files and not (out.path / "openai_mock.rescoring").exists()
