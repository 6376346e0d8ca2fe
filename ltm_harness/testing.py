"""Helpers for writing and testing datasets: build a config in code and run it in-process."""

from __future__ import annotations

import importlib.util
import random
import sys
import threading
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, AsyncIterator, Iterator

from ltm_harness._agents.base import Agent, AgentMessage
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._results.models import RunSummary
from ltm_harness._runner.config import RunConfig
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness._store.layout import RunFolder


def make_config(datasets: list[str] | list[dict[str, Any]], span: int = 2000, examples: int = 1, **config: Any) -> RunConfig:
    """A run config for `datasets` (names, or {"name", "args"} entries); extra keywords go to `config:`."""
    entries = [d if isinstance(d, dict) else {"name": d} for d in datasets]
    return RunConfig.model_validate({
        "config": {"run_name": "t", **config},
        "datasets": {"args": {"memory_span": span, "dataset_examples": examples}, "datasets": entries},
    })


async def run_config(cfg: RunConfig, results_root: Path, agents: list[str]) -> RunSummary:
    """Generate (or reuse) the definitions and run every agent; outputs go under `results_root` (the agents' earlier
    outputs in that run folder are replaced, other agents' are kept)."""
    with RunFolder.named(results_root, cfg.config.run_name).lock():
        return await run_all(prepare(cfg, results_root), agents)


class PaddedReplies(Agent):
    """A mock agent whose replies are "OK." padded with 0 to `max_words` seeded random words (one draw per reply, so
    a run is reproducible): for testing that gaps hold whatever the reply lengths."""

    WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")

    def __init__(self, spec: str | None = None, max_words: int = 300, seed: int = 0) -> None:
        super().__init__(spec or "padded")
        self.max_words = max_words
        self.rng = random.Random(f"padded-replies:{seed}")

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> str:
        n = self.rng.randint(0, self.max_words)
        return " ".join(["OK."] + [self.rng.choice(self.WORDS) for _ in range(n)])

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """The draws depend only on how many replies were given: draw them again."""
        for _ in turns:
            n = self.rng.randint(0, self.max_words)
            for _ in range(n):
                self.rng.choice(self.WORDS)


def all_dataset_names() -> list[str]:
    """Every dataset that runs without files users supply themselves (chapterbreak needs one: its tests write it)."""
    return sorted(name for name, cls in known_datasets().items() if not getattr(cls, "requires_user_data", False))


@asynccontextmanager
async def serve_local(app: Any) -> AsyncIterator[str]:
    """Serve an aiohttp `web.Application` on 127.0.0.1 at a free port; yields its base URL."""
    from aiohttp import web

    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


NO_LENGTH = -1  # a route's declared length: send no Content-Length (the body ends when the connection closes)


class FileServer:
    """Files served over HTTP on 127.0.0.1 for fetch-on-first-use tests: `routes` maps a path to (status, body,
    declared length: None for the body's own, NO_LENGTH for none, or another number, e.g. one the body falls short
    of), `redirects` a path to where it points (302); any other path is a 404. `hits` counts requests per path."""

    def __init__(self, routes: dict[str, tuple[int, bytes, int | None]] | None = None,
                 redirects: dict[str, str] | None = None) -> None:
        self.routes = dict(routes or {})
        self.redirects = dict(redirects or {})
        self.hits: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                server.hits[self.path] = server.hits.get(self.path, 0) + 1
                if self.path in server.redirects:
                    self.send_response(302)
                    self.send_header("Location", server.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status, body, declared = server.routes.get(self.path, (404, b"not found", None))
                self.send_response(status)
                if declared != NO_LENGTH:
                    self.send_header("Content-Length", str(len(body) if declared is None else declared))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @contextmanager
    def serving(self) -> Iterator["FileServer"]:
        """Serve in a thread for the block."""
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """A Python file that is not part of a package (a script under benchmarks/, say) imported as a module, so that
    tests can call what it defines; registered in sys.modules under `name` (default: its stem), as its dataclasses
    look their module up."""
    name = name or path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file that can be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

