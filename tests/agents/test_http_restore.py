"""Resuming a run of an agent behind HTTP: its memory is rebuilt with one `restore` request (docs/http-agent.md)."""

from __future__ import annotations

import json
import shutil

from aiohttp import web

from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare

from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config, serve_local

from .test_http_agent import EchoAgent


class MemoryAgent(EchoAgent):
    """The protocol's test agent, plus `restore`: it replaces the session's memory (when `restorable`)."""

    def __init__(self, restorable: bool = True) -> None:
        super().__init__()
        self.restorable = restorable
        self.messages = 0
        self.restores: list[dict] = []

    async def handle(self, request: web.Request) -> web.Response:
        data = await request.json()
        if "restore" not in data:
            self.messages += "message" in data  # not the reset a fresh session begins with
            return await super().handle(request)
        if not self.restorable:
            return web.Response(status=400, text="unknown request")
        self.restores.append(data)
        self.memory[data["session"]] = [t["message"] for t in data["restore"] if not t["message"].rstrip().endswith("?")]
        return web.json_response({})


def app(agent: MemoryAgent) -> web.Application:
    application = web.Application(client_max_size=64 * 1024 * 1024)
    application.router.add_post("/chat", agent.handle)
    return application


CFG = make_config(["colours", "kv", "names"], span=1500, examples=2)


async def test_resume_restores_the_agents_memory_and_equals_the_uninterrupted_run(tmp_path):
    agent = MemoryAgent()
    async with serve_local(app(agent)) as url:
        spec = f"{url}/chat"
        await run_all(prepare(CFG, tmp_path / "ref"), [spec])
        ref = tmp_path / "ref" / "t"
        (folder,) = [p for p in ref.iterdir() if p.name.startswith("http")]
        lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
        total = agent.messages
        shutil.copytree(ref, tmp_path / "work" / "t")
        work = tmp_path / "work" / "t" / folder.name
        k = len(lines) * 2 // 3
        (work / "events.jsonl").write_bytes(b"".join(lines[:k]))
        (work / "results.json").unlink()
        (work / "summary.json").unlink()
        agent.messages = 0
        summary = await run_all(prepare(CFG, tmp_path / "work", resume=True), [spec], mode=Resume())
    assert not summary.errors
    kept = [json.loads(line) for line in lines[:k] if b'"type":"turn"' in line]
    assert agent.messages == total - len(kept)  # only the turns never answered
    (restore,) = agent.restores
    assert [t["message"] for t in restore["restore"]] == [t["user"] for t in kept]
    assert [t["reply"] for t in restore["restore"]] == [t["reply"] for t in kept]
    assert set(restore) == {"session", "reset", "restore"} and set(restore["restore"][0]) == {"message", "timestamp", "reply"}
    assert (work / "results.json").read_bytes() == (folder / "results.json").read_bytes()
    assert (work / "events.jsonl").read_bytes() == (folder / "events.jsonl").read_bytes()


async def test_an_agent_without_restore_is_not_resumed_and_says_how_to_go_on(tmp_path):
    agent = MemoryAgent(restorable=False)
    async with serve_local(app(agent)) as url:
        spec = f"{url}/chat"
        await run_all(prepare(CFG, tmp_path), [spec])
        (folder,) = [p for p in (tmp_path / "t").iterdir() if p.name.startswith("http")]
        lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
        (folder / "events.jsonl").write_bytes(b"".join(lines[:30]))
        (folder / "summary.json").unlink()
        summary = await run_all(prepare(CFG, tmp_path, resume=True), [spec], mode=Resume())
    error = summary.errors[spec]
    assert "cannot be resumed: it answered HTTP status 400 to the restore request: unknown request" in error
    assert "run it again with overwrite=True" in error  # said to a caller of the library
