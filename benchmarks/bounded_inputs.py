"""What hostile replies cost in memory: an HTTP agent and an OpenAI-compatible endpoint on 127.0.0.1 that answer
with an endless body, a huge body, and a gzip bomb, read through the harness's real adapters (`HTTPAgent`,
`LLMClient`) with their default reply limit (16 MiB), and a YAML alias bomb and deeply nested JSON read by the
config and run-file readers; and a run of a 2 GiB LongMemEval-shaped file with `--limit 2` (generated once in a
temporary folder, deleted after), whose peak RSS must not grow with the file (target < 300 MB: the file is only
streamed, its fingerprint hashed in chunks).

For each case it prints the outcome (the one-line error) and the peak of Python allocations during the call
(tracemalloc), with the process's peak RSS at the end. Without the limits, the endless reply grows without bound
and the gzip bomb unpacks to its full size (here 1 GiB).

The servers run in a process of their own, so only the harness's side is measured.

Run: `python benchmarks/bounded_inputs.py [--bomb-mib 1024] [--endless-mib 1024] [--longmemeval-gib 2]
[--longmemeval-file PATH] [--only replies|longmemeval]` (`--longmemeval-gib 0` leaves the big file out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import shutil
import resource
import socket
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aiohttp import web  # noqa: E402

from ltm_harness._agents.base import AgentMessage  # noqa: E402
from ltm_harness._agents.http_agent import HTTPAgent  # noqa: E402
from ltm_harness._errors import LTMError  # noqa: E402
from ltm_harness._llm.client import LLMClient  # noqa: E402
from ltm_harness._llm.endpoint import resolve_endpoint  # noqa: E402
from ltm_harness._runner.config import load_config  # noqa: E402
from ltm_harness._store.files import read_run_json  # noqa: E402

MIB = 1024 * 1024
MESSAGE = AgentMessage(text="What is my favourite colour?", timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc), tokens=7)


def gzip_bomb(prefix: bytes, size: int, suffix: bytes) -> bytes:
    """`prefix` + `size` zero bytes + `suffix`, gzip-compressed in a stream (never held whole)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [z.compress(prefix)]
    block = b"0" * MIB
    for _ in range(size // MIB):
        parts.append(z.compress(block))
    parts += [z.compress(suffix), z.flush()]
    return b"".join(parts)


def completion(text: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


def endless_handler(total: int) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        chunk = b"a" * (256 * 1024)
        try:
            await response.write(b'{"reply": "')
            for _ in range(total // len(chunk)):
                await response.write(chunk)
        except ConnectionError:  # the client stopped reading: as it should
            pass
        return response
    return handler


def fixed_handler(body: bytes, gzipped: bool) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        headers = {"Content-Type": "application/json", **({"Content-Encoding": "gzip"} if gzipped else {})}
        return web.Response(body=body, headers=headers)
    return handler


async def measure(name: str, call: Callable[[], Awaitable[Any]], rows: list[tuple[str, str, float, float]]) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        await call()
        outcome = "accepted"
    except LTMError as exc:
        outcome = str(exc)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows.append((name, outcome, peak / MIB, time.perf_counter() - started))


def serve(port: int, bomb_mib: int, endless_mib: int) -> None:
    """The hostile servers, in a process of their own (so their buffers are not measured with the client's)."""
    agent_bomb = gzip_bomb(b'{"reply": "', bomb_mib * MIB, b'"}')
    head, _, tail = completion("@@").partition(b"@@")
    llm_bomb = gzip_bomb(head, bomb_mib * MIB, tail)
    app = web.Application()
    app.router.add_post("/endless", endless_handler(endless_mib * MIB))
    app.router.add_post("/huge", fixed_handler(b'{"reply": "' + b"a" * (64 * MIB) + b'"}', False))
    app.router.add_post("/bomb", fixed_handler(agent_bomb, True))
    app.router.add_post("/llm-huge/chat/completions", fixed_handler(completion("a" * (64 * MIB)), False))
    app.router.add_post("/llm-bomb/chat/completions", fixed_handler(llm_bomb, True))
    web.run_app(app, host="127.0.0.1", port=port, print=None, handle_signals=True)


async def wait_for(port: int) -> None:
    for _ in range(600):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise SystemExit("the benchmark's server did not start")


LONGMEMEVAL_CONFIG = """config:
  run_name: bounded-longmemeval
  seed: 0
datasets:
  args:
    memory_span: 32000
    dataset_examples: 500
  datasets:
    - name: longmemeval
      args: {{variant: m, mode: reference, data_file: {data}}}
"""


def longmemeval_run(gib: float, given: Path | None) -> None:
    """`run -a null --limit 2` on a LongMemEval-shaped file of `gib` GiB (generated in a temporary folder unless
    `given`): wall time and the run process's own peak RSS (wait4), which must not grow with the file."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _timing import child
    from longmemeval_data import write_file

    work = Path(tempfile.mkdtemp(prefix="ltm-bounded-lme-"))
    try:
        data = given
        if data is None:
            data = work / "longmemeval_m_shaped.json"
            sessions = max(1, round(gib * 185))  # ~2000-token sessions: 500 questions x 185 sessions per GiB
            started = time.perf_counter()
            write_file(data, questions=500, sessions=sessions, session_tokens=2000, seed=0)
            print(f"generated {data.stat().st_size / 2**30:.2f} GiB in {time.perf_counter() - started:.0f} s", flush=True)
        config = work / "run.yml"
        config.write_text(LONGMEMEVAL_CONFIG.format(data=json.dumps(str(data))), encoding="utf-8")
        argv = [sys.executable, "-m", "ltm_harness", "run", "-c", str(config), "-a", "null", "--limit", "2",
                "--results", str(work / "results"), "--quiet", "--no-report", "--overwrite"]
        done = child(argv, ok=range(256))
        said, code = done.stderr.strip(), done.code
        print(f"LongMemEval-shaped file of {data.stat().st_size / 2**30:.2f} GiB, run -a null --limit 2: exit {code}, "
              f"{done.wall:.1f} s, peak RSS {done.peak_mib:.0f} MiB (target < 300 MB)"
              + (f"; stderr: {said[-300:]}" if code not in (0, 1, 3) else ""), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb-mib", type=int, default=1024, help="size the gzip bombs unpack to (MiB)")
    parser.add_argument("--endless-mib", type=int, default=1024, help="how long the 'endless' body goes on (MiB)")
    parser.add_argument("--longmemeval-gib", type=float, default=2.0,
                        help="size of the generated LongMemEval-shaped file (GiB; 0: leave the case out)")
    parser.add_argument("--longmemeval-file", type=Path, help="an existing LongMemEval-shaped file instead")
    parser.add_argument("--only", choices=["replies", "longmemeval"], help="run one part only")
    args = parser.parse_args()
    if args.only != "replies" and (args.longmemeval_gib > 0 or args.longmemeval_file):
        longmemeval_run(args.longmemeval_gib, args.longmemeval_file)
    if args.only == "longmemeval":
        return
    rows: list[tuple[str, str, float, float]] = []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(port, args.bomb_mib, args.endless_mib),
                                                            daemon=True)
    server.start()
    try:
        await wait_for(port)
        base = f"http://127.0.0.1:{port}"
        print(f"gzip bombs unpack to {args.bomb_mib} MiB; the endless body goes on for {args.endless_mib} MiB", flush=True)
        for label, path in [("HTTP agent, endless body", "endless"), ("HTTP agent, 64 MiB body", "huge"),
                            ("HTTP agent, gzip bomb", "bomb")]:
            agent = HTTPAgent(f"{base}/{path}")
            await measure(label, lambda: agent.reply(MESSAGE), rows)
            await agent.close()
        for label, path in [("LLM endpoint, 64 MiB body", "llm-huge"), ("LLM endpoint, gzip bomb", "llm-bomb")]:
            client = LLMClient(resolve_endpoint("benchmark", f"{base}/{path}"))
            await measure(label, lambda: client.chat("judge", "m", [{"role": "user", "content": "hi"}]), rows)
            await client.close()
    finally:
        server.terminate()
        server.join(10)

    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.yml"
        bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")))
        deep = Path(tmp) / "deep.json"
        deep.write_text("[" * 1_000_000 + "]" * 1_000_000)

        async def config() -> None:
            load_config(bomb)

        async def run_file() -> None:
            read_run_json(deep)

        await measure("config, YAML alias bomb (9^9 values)", config, rows)
        await measure("run file, JSON nested 1,000,000 deep", run_file, rows)

    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'peak MiB':>8}  {'seconds':>7}  outcome")
    for name, outcome, peak, seconds in rows:
        print(f"{name:<{width}}  {peak:8.1f}  {seconds:7.2f}  {outcome[:150]}")
    worst = max(rows, key=lambda r: r[2])
    print(f"worst reply case: {worst[0]}: peak {worst[2]:.1f} MiB of Python allocations")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
