"""BEAM at 10M scale, offline: generated chats of the 10M shape (ten sub-plans each, ~20k messages, ~10M tokens per
chat; no real data, benchmarks/beam_data.py) played as `beam-10m` plays them.

    python benchmarks/beam_scale.py                    # 10 chats with null, the floor, one chat with the mock model
    python benchmarks/beam_scale.py --chats 2          # fewer chats
    python benchmarks/beam_scale.py --work DIR         # keep the files (default: a temporary folder)
    python benchmarks/beam_scale.py --peaks 1 --code . ../main --repeats 2 --skip-floor --skip-mock
                                                       # peak RSS of 1 and 10 chats, this checkout and another
                                                       # interleaved, two rounds

Prints, for the run with `null` (`python -m ltm_harness run -c beam-10m`, the config as shipped but for the data
folder): wall time, peak RSS of the run's process (in a new run folder, its definitions made: the user cache of
definitions off; and again in that folder, its definitions read back), the run folder's size against the input's,
the history turns;
the floor, in one process: every chat streamed and assembled from its sub-plans, every message tokenized once and
written as one JSON line (what any run must at least do); and for an `openai:mock@128000` agent on one chat: model
calls per question (history costs none) and whether every request holds exactly the newest messages that fit in
128,000 tokens (the window rule of the `openai:` agent, checked against the conversation rebuilt from the run's
event log). Targets (issue 26): 10 chats with null under 5 minutes, peak RSS under 1 GB, run folder under 2x the
input; 1 call per question; truncation exact.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from beam_data import write_10m_chat  # noqa: E402
from _timing import child, load  # noqa: E402

CONFIG = """config:
  run_name: {name}
  seed: 0
  isolated_concurrency: 2
datasets:
  args:
    memory_span: 32000
    dataset_examples: {n}
  datasets:
    - name: beam
      args: {{scale: 10M, mode: reference, data_dir: {data}}}
"""
BUDGET = 128000


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(work: Path, data: Path, agent: str, n: int, name: str, env: dict[str, str] | None = None,
        code: Path = ROOT, fresh: bool = True) -> dict[str, Any]:
    """One run in and with the harness of the checkout `code`; `fresh`: in a new run folder, its definitions made
    (the user cache of definitions off), else again in the folder of the last such run (its definitions read)."""
    config = work / f"{name}.yml"
    config.write_text(CONFIG.format(name=name, n=n, data=json.dumps(str(data))), encoding="utf-8")
    results = work / "results"
    if fresh:
        shutil.rmtree(results / name, ignore_errors=True)
    done = child([sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", agent,
                 "--results", str(results), "--quiet", "--no-report", "--overwrite"],
                 {"LTM_DEFINITIONS_CACHE": "off", **(env or {})}, code)
    folder = results / name
    summary = json.loads((folder / "summary.json").read_text())["agents"][0]
    return {"wall_s": round(done.wall, 1), "peak_rss_mib": round(done.peak_mib), "folder": folder,
            "run_folder_mib": round(size_of(folder) / 2**20, 1), "turns": summary["turns"],
            "observed_turns": summary["observed_turns"], "calls": summary["usage"]["calls"].get("agent", 0)}


FLOOR = """
import json, sys, time
from pathlib import Path
from ltm_harness._interop.beam.chat import iter_assembled, plan_files
from ltm_harness._tokens import get_tokenizer
count = get_tokenizer().count
start = time.perf_counter()
messages = tokens = 0
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for folder in sorted(Path(sys.argv[1]).iterdir()):
        for m in iter_assembled(plan_files(folder)):
            n = count(m.content)
            out.write(json.dumps({"i": m.id, "user": m.content, "user_tokens": n}) + "\\n")
            messages += 1
            tokens += n
print(messages, tokens, time.perf_counter() - start)
"""


def floor(chats: Path, work: Path) -> dict[str, Any]:
    done = child([sys.executable, "-c", FLOOR, str(chats), str(work / "floor.jsonl")],
                 {"PYTHONPATH": str(ROOT)})
    messages, tokens, _ = done.stdout.split()
    (work / "floor.jsonl").unlink()
    return {"wall_s": round(done.wall, 1), "peak_rss_mib": round(done.peak_mib), "messages": int(messages),
            "tokens": int(tokens)}


class MockInThread:
    """The mock LLM server in a thread of this process, so that the requests it received can be read."""

    def __enter__(self) -> Any:
        from ltm_harness._llm.mock_server import MockLLMServer

        self.server = MockLLMServer()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def serve() -> None:
            async with self.server:
                ready.set()
                while not self.stop:
                    await asyncio.sleep(0.05)

        self.stop = False
        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(serve()), daemon=True)
        self.thread.start()
        ready.wait(30)
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.stop = True
        self.thread.join(30)


def truncation_exact(folder: Path, requests: list[dict[str, Any]]) -> tuple[int, int]:
    """(requests checked, requests whose messages are exactly the newest that fit in BUDGET): the conversation is
    rebuilt from the event log as the `openai:` agent keeps it (a user's message `[time] text`, an assistant's
    message as it is, each answered question and its reply kept unless the agent went back from it), and each
    request must be the end of it up to its question, fit, and be one the next older message (with an assistant
    reply it would leave at the front) would not fit."""
    from ltm_harness._llm.client import MESSAGE_OVERHEAD, REPLY_PRIMING
    from ltm_harness._tokens import get_tokenizer

    count = get_tokenizer().count
    (log,) = sorted(folder.rglob("events/*.jsonl"))
    history: list[tuple[str, str]] = []
    cost: list[int] = []
    pending = iter(requests)
    checked = exact = 0

    def add(role: str, text: str) -> None:
        history.append((role, text))
        cost.append(count(text) + MESSAGE_OVERHEAD)

    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") != "turn":
            continue
        when = datetime.fromisoformat(event["time"])
        role = event.get("role") or "user"
        add(role, event["user"] if role == "assistant" else f"[{when:%Y-%m-%d %H:%M} UTC] {event['user']}")
        if event.get("question"):
            request = next(pending, None)
            if request is not None:
                checked += 1
                exact += _exact(request, history, cost, count, MESSAGE_OVERHEAD, REPLY_PRIMING)
            if event.get("went_back"):
                history.pop()
                cost.pop()
                continue
        if not event.get("observed"):
            add("assistant", event["reply"])
    return checked, exact


def _exact(request: dict[str, Any], history: list[tuple[str, str]], cost: list[int], count: Any, overhead: int,
           priming: int) -> bool:
    system = sum(count(m["content"]) + overhead for m in request["messages"] if m["role"] == "system")
    sent = [(m["role"], m["content"]) for m in request["messages"] if m["role"] != "system"]
    end = len(history)
    start = end - len(sent)
    used = priming + system + sum(cost[start:end])
    fits = start >= 0 and history[start:end] == sent and used <= BUDGET
    # the longest fitting run starts at `start`, or one earlier at an assistant reply the window drops
    maximal = start <= 0 or used + cost[start - 1] > BUDGET or (
        history[start - 1][0] == "assistant" and (start == 1 or used + cost[start - 1] + cost[start - 2] > BUDGET))
    return fits and maximal


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, help="where the files go (kept); default: a temporary folder")
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--peaks", type=int, nargs="*", help="also run null on these numbers of chats (peak RSS flat?)")
    ap.add_argument("--code", type=Path, nargs="*", help="checkouts to run null with, in turn (default: this one)")
    ap.add_argument("--repeats", type=int, default=1, help="rounds of the null runs")
    ap.add_argument("--turns", type=int, default=50, help="turns (4 messages) per batch; 10 batches per sub-plan")
    ap.add_argument("--message-words", type=int, default=400, help="~1.25 tokens a word")
    ap.add_argument("--skip-floor", action="store_true")
    ap.add_argument("--skip-null", action="store_true")
    ap.add_argument("--skip-mock", action="store_true")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ltm-beam-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        data = work / "data"
        chats = data / "chats" / "10M"
        start = time.perf_counter()
        for n in range(1, args.chats + 1):
            if not (chats / str(n) / "probing_questions" / "probing_questions.json").is_file():
                write_10m_chat(chats / str(n), seed=n, turns=args.turns, message_words=args.message_words)
        mib = size_of(chats) / 2**20
        print(f"input: {args.chats} chats of the 10M shape, {mib:,.0f} MiB ({time.perf_counter() - start:.0f} s to "
              "write or find)")
        low = None if args.skip_floor else floor(chats, work)
        if low is not None:
            print(f"floor (stream + assemble, tokenize once, write one JSON line per message): {low['wall_s']} s, peak "
                  f"RSS {low['peak_rss_mib']} MiB; {low['messages']:,} messages, {low['tokens']:,} tokens "
                  f"({low['tokens'] / args.chats / 1e6:.2f}M per chat)")
        if not args.skip_null:
            for _ in range(args.repeats):  # interleaved: each checkout and number of chats in turn, every round
                for n in sorted(set(args.peaks or []) | {args.chats}):
                    for code in args.code or [ROOT]:
                        null = run(work, data, "null", n, f"beam-10m-null-{n}", code=code)
                        again = run(work, data, "null", n, f"beam-10m-null-{n}", code=code, fresh=False)
                        print(f"beam-10m with null, {n} chats ({code}, {load()}): {null['wall_s']} s, peak RSS "
                              f"{null['peak_rss_mib']} MiB (definitions made), {again['peak_rss_mib']} MiB (again, "
                              f"definitions read); run folder {null['run_folder_mib']:,} MiB "
                              f"({null['run_folder_mib'] / mib * args.chats / n:.2f}x the input), "
                              f"{null['turns']:,} turns of which {null['observed_turns']:,} history")
        if not args.skip_mock:
            with MockInThread() as server:
                mock = run(work, data, f"openai:mock@{BUDGET}", 1, "beam-10m-mock",
                           {"OPENAI_BASE_URL": server.url})
                requests = [r for r in server.requests if r.get("model") == "mock"]
            checked, exact = truncation_exact(mock["folder"], requests)
            print(f"openai:mock@{BUDGET} on one chat: {mock['calls']} model calls for 20 questions "
                  f"({mock['calls'] / 20:.2f} per question), {mock['observed_turns']:,} history turns, "
                  f"{mock['wall_s']} s, peak RSS {mock['peak_rss_mib']} MiB; truncation exact in {exact} of "
                  f"{checked} requests")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
