"""Issue 13, part B: what comes from outside is bounded, contained and checked, for real.

HTTP agents and an OpenAI-compatible endpoint that misbehave (redirects, endless or bomb-sized bodies, Retry-After)
run on 127.0.0.1; runs that meet wrong scores, lone surrogates, infinite costs, secrets in URLs and code named by a
results folder go through the command line as a user meets them.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import textwrap
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.http_agent import HTTPAgent
from ltm_harness._cli.main import main as cli
from ltm_harness._engine.channel import Channel, TurnPolicy
from ltm_harness._errors import AgentError, LLMError
from ltm_harness._guard.redact import redact, redact_url
from ltm_harness._guard.retry_after import retry_after_seconds
from ltm_harness._guard.text import csv_cell, sanitize
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._report.tables import _cell
from ltm_harness._store.eventlog import MemoryLog
from ltm_harness._store.layout import SLUG_MAX
from ltm_harness.testing import serve_local

RUN = ["--results", "results", "--quiet", "--no-report"]
GOOD = "config: {run_name: x}\ndatasets:\n  args: {memory_span: 1000, dataset_examples: 1}\n  datasets:\n    - name: colours\n"
MESSAGE = AgentMessage(text="What is my favourite colour?", timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc), tokens=7)
MB = 1024 * 1024


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LTM_HTTP_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- HTTP agents: no redirects, bounded bodies, Retry-After ----------------------------------------------------


def agent_app(handler: Any) -> web.Application:
    app = web.Application()
    app.router.add_post("/chat", handler)
    return app


async def endless(request: web.Request) -> web.StreamResponse:
    """A reply that never ends (until the client stops reading)."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'{"reply": "')
    chunk = b"a" * 65536
    for _ in range(100_000):  # 6.5 GB at most; the client gives up long before
        await response.write(chunk)
    return response


BOMB = gzip.compress(b'{"reply": "' + b"0" * (200 * MB) + b'"}', compresslevel=9)


async def gzip_bomb(request: web.Request) -> web.Response:
    return web.Response(body=BOMB, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})


async def small_gzip(request: web.Request) -> web.Response:
    return web.Response(body=gzip.compress(b'{"reply": "Red"}'), headers={"Content-Encoding": "gzip",
                                                                          "Content-Type": "application/json"})


async def peak_while(coro: Any) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    try:
        await coro
        error = None
    except BaseException as exc:  # noqa: BLE001 - returned to the test
        error = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return error, peak


@pytest.mark.parametrize("handler", [endless, gzip_bomb], ids=["endless", "gzip-bomb"])
async def test_an_endless_or_bomb_reply_fails_its_turn_with_bounded_memory(handler: Any) -> None:
    async with serve_local(agent_app(handler)) as base:
        agent = HTTPAgent(f"{base}/chat", max_reply_bytes=2 * MB)
        error, peak = await peak_while(agent.reply(MESSAGE))
        await agent.close()
    assert isinstance(error, AgentError) and "larger than 2,097,152 bytes" in str(error), error
    assert "http.max_reply_bytes" in str(error)
    assert peak < 12 * MB, f"peak {peak / MB:.1f} MB"


async def test_a_compressed_reply_within_the_limit_is_read() -> None:
    async with serve_local(agent_app(small_gzip)) as base:
        agent = HTTPAgent(f"{base}/chat")
        reply = await agent.reply(MESSAGE)
        await agent.close()
    assert reply.text == "Red"


async def test_a_redirect_is_not_followed() -> None:
    reached: list[str] = []

    async def other(request: web.Request) -> web.Response:
        reached.append(await request.text())
        return web.json_response({"reply": "stolen"})

    async with serve_local(agent_app(other)) as elsewhere:
        async def redirect(request: web.Request) -> web.Response:
            raise web.HTTPTemporaryRedirect(f"{elsewhere}/chat?token=SECRET9")

        async with serve_local(agent_app(redirect)) as base:
            agent = HTTPAgent(f"{base}/chat")
            with pytest.raises(AgentError) as info:
                await agent.reply(MESSAGE)
            await agent.close()
    assert reached == []  # the conversation never went to the other host
    message = str(info.value)
    assert "redirect (HTTP 307 to " in message and elsewhere in message and "not followed" in message
    assert "SECRET9" not in message


def channel(agent: Any, **policy: Any) -> Channel:
    return Channel(agent, TurnPolicy(**{"attempts": 2, "backoff": 0.01, "timeout": 10, **policy}), MemoryLog(),
                   lambda text: len(text.split()), lambda call: None)


@pytest.mark.parametrize("header, cap, wait", [("1", 300.0, 1.0), ("100000", 0.4, 0.4)], ids=["seconds", "capped"])
async def test_turn_retries_honour_retry_after(header: str, cap: float, wait: float) -> None:
    calls: list[float] = []

    async def busy_then_ok(request: web.Request) -> web.Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return web.json_response({"error": "busy"}, status=429, headers={"Retry-After": header})
        return web.json_response({"reply": "Red"})

    from ltm_harness._engine.channel import Turn

    async with serve_local(agent_app(busy_then_ok)) as base:
        agent = HTTPAgent(f"{base}/chat")
        answer = await channel(agent, retry_after_max=cap).send(
            Turn(i=0, time=MESSAGE.timestamp, pos=0, kind="test", text=MESSAGE.text, tokens=5))
        await agent.close()
    assert answer.ok and answer.reply == "Red"
    assert len(calls) == 2 and wait - 0.05 <= calls[1] - calls[0] < wait + 1.0


def test_retry_after_reads_seconds_and_http_dates_and_stays_bounded() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    soon = time.time() + 30
    from email.utils import formatdate

    assert 25 <= (retry_after_seconds({"retry-after": formatdate(soon, usegmt=True)}) or 0) <= 31
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({"retry-after": "1e400"}) == 10 * 365 * 24 * 3600.0  # inf, bounded
    assert retry_after_seconds({"retry-after": "nan"}) is None
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds({}) is None


# -- the LLM client: bounded bodies, not retried ---------------------------------------------------------------


def completion(text: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


@pytest.mark.parametrize("kind", ["huge", "bomb"])
async def test_an_oversized_llm_response_fails_once_with_bounded_memory(kind: str) -> None:
    requests: list[int] = []
    body = completion("x" * (8 * MB)) if kind == "huge" else gzip.compress(completion("0" * (300 * MB)))

    async def chat(request: web.Request) -> web.Response:
        requests.append(1)
        headers = {"Content-Type": "application/json", **({"Content-Encoding": "gzip"} if kind == "bomb" else {})}
        return web.Response(body=body, headers=headers)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    async with serve_local(app) as base:
        client = LLMClient(resolve_endpoint("test", f"{base}/v1"), LLMSettings(max_reply_bytes=1 * MB,
                                                                               backoff_initial=0.01))
        error, peak = await peak_while(client.chat("judge", "m", [{"role": "user", "content": "hi"}]))
        await client.close()
    assert isinstance(error, LLMError) and "larger than 1,048,576 bytes" in str(error), error
    assert "llm.max_reply_bytes" in str(error)
    assert requests == [1]  # not retried
    assert peak < 40 * MB, f"peak {peak / MB:.1f} MB"


async def test_a_normal_llm_response_goes_through_the_bounded_transport() -> None:
    async def chat(request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(completion("Paris")), headers={"Content-Encoding": "gzip",
                                                                              "Content-Type": "application/json"})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    async with serve_local(app) as base:
        client = LLMClient(resolve_endpoint("test", f"{base}/v1"))
        result = await client.chat("judge", "m", [{"role": "user", "content": "capital?"}])
        await client.close()
    assert result.text == "Paris" and result.call.prompt_tokens == 1


# -- scores, text and costs at the boundary ---------------------------------------------------------------------

WRONG_SCORES = [(5.0, 1.0, "outside 0..1.0"), (float("nan"), 1.0, "not a finite number"), (0.0, 0.0, "above 0"),
                ("high", 1.0, "not a number"), (True, 1.0, "not a number"), (-1.0, 1.0, "outside"),
                (1.0, float("inf"), "not a finite number")]


WRONG_DATASET = """
from ltm_harness import DatasetInterface
nan, inf = float("nan"), float("inf")
CASES = [{cases}]
class Wrong(DatasetInterface):
    name = "wrong"
    def generate_examples(self, n):
        return [self.make_example(str(i), ["Remember 7.", "What number?"], [False, True], ["7"]) for i in range(n)]
    def evaluate_example(self, example, questions, responses):
        score, top = CASES[int(example.example_id)]
        return score, top, ["checked"]
"""


def test_wrong_scores_error_their_tests_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put(tmp_path / "ds" / "wrong.py", WRONG_DATASET.format(cases=", ".join(f"({s!r}, {m!r})" for s, m, _ in WRONG_SCORES)))
    cfg = put(tmp_path / "c.yml", GOOD.replace("colours", "wrong").replace("{run_name: x}", "{run_name: x, dataset_dirs: [ds]}"))
    code = cli(["run", "-c", str(cfg), "-a", "oracle", "--examples", str(len(WRONG_SCORES)), *RUN])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    results = json.loads((tmp_path / "results" / "x" / "oracle" / "results.json").read_text())
    assert len(results) == len(WRONG_SCORES) and code == 3  # finished with errored tests
    for r in results:
        _, _, why = WRONG_SCORES[int(r["example_id"])]
        assert r["status"] == "errored" and r["score"] == 0 and r["max_score"] == 1, r
        assert any("wrong score" in reason and why in reason for reason in r["reasons"]), r["reasons"]
    assert cli(["report", "results/x"]) == 0  # the run stays reportable


AGENT = '''
from ltm_harness import Agent, Reply
class Odd(Agent):
    async def reply(self, message, oracle_hint=None):
        return Reply(text="Red \\ud800 and \\udfff", cost_usd=float({cost!r}))
'''


@pytest.mark.parametrize("cost", ["inf", "nan", "-1"])
def test_lone_surrogates_and_odd_costs_are_recorded_safely(cost: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    agent = put(tmp_path / "odd.py", AGENT.format(cost=cost))
    code = cli(["run", "-c", str(put(tmp_path / "c.yml", GOOD)), "-a", f"{agent}:Odd", *RUN])
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.out + out.err, out.err
    folder = tmp_path / "results" / "x" / "odd.py_Odd" if (tmp_path / "results" / "x" / "odd.py_Odd").exists() else \
        next(p for p in (tmp_path / "results" / "x").iterdir() if p.is_dir() and p.name != "definitions")
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    turns = [e for e in events if e["type"] == "turn"]
    asked = [t for t in turns if t["question"]]
    assert asked and all(t["reply"] == "Red \ufffd and \ufffd" for t in asked)
    assert all(t["cost_usd"] is None for t in turns)
    notes = [e for t in asked for e in t["errors"]]
    assert any("2 lone surrogates" in n for n in notes) and any("cost_usd" in n for n in notes), notes
    summary = json.loads((tmp_path / "results" / "x" / "summary.json").read_text())
    assert json.dumps(summary, allow_nan=False)  # finite throughout
    assert cli(["report", "results/x"]) == 0


WRONG_TYPE_AGENT = '''
from ltm_harness import Agent, Reply
class Odd(Agent):
    async def reply(self, message, oracle_hint=None):
        return {value}
'''


@pytest.mark.parametrize("value", ["5", "{'reply': 'Red'}", "Reply.model_construct(text=5)"])
def test_a_reply_of_the_wrong_type_fails_the_turn_with_the_reason(value: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """An agent's reply() returning something else than text, a Reply or None fails its tries, saying what it returned;
    the agent's first turn failing, the session stops, in one line."""
    agent = put(tmp_path / "odd.py", WRONG_TYPE_AGENT.format(value=value))
    cfg = put(tmp_path / "c.yml", GOOD.replace("{run_name: x}", "{run_name: x, turns: {attempts: 2, backoff: 0}}"))
    code = cli(["run", "-c", str(cfg), "-a", f"{agent}:Odd", *RUN])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.out + out.err, out.err
    kind = {"5": "an int", "{'reply': 'Red'}": "a dict", "Reply.model_construct(text=5)": "a Reply whose text is an int"}[value]
    lines = [line for line in out.err.splitlines() if line.strip()]
    assert f"the agent returned {kind}, not a Reply, a string or None" in lines[0], out.err
    assert len(lines) == 3 and lines[1].endswith("continue the run with") and lines[2].endswith("--resume")


def test_sanitize_and_csv_cells() -> None:
    assert sanitize("plain") == ("plain", 0)
    assert sanitize("a\ud83d b\udc00") == ("a\ufffd b\ufffd", 2)
    assert sanitize("emoji \U0001F600") == ("emoji \U0001F600", 0)
    for bad in ("=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx"):
        assert csv_cell(bad) == "'" + bad and _cell(bad) == "'" + bad
    assert _cell(-0.5) == "-0.5" and _cell(3) == "3" and _cell(None) == "" and _cell("Red") == "Red"


# -- secrets: never written -------------------------------------------------------------------------------------


def test_no_secret_in_any_file_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = GOOD.replace("{run_name: x}", "{run_name: x, "
                        "openai: {base_url: 'http://user:SECRET1@127.0.0.1:9/v1?api_key=SECRET2&x=1'}, "
                        "judge: {base_url: 'http://127.0.0.1:9/v1?key=SECRET3'}, "
                        "test_llm: {base_url: 'http://me:SECRET4@127.0.0.1:9/v1'}, "
                        "agents: ['http://bot:SECRET5@127.0.0.1:9/chat?token=SECRET6']}")
    code = cli(["run", "-c", str(put(tmp_path / "c.yml", text)), "-a", "oracle", "--results", "results", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    written = [p for p in (tmp_path / "results").rglob("*") if p.is_file()]
    assert any(p.name == "run_config.json" for p in written)
    for path in written:
        assert "SECRET" not in path.read_text(encoding="utf-8", errors="replace"), path
    saved = json.loads((tmp_path / "results" / "x" / "run_config.json").read_text())
    assert saved["config"]["openai"]["base_url"] == "http://***@127.0.0.1:9/v1?api_key=***&x=***"
    assert saved["config"]["agents"] == ["http://***@127.0.0.1:9/chat?token=***"]
    assert "SECRET" not in out.out + out.err


def test_redaction() -> None:
    assert redact_url("https://u:p@h/v1?key=k&q=1#f") == "https://***@h/v1?key=***&q=***#f"
    assert redact_url("http://h/v1?Access_Token=t&my_api_key=z") == "http://h/v1?Access_Token=***&my_api_key=***"
    assert redact_url("http://h/v1") == "http://h/v1"
    line = "failed: POST http://a:b@h/x?sig=1 with Authorization: Bearer abcdefghijklmnop and sk-proj-ABCDEFGHIJKLMNOPQRST"
    assert redact(line) == "failed: POST http://***@h/x?sig=*** with Authorization: Bearer *** and ***"


def test_error_lines_are_redacted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli(["run", "-c", str(put(tmp_path / "c.yml", GOOD)), "-a", "http://u:SECRET7@127.0.0.1:99999/chat?key=S8",
                *RUN])
    err = capsys.readouterr().err
    assert code == 2 and "SECRET7" not in err and "S8" not in err and err.startswith("error: ")


# -- code named by a results folder is never run -----------------------------------------------------------------

EVIL = '''
from pathlib import Path
Path({marker!r}).write_text("ran")
from ltm_harness import DatasetInterface
class Evil(DatasetInterface):
    name = "colours"
'''


def test_rescore_never_runs_code_named_by_the_results_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["run", "-c", str(put(tmp_path / "c.yml", GOOD)), "-a", "oracle", *RUN]) == 0
    marker = tmp_path / "ran.txt"
    evil = put(tmp_path / "elsewhere" / "evil.py", EVIL.format(marker=str(marker)))
    run_config = tmp_path / "results" / "x" / "run_config.json"
    saved = json.loads(run_config.read_text())
    saved["config"]["dataset_dirs"] = [str(evil.parent)]  # a folder of code, named by the results folder only
    run_config.write_text(json.dumps(saved))
    capsys.readouterr()
    assert cli(["rescore", "results/x"]) == 0
    out = capsys.readouterr().out
    assert "dataset code from: built-in datasets and installed packages" in out and not marker.exists()
    saved["datasets"]["datasets"][0]["name"] = f"{evil}:Evil"  # a file spec, named by the results folder only
    run_config.write_text(json.dumps(saved))
    assert cli(["rescore", "results/x"]) == 2
    assert "is code named by the results folder" in capsys.readouterr().err and not marker.exists()
    assert cli(["report", "results/x"]) == 0 and not marker.exists()


def test_a_very_long_run_name_makes_a_short_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "night-run-" * 600
    assert cli(["run", "-c", str(put(tmp_path / "c.yml", GOOD)), "-a", "oracle", "--run-name", name, *RUN]) == 0
    [folder] = [p for p in (tmp_path / "results").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(folder.name) <= SLUG_MAX and folder.name.startswith("night-run-")
    assert (folder / "summary.json").is_file()


def test_report_with_a_fifo_event_log_does_not_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    assert cli(["run", "-c", str(put(tmp_path / "c.yml", GOOD)), "-a", "oracle", *RUN]) == 0
    log = tmp_path / "results" / "x" / "oracle" / "events.jsonl"
    log.unlink()
    os.mkfifo(log)
    capsys.readouterr()
    code = cli(["report", "results/x"])
    err = capsys.readouterr().err
    assert code == 0 and err.startswith("warning: ") and "oracle" in err  # said, never read (a FIFO blocks)


CALLBACK_DATASET = """
from ltm_harness import DatasetInterface
class Watch(DatasetInterface):
    name = "watch"
    def generate_examples(self, n):
        return [self.make_example(i, ["Say 'blue' in your next reply."], [True], ["blue"], uses_callback=True)
                for i in range(n)]
    def continual_evaluation_callback(self, example, log):
        return {result}, 1.0, ["watched"], True
"""


@pytest.mark.parametrize("result, why", [("float('nan')", "not a finite number"), ("2.0", "outside 0..1.0"),
                                         ("'yes'", "not a number")])
def test_a_callback_returning_a_wrong_score_errors_its_test(result: str, why: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    put(tmp_path / "ds" / "watch.py", CALLBACK_DATASET.format(result=result))
    cfg = put(tmp_path / "c.yml", GOOD.replace("colours", "watch").replace("{run_name: x}", "{run_name: x, dataset_dirs: [ds]}"))
    code = cli(["run", "-c", str(cfg), "-a", "oracle", *RUN])
    out = capsys.readouterr()
    assert code == 3 and "Traceback" not in out.out + out.err
    [r] = json.loads((tmp_path / "results" / "x" / "oracle" / "results.json").read_text())
    assert r["status"] == "errored" and r["score"] == 0 and any(why in reason for reason in r["reasons"]), r
