"""Judging a run through the provider's Batch API (`--judge-batch`): collect the judge's requests, submit them as
one batch, wait for it, score again from the answers.

A run judged in batches plays as usual, but its judge sends nothing: each request the disk cache cannot answer is
kept and its verdict left pending (`ltm_harness._llm.batch.JudgeBatch`). When every agent has finished, the kept
requests go to the provider as one batch (at the batch discount), which is polled until it ends, its progress said
after each poll; its answers go into the disk cache (the judge cache, keyed by endpoint, model and request), and
the run is scored again from its event logs (a re-scoring, no agent called), which now finds them there. A judge
that asks again (a reply it could not read, a verdict that needs a second call) leaves new requests: they go into
the next batch, up to `MAX_ROUNDS` batches, after which the few left are sent online.

The scoring that collects a rescore's first batch is dry (`Rescore(dry=True)`): the run's outputs stay as they were
until a batch has answered, so a rescore whose batch is not sent (the budget) or fails changes nothing.

The batch being waited for is kept in the run folder (`judge-batch.json`, written whole before the wait, with the
tag its requests are known by before the batch is created), so a run killed while waiting is resumed (`run --resume`
or `rescore`) by polling the same batch: the same requests are never submitted twice. A batch that fails or is
cancelled stops with one line (its answers so far kept); one that expires sends what it left undone again.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Callable, Sequence

from pydantic import BaseModel

from ltm_harness._errors import ConfigError, LLMError
from ltm_harness._llm import batch as api
from ltm_harness._llm.batch import BatchStatus, JudgeBatch
from ltm_harness._llm.client import LLMClient
from ltm_harness._llm.judge import LLMJudge
from ltm_harness._results.models import RunSummary
from ltm_harness._runner.modes import Rescore
from ltm_harness._runner.prepare import PreparedRun
from ltm_harness._store.files import read_run_file, write_model, writing
from ltm_harness._store.layout import RunFolder

MAX_ROUNDS = 4  # batches per run at most; requests left after them are sent online
POLL_FIRST, POLL_FACTOR, POLL_MAX = 1.0, 2.0, 60.0  # seconds between polls: from the first, growing, at most
BATCH_FILE_BYTES = 256 * 1024 * 1024  # the largest batch output or error file read (a provider takes 200 MB in)
OnBatch = Callable[[BatchStatus], None]


class PendingBatch(BaseModel):
    id: str
    requests: dict[str, str]  # key (custom_id) -> model, of every line sent


class JudgeBatchState(BaseModel):
    """`judge-batch.json`: the judge's batches of a run whose verdicts are not all in yet."""

    tag: str | None = None  # the tag of the batch being created (kept first: a kill then finds it again by it)
    pending: PendingBatch | None = None  # the batch being waited for
    paid: dict[str, str] = {}  # key -> the batch of this run that answered it
    failed: dict[str, str] = {}  # key -> why a batch refused it for good
    rounds: int = 0  # batches submitted


def _read(folder: RunFolder) -> JudgeBatchState | None:
    return read_run_file(folder.judge_batch, JudgeBatchState) if folder.judge_batch.is_file() else None


def has_pending_batch(folder: RunFolder) -> bool:
    """Whether the run in `folder` is judged in batches and its verdicts are not all in yet."""
    return folder.judge_batch.is_file()


def judged_in_batches(folder: RunFolder) -> None:
    """Say in the folder, before its first turn, that the run is judged in batches: a resume judges so too (a resume
    judging online would ask what the run left waiting, which its event logs do not hold)."""
    if not folder.judge_batch.is_file():
        write_model(folder.judge_batch, JudgeBatchState())


def _tag(keys: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode("ascii")).hexdigest()[:32]


async def _wait(client: LLMClient, batch_id: str, on_batch: OnBatch | None) -> BatchStatus:
    pause, said = POLL_FIRST, ""
    while True:
        status = await api.status(client, batch_id)
        if on_batch is not None and status.line() != said:
            said = status.line()
            on_batch(status)
        if status.ended:
            return status
        await asyncio.sleep(pause)
        pause = min(pause * POLL_FACTOR, POLL_MAX)


async def judge_in_batches(prepared: PreparedRun, agents: Sequence[str], kept: JudgeBatch | None, *,
                           read_cache: bool = True, more_batches: bool = True,
                           on_batch: OnBatch | None = None) -> RunSummary | None:
    """Finish a run's judging through the Batch API: `kept` holds the requests its last scoring kept (None: score
    again first, collecting them: a rescore, a resumed run). A batch waited for in the folder is polled first.
    `more_batches=False` (a rescore without --judge-batch) only collects that batch and judges the rest online. The
    run's new summary, or None when nothing was waiting (the scoring already done stands)."""
    from ltm_harness._runner.run import run_all

    folder = prepared.folder
    state = _read(folder)
    if state is None:
        if kept is not None and not kept.requests or kept is None and not more_batches:
            return None
        state = JudgeBatchState()
    summary: RunSummary | None = None  # set by the scoring that ends the loop
    client: LLMClient | None = None

    async def score(state: JudgeBatchState, online: bool, dry: bool = False) -> tuple[JudgeBatch, RunSummary]:
        batch = JudgeBatch(dict(state.paid), dict(state.failed), read_cache, online=online)
        return batch, await run_all(prepared, agents, mode=Rescore(dry), batch=batch, use_cache=read_cache)

    try:
        while True:
            if state.pending is not None:
                client = client or _judge_client(prepared)
                state = await _collect(client, folder, state, on_batch)
                kept = None
            if kept is None:
                last = state.rounds >= MAX_ROUNDS or not more_batches
                # the first scoring of a rescore only collects: the run stays as it was until a batch has answered
                dry = not last and not state.paid and not state.failed
                kept, summary = await score(state, last, dry)
                if dry and not kept.requests:  # nothing to send after all: this scoring is the one kept
                    kept, summary = await score(state, last)
            if kept.online or not kept.requests:
                break
            client = client or _judge_client(prepared)
            state = await _submit(client, folder, state, kept, on_batch)
            kept = None
    finally:
        if client is not None:
            await client.close()
    with writing(folder.judge_batch):
        folder.judge_batch.unlink(missing_ok=True)
    return summary


def _judge_client(prepared: PreparedRun) -> LLMClient:
    """The judge's endpoint, for the Batch API: its requests are the judge's, but a batch's output file holds every
    answer at once, so a file may be up to BATCH_FILE_BYTES (or llm.max_reply_bytes, if more)."""
    from ltm_harness._runner.run import build_run_llm

    llm = build_run_llm(prepared.config, prepared.folder.llm_cache, ledger=prepared.ledger)
    if not isinstance(llm.judge, LLMJudge):
        raise ConfigError("--judge-batch needs a judge: give --judge MODEL (or config.judge.model)")
    judge = llm.judge.client
    settings = judge.settings.model_copy(update={"max_reply_bytes": max(judge.settings.max_reply_bytes,
                                                                        BATCH_FILE_BYTES)})
    return LLMClient(judge.endpoint, settings, judge.limits, judge.prices, prepared.config.config.tokenizer,
                     judge.cache, judge.ledger)


async def _submit(client: LLMClient, folder: RunFolder, state: JudgeBatchState, kept: JudgeBatch,
                  on_batch: OnBatch | None) -> JudgeBatchState:
    """Send the kept requests as one batch (or take up the one a killed run created for the same requests)."""
    requests = list(kept.requests.values())
    tag = _tag([r.key for r in requests])
    found = await api.find(client, tag) if state.tag == tag else None
    state = state.model_copy(update={"tag": tag})
    write_model(folder.judge_batch, state)  # before creating: a kill from here on finds it again by its tag
    batch = found or await api.submit(client, requests, tag)
    if on_batch is not None:
        on_batch(batch)
    state = state.model_copy(update={"tag": None, "rounds": state.rounds + 1,
                                     "pending": PendingBatch(id=batch.id, requests={r.key: r.model for r in requests})})
    write_model(folder.judge_batch, state)
    return state


async def _collect(client: LLMClient, folder: RunFolder, state: JudgeBatchState,
                   on_batch: OnBatch | None) -> JudgeBatchState:
    """Wait for the pending batch to end and put its answers into the cache."""
    assert state.pending is not None
    batch = await _wait(client, state.pending.id, on_batch)
    answers = await api.collect(client, batch, state.pending.requests)
    paid = {**state.paid, **{k: batch.id for k in state.pending.requests
                             if k not in answers.failed and k not in answers.missing}}
    state = state.model_copy(update={"pending": None, "paid": paid, "failed": {**state.failed, **answers.failed}})
    write_model(folder.judge_batch, state)
    if batch.status in ("failed", "cancelled"):
        why = f": {client.endpoint.scrub(batch.errors)}" if batch.errors else ""
        raise LLMError(f"judge batch {batch.id} {batch.status}{why} ({answers.answered} of {batch.total} requests "
                       f"answered, kept); score the rest with rescore {folder.path} --judge-batch (or without it, "
                       "online)")
    return state
