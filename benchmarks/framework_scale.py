"""How a framework agent's store and time per turn grow with the conversation (issue 28, item 4).

Runs the default config's datasets (`--limit 1` each) at each span through `run_async`, with one framework example
on the mock model (`mock`, served in this process on 127.0.0.1): the LangGraph example
(`examples/agents/langgraph_agent.py`, ChatOpenAI in one node) or the Agents SDK example
(`examples/agents/agents_sdk_agent.py`). Prints, per span: the turns played, the store's size on disk (the
framework's files in the run folder's `state/`), ms per turn for the whole run, and how that time splits: the
framework's own (in the adapter's steps: LangGraph or the SDK, their store, the adapter; model calls taken out), the
model (the mock's handler), and the rest (the harness: planning, tokenizing, writing the events).

`--keep-all` turns the LangGraph store's pruning off (the harness's saver then keeps every checkpoint, as before
the store was made linear): compare the two. Run the long spans once; on a shared machine the times vary by ~10%.

Run: `python benchmarks/framework_scale.py [--framework langgraph|sdk] [--spans 1000,4000,32000] [--keep-all]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._agents.frameworks.base import FrameworkAgent  # noqa: E402
from ltm_harness._api import run_async  # noqa: E402
from ltm_harness._llm.mock_server import MockLLMServer  # noqa: E402

EXAMPLES = ROOT / "examples" / "agents"
SPECS = {"langgraph": f"lg=langgraph:{EXAMPLES / 'langgraph_agent.py'}:graph",
         "sdk": f"sdk=openai-agents:{EXAMPLES / 'agents_sdk_agent.py'}:agent"}


class Clock:
    """Seconds spent in the adapters' steps and in the mock's handler."""

    def __init__(self) -> None:
        self.steps = 0.0
        self.model = 0.0


def instrument(clock: Clock, server: MockLLMServer) -> None:
    step = FrameworkAgent._step

    async def timed_step(self: Any, doing: str, fn: Any, text: str) -> Any:
        start = time.perf_counter()
        try:
            return await step(self, doing, fn, text)
        finally:
            clock.steps += time.perf_counter() - start

    FrameworkAgent._step = timed_step  # type: ignore[method-assign,assignment]
    chat = server._chat

    async def timed_chat(request: Any) -> Any:
        start = time.perf_counter()
        try:
            return await chat(request)
        finally:
            clock.model += time.perf_counter() - start

    server._chat = timed_chat  # type: ignore[method-assign]


def store_bytes(run: Path) -> int:
    return sum(f.stat().st_size for f in run.glob("*/state/**/*") if f.is_file())


async def one(framework: str, span: int, server: MockLLMServer, clock: Clock) -> dict[str, Any]:
    clock.steps = clock.model = 0.0
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        output = await run_async(_config(span, server.url), [SPECS[framework]], results=Path(folder), limit=1)
        wall = time.perf_counter() - start
        turns = _turns(output.path)
        size = store_bytes(output.path)
    return {"span": span, "turns": turns, "store_mb": size / 1e6, "ms_turn": 1000 * wall / max(turns, 1),
            "framework_ms": 1000 * (clock.steps - clock.model) / max(turns, 1),
            "model_ms": 1000 * clock.model / max(turns, 1)}


def _config(span: int, url: str) -> Any:
    from ltm_harness._runner.config import load_config

    cfg = load_config("default")
    cfg.config.run_name = f"scale-{span}"
    cfg.config.openai.base_url = url
    cfg.datasets.args.memory_span = span
    return cfg


def _turns(run: Path) -> int:
    from ltm_harness._store.eventlog import read_events
    from ltm_harness._store.events import TurnEvent

    return sum(isinstance(e, TurnEvent) for log in run.glob("*/events.jsonl") for e in read_events(log))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=sorted(SPECS), default="langgraph")
    parser.add_argument("--spans", default="1000,4000,32000")
    parser.add_argument("--keep-all", action="store_true", help="LangGraph: keep every checkpoint (no pruning)")
    args = parser.parse_args()
    print(f"{args.framework}{' (every checkpoint kept)' if args.keep_all else ''}, mock model, default config "
          "--limit 1")
    print(f"{'span':>7} {'turns':>6} {'store MB':>9} {'ms/turn':>8} {'framework':>10} {'model':>7}")
    asyncio.run(spans(args.framework, [int(s) for s in args.spans.split(",")], args.keep_all))


async def spans(framework: str, sizes: list[int], keep_all: bool) -> None:
    """Every span on one loop and one mock server (the LangGraph example binds its client at import)."""
    if keep_all:
        from ltm_harness._agents.frameworks import langgraph

        async def keep(self: Any, turn: int) -> None:
            return None

        langgraph.LangGraphAgent._turn_done = keep  # type: ignore[method-assign]
    server = MockLLMServer()
    clock = Clock()
    instrument(clock, server)  # before the server starts: its routes take the handler then
    await server.start()
    os.environ.update({"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "not-needed", "LTM_EXAMPLE_MODEL": "mock"})
    for span in sizes:
        row = await one(framework, span, server, clock)
        print(f"{row['span']:>7} {row['turns']:>6} {row['store_mb']:>9.2f} {row['ms_turn']:>8.1f} "
              f"{row['framework_ms']:>10.1f} {row['model_ms']:>7.1f}", flush=True)
    await server.stop()


if __name__ == "__main__":
    main()
