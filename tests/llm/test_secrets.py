"""API keys, from the environment or the config, appear in no file a run writes and in nothing it prints.

Covered: `run` (its outputs, its default HTML report and tables, its progress log lines off a terminal),
`rescore`, `estimate`, `report RUN` (default place and `-o`), `compare`, and the errors of an agent
that fails (a 401 whose body repeats the key, as some servers do), also with `--debug`, whose traceback
is checked as Python prints it (in a child process).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from ltm_harness._cli import progress
from ltm_harness._cli.main import main as cli
from ltm_harness.testing import serve_local

from .conftest import SECRET

CONFIG_KEY = "sk-config-JUDGE-77b1d0e2a9"
ENV_KEY = "sk-env-TESTLLM-3c55e8f0aa"
AGENT_CONFIG_KEY = "sk-config-AGENT-5d20c6b1f4"  # config.openai.api_key
KEYS = (SECRET, CONFIG_KEY, ENV_KEY, AGENT_CONFIG_KEY)
ROOT = Path(__file__).resolve().parents[2]


def assert_no_key(files: list[Path], *printed: str) -> None:
    for path in files:
        data = path.read_bytes()
        for key in KEYS:
            assert key.encode() not in data, (key, path)
    for text in printed:
        for key in KEYS:
            assert key not in text, (key, text[max(0, text.find(key) - 300):text.find(key) + 100])


async def call(argv: list[str]) -> int:
    """The CLI in a thread: it runs its own event loop, while the servers run on the test's."""
    return await asyncio.to_thread(cli, argv)


def write_config(path: Path, data: dict) -> str:
    """A config in `path` (kept under an `input` folder: the keys written in it are the user's, not output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return str(path)


def outputs(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and "input" not in p.relative_to(folder).parts]


async def test_no_key_in_any_output_file_report_or_progress_line(tmp_path, mock_llm, monkeypatch, capfd):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MY_TEST_LLM_KEY", ENV_KEY)
    # progress log lines (stdout is not a terminal here) as often as possible, so that a short run prints them
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    monkeypatch.setattr(progress, "LOG_MIN_GAP", 0.0)
    monkeypatch.setattr(progress, "UPDATE_EVERY", 0.0)
    config = write_config(tmp_path / "input" / "run.yml", {
        "config": {"run_name": "secrets", "agents": ["openai:mock"],
                   "judge": {"model": "mock-judge", "api_key": CONFIG_KEY},
                   "test_llm": {"model": "mock-fixed:Welcome to our table.", "api_key_env": "MY_TEST_LLM_KEY"}},
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1},
                     "datasets": [{"name": "restaurant"}, {"name": "delayed_recall"}, {"name": "colours"}]},
    })
    # a second run whose agent takes its key from the config's openai: section
    config2 = write_config(tmp_path / "input" / "run2.yml", {
        "config": {"run_name": "secrets2", "agents": ["openai:mock"], "openai": {"api_key": AGENT_CONFIG_KEY}},
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1}, "datasets": [{"name": "colours"}]},
    })
    results = tmp_path / "results"
    elsewhere = tmp_path / "elsewhere"
    assert await call(["run", "-c", config, "--results", str(results)]) == 0  # writes its default report
    assert await call(["run", "-c", config2, "--results", str(results)]) == 0
    assert await call(["rescore", "secrets", "--results", str(results)]) == 0
    assert await call(["estimate", "-c", config]) == 0
    assert await call(["report", "secrets", "--results", str(results)]) == 0
    assert await call(["report", "secrets", "--results", str(results), "-o", str(elsewhere / "one.html")]) == 0
    # other tests and another judge: refused (its one line names the judges, never a key), then compared with --force
    assert await call(["compare", "secrets", "secrets2", "--results", str(results)]) == 2
    assert await call(["compare", "secrets", "secrets2", "--results", str(results), "--force"]) == 0
    assert await call(["compare", "secrets", "secrets2", "--results", str(results), "-o", str(elsewhere / "both.html"),
                       "--force"]) == 0
    printed = capfd.readouterr()

    # the keys were really used, so their absence below means something
    assert {r["model"] for r in mock_llm.requests} >= {"mock", "mock-judge", "mock-fixed:Welcome to our table."}
    assert mock_llm.keys == set(KEYS)
    files = outputs(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in files}
    assert len(files) > 10 and any(p.suffix == ".jsonl" for p in files) and any(".llm-cache" in p.parts for p in files)
    assert {"results/secrets/report.html", "results/secrets/report.tests.csv", "results/secrets/report.agents.json",
            "results/secrets/run_config.json", "results/secrets/summary.json", "elsewhere/one.html",
            "elsewhere/both.html"} <= names
    assert any(n.startswith("results/compare_") and n.endswith(".html") for n in names), sorted(names)
    assert "progress openai:mock:" in printed.out and "end openai:mock:" in printed.out  # the log lines were printed
    assert_no_key(files, printed.out, printed.err)


class Refusing:
    """An OpenAI-compatible endpoint that refuses every key, and says the key back in its error, as some do."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    async def chat(self, request: web.Request) -> web.Response:
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        self.keys.add(key)
        return web.json_response({"error": {"message": f"Incorrect API key provided: {key}.", "param": key,
                                            "type": "invalid_request_error", "code": "invalid_api_key"}}, status=401)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        return app


async def test_no_key_in_the_errors_of_a_failing_agent_even_with_debug(tmp_path, monkeypatch, capfd):
    refusing = Refusing()
    async with serve_local(refusing.app()) as base:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{base}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        config = write_config(tmp_path / "input" / "run.yml", {
            "config": {"run_name": "refused", "judge": {"api_key": CONFIG_KEY}, "preflight": False},
            "datasets": {"args": {"memory_span": 1000, "dataset_examples": 1},
                         "datasets": [{"name": "colours"}, {"name": "delayed_recall"}]},
        })
        results = tmp_path / "results"
        # unchecked before the first turn (preflight: false), the agent fails on its first turn; the judge (its own
        # key) fails too, for the retrieval agent's tests
        argv = ["run", "-c", config, "--results", str(results), "-a", "openai:gpt-4o-mini", "-a", "retrieval",
                "--judge", "gpt-4o-mini"]
        assert await call([*argv, "--run-name", "plain"]) == 1
        assert await call([*argv, "--run-name", "debug", "--debug"]) == 1
        printed = capfd.readouterr()
        assert refusing.keys == {SECRET, CONFIG_KEY}
        assert "answered HTTP 401: Incorrect API key provided: ***" in printed.err  # the error is shown, scrubbed

        # a failure that --debug shows as a traceback, as Python prints it: dataset generation against the endpoint
        prompt = tmp_path / "input" / "delayed_recall.json"
        shutil.copy(ROOT / "prompts" / "delayed_recall.json", prompt)
        env = {**os.environ, "OPENAI_BASE_URL": f"{base}/v1", "OPENAI_API_KEY": SECRET, "PYTHONPATH": str(ROOT)}
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "ltm_harness", "generate", str(prompt), "--model", "gpt-4o", "-n", "1",
            "--no-cache", "--debug", env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(child.communicate(), timeout=60)
    assert child.returncode == 1
    traceback = err.decode()
    assert "Traceback (most recent call last)" in traceback and "HTTP 401" in traceback, traceback[-2000:]
    files = outputs(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in files}
    assert {"results/plain/summary.json", "results/debug/summary.json", "results/debug/report.html"} <= names
    assert_no_key(files, printed.out, printed.err, out.decode(), traceback)


async def test_no_password_of_an_http_agent_url_in_any_output(tmp_path, capfd):
    password = "pw-HTTPAGENT-0c41e9a7"
    seen: list[str] = []

    async def chat(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.json_response({"reply": "OK."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    async with serve_local(app) as base:
        url = base.replace("http://", f"http://bob:{password}@") + "/chat"
        config = write_config(tmp_path / "input" / "run.yml", {
            "config": {"run_name": "http"},
            "datasets": {"args": {"memory_span": 1000, "dataset_examples": 1}, "datasets": [{"name": "colours"}]},
        })
        assert await call(["run", "-c", config, "--results", str(tmp_path / "results"), "-a", url]) == 0
    printed = capfd.readouterr()
    assert seen and all(h.startswith("Basic ") for h in seen)  # the credentials were used
    for path in outputs(tmp_path):
        assert password.encode() not in path.read_bytes(), path
        assert password not in str(path), path
    assert password not in printed.out and password not in printed.err
