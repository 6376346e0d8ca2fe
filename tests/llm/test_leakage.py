"""A non-oracle agent is sent the conversation's messages and their timestamps, and nothing else.

One run of every offline dataset (the rule-scored ones, restaurant, the GPT-generated ones from their stored
sets, the four environments) against two agents that record every raw request they get:

* an HTTP agent (docs/http-agent.md) on 127.0.0.1, answering "OK.";
* `openai:mock` against the mock LLM server, wrapped so that it also records the raw request.

For both, the test checks (1) the request bodies carry exactly the protocol's keys and the headers nothing
beyond the standard ones, (2) the messages are exactly the `user` texts of the run's turn events, in order,
with the turns' times, and (3) no test id, dataset name, expected response, oracle answer, scoring reason
or scoring field name appears anywhere in a request: method, path, query, headers or body. The body is
scanned as every key and value of its JSON, duplicate keys included (with the JSON punctuation, that is all
of its bytes, and JSON escapes cannot hide a marker). Each message is also traced to its source: the
opening message, a dataset's reset message, filler, or its test's script line.

Markers that are ordinary English ("colours", "score", an expected answer such as "sunset") are only used
when they occur in no script line of any test definition and in none of the harness's fixed texts (opening
and reset messages, read from the code), so a legitimate word of the conversation is not mistaken for a
leak; markers with an underscore or a slash (dataset names such as `name_list`, test ids such as
`colours/0`, field names such as `max_score`) are always used. `test_the_scanner_finds_planted_leaks`
shows every kind of check fails when something is planted.

Documented exceptions (docs/environments.md, "What the agent sees"): an environment's message starts with
its label `[env_NAME #N]`, and the message that closes an episode ends with `Score: X.XX out of 1.` Both are
removed from message text before scanning; nothing else is.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from aiohttp import web

from ltm_harness._agents.openai_chat import DEFAULT_SYSTEM_PROMPT, timestamp_prefix
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.endpoint import LOCAL_KEY
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._engine.session import INTRO
from ltm_harness.testing import serve_local

SPAN = 1500
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _shipped(config: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load((CONFIGS / config).read_text())["datasets"]["datasets"])


# every dataset of the built-in offline benchmark, and the environments with their shipped args
MEMORY_DATASETS = [d["name"] for d in _shipped("default.yml")]
ENV_DATASETS: dict[str, dict[str, Any]] = {d["name"]: d.get("args", {}) for d in _shipped("environments.yml")
                                           if d["name"].startswith("env_")}
ALL_DATASETS = MEMORY_DATASETS + list(ENV_DATASETS)
assert len(MEMORY_DATASETS) >= 17 and len(ENV_DATASETS) == 4 and "delayed_recall" in MEMORY_DATASETS

# (1) what a request may carry
HTTP_MESSAGE_KEYS = {"session", "message", "timestamp", "reset"}
HTTP_RESET_KEYS = {"session", "reset"}
HTTP_HEADERS = {"host", "accept", "accept-encoding", "user-agent", "content-length", "content-type"}
# OpenAIChatAgent's defaults: temperature 0.0 and no max_tokens (so the key is absent), no response_format
OPENAI_BODY_KEYS = {"model", "messages", "temperature"}
OPENAI_HEADERS = {"host", "accept", "accept-encoding", "connection", "user-agent", "content-length", "content-type",
                  "authorization"}  # plus x-stainless-* (the SDK's platform and retry headers)

# (3) scoring vocabulary: field names of definitions and results, and words of scoring
ALWAYS_MARKERS = ["expected_responses", "oracle_answers", "oracle_answer", "is_question", "max_score", "example_id",
                  "dataset_name", "memory_span", "uses_callback", "is_temporal", "can_be_interleaved", "is_dynamic",
                  "target_tokens", "achieved_tokens", "start_turn", "end_turn", "test_start", "test_end",
                  "oracle_hint", "expected_reply"]
WORD_MARKERS = ["expected", "expected response", "score", "scored", "scoring", "evaluation", "evaluate", "oracle",
                "verdict", "verdicts", "rubric", "ground truth", "correct answer", "grader", "judge", "reasons"]
MUST_CHECK_WORDS = {"expected", "score", "evaluation", "oracle", "verdict"}  # else the scan would prove little


@dataclass
class Raw:
    """One request as it came over the wire."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    @staticmethod
    async def of(request: web.Request) -> "Raw":
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers]
        return Raw(request.method, request.path, request.query_string, headers, await request.read())

    @cached_property
    def data(self) -> Any:
        """The body as JSON (None when there is no body or it is not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    @cached_property
    def fields(self) -> list[tuple[str, str]]:
        """Every key and every value of the JSON body as (where, text), duplicate keys included: together with
        the JSON punctuation, these are all the body's bytes, so scanning them scans the whole body."""

        def pairs(items: list[tuple[str, Any]]) -> tuple[str, list[tuple[str, Any]]]:
            return ("object", items)

        out: list[tuple[str, str]] = []

        def walk(value: Any, where: str) -> None:
            if isinstance(value, tuple):
                for k, v in value[1]:
                    out.append((f"{where} key", k))
                    walk(v, f"{where}.{k}")
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    walk(v, f"{where}[{i}]")
            else:
                out.append((where, json.dumps(value) if not isinstance(value, str) else value))

        if not self.body:
            return []
        try:
            tree = json.loads(self.body, object_pairs_hook=pairs)
        except ValueError:
            return [("body (not JSON)", self.body.decode("utf-8", errors="replace"))]
        walk(tree, "body")
        return out

    def with_data(self, data: Any) -> "Raw":
        return replace(self, body=json.dumps(data).encode())


class RecordingAgent:
    """An HTTP agent that records every raw request and says "OK."."""

    def __init__(self) -> None:
        self.raw: list[Raw] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.raw.append(await Raw.of(request))
        return web.json_response({"reply": "OK."})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)  # any method and path is recorded, then judged
        return app


class RecordingLLM(MockLLMServer):
    """The mock LLM server, which also keeps every raw request."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: list[Raw] = []

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            self.raw.append(await Raw.of(request))
            return await handler(request)

        app.middlewares.append(record)
        return app


# -- the run -----------------------------------------------------------------------------------------
@dataclass
class Agent:
    """One agent's run: its turn events, its raw requests."""

    events: list[dict[str, Any]]
    raw: list[Raw]

    @property
    def turns(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "turn"]


@dataclass
class Run:
    folder: Path
    http: Agent
    openai: Agent
    port: int  # the HTTP agent's
    llm_host: str  # the mock LLM server's host:port
    definitions: dict[str, dict[str, Any]]  # test id -> its definition
    results: list[dict[str, Any]]  # results.json entries of both agents


def agent_events(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for path in run_dir.glob("*/events.jsonl"):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out[events[0]["agent"]] = events
    return out


async def record_run(tmp: Path) -> Run:
    recorder = RecordingAgent()
    llm = RecordingLLM()
    await llm.start()
    config = tmp / "leak.yml"
    entries: list[dict[str, Any]] = [{"name": n} for n in MEMORY_DATASETS]
    entries += [{"name": n, "args": a} for n, a in ENV_DATASETS.items()]
    config.write_text(yaml.safe_dump({
        "config": {"run_name": "leak", "seed": 0},
        "datasets": {"args": {"memory_span": SPAN, "dataset_examples": 1}, "datasets": entries},
    }))
    try:
        async with serve_local(recorder.app()) as base:
            url = f"{base}/chat"
            argv = ["run", "-c", str(config), "--results", str(tmp / "results"), "--quiet", "--no-report",
                    "-a", url, "-a", "openai:mock"]
            with pytest.MonkeyPatch.context() as env:
                env.delenv("OPENAI_API_KEY", raising=False)
                env.setenv("OPENAI_BASE_URL", llm.url)
                assert await asyncio.to_thread(cli, argv) == 0
    finally:
        await llm.stop()
    folder = tmp / "results" / "leak"
    events = agent_events(folder)
    assert set(events) == {url, "openai:mock"}
    definitions = {}
    for path in (folder / "definitions").glob("*/*.def.json"):
        d = json.loads(path.read_text())
        definitions[f"{d['dataset_name']}/{d['example_id']}"] = d
    results = [r for p in folder.glob("*/results.json") for r in json.loads(p.read_text())]
    return Run(folder, Agent(events[url], recorder.raw), Agent(events["openai:mock"], llm.raw),
               int(base.rsplit(":", 1)[1]), llm.url.split("/")[2], definitions, results)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run for the whole module; the servers and the CLI (in a thread) share one event loop."""
    return asyncio.run(record_run(tmp_path_factory.mktemp("leak")))


# -- (3) the scan ------------------------------------------------------------------------------------
def _bounded(marker: str) -> re.Pattern[str]:
    """`marker` case-insensitively, not as part of a longer word (where it starts/ends with a word character)."""
    left = r"(?<![A-Za-z0-9_])" if re.match(r"\w", marker) else ""
    right = r"(?![A-Za-z0-9_])" if re.search(r"\w$", marker) else ""
    return re.compile(left + re.escape(marker) + right, re.IGNORECASE)


def _occurs(marker: str, text: str) -> bool:
    return bool(_bounded(marker).search(text))


_ENV_LABEL = re.compile(r"\[(?:" + "|".join(ENV_DATASETS) + r") #\d+\]")
_ENV_SCORE = re.compile(r"Score: \d+\.\d\d out of 1\.")


def without_documented(text: str) -> str:
    """Message text minus the documented environment label and end-of-episode score (see the module doc)."""
    return _ENV_SCORE.sub(" ", _ENV_LABEL.sub(" ", text))


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif value is not None:
        yield str(value)


@dataclass
class Markers:
    markers: dict[str, str]  # marker -> what it is
    skipped: dict[str, str]  # markers not used, and why (they occur legitimately in the scripts)


def fixed_texts() -> list[str]:
    """What the harness says besides the tests' scripts: the opening message and the datasets' reset messages,
    taken from the code (not from the run, so that a leak cannot whitelist itself)."""
    return [INTRO, *(cls.reset_message for cls in known_datasets().values() if cls.reset_message)]


def markers_of(run: Run) -> Markers:
    scripts = "\n".join(without_documented(line) for d in run.definitions.values() for line in d["script"])
    scripts += "\n" + "\n".join(fixed_texts())
    found: dict[str, str] = {}
    skipped: dict[str, str] = {}

    def strong(marker: str, what: str) -> None:
        found.setdefault(marker, what)

    def weak(marker: str, what: str, own_script: str = "") -> None:
        marker = marker.strip().strip(".,;:!?\"' ")
        if len(marker) < 4:
            skipped.setdefault(marker, f"{what}: too short to be a marker")
        elif own_script and _occurs(marker, own_script):
            skipped.setdefault(marker, f"{what}: said in the test's own script")
        elif _occurs(marker, scripts):
            skipped.setdefault(marker, f"{what}: an ordinary word of some test's script")
        else:
            found.setdefault(marker, what)

    test_ids = [e["test"] for a in (run.http, run.openai) for e in a.events if e["type"] == "test_start"]
    assert sorted(set(test_ids)) == sorted(run.definitions)  # every test of the run was played
    for test_id, d in run.definitions.items():
        dataset, example = test_id.split("/")
        for sep in ("/", "__", ":", "#", "-", "."):
            strong(f"{dataset}{sep}{example}", f"test id {test_id}")
        if not example.isdigit():
            weak(example, f"example id of {test_id}")
        own = "\n".join(without_documented(line) for line in d["script"])
        for leaf in _leaves(d["expected_responses"]):
            weak(leaf, f"expected response of {test_id}", own)
        for leaf in _leaves(d.get("oracle_answers") or []):
            weak(leaf, f"oracle answer of {test_id}", own)
    for name in ALL_DATASETS:  # "kv" is short, but no word of the conversation
        if "_" in name or len(name) < 4 and not _occurs(name, scripts):
            strong(name, f"dataset name {name}")
        else:
            weak(name, f"dataset name {name}")
    for r in run.results:
        test_id = f"{r['dataset']}/{r['example_id']}"
        own = "\n".join(without_documented(line) for line in run.definitions[test_id]["script"])
        for leaf in _leaves(r["expected"]):
            weak(leaf, f"expected response of {test_id} (results.json)", own)
        for reason in r["reasons"]:
            weak(reason, f"scoring reason of {test_id}")
    for word in ALWAYS_MARKERS:
        strong(word, "scoring field")
    for word in WORD_MARKERS:
        weak(word, "scoring word")
    return Markers(found, skipped)


def haystacks(raw: Raw) -> Iterator[tuple[str, str]]:
    """Every part of a request as (where, text); in message text, the documented environment parts are removed."""
    yield "method", raw.method
    yield "path", raw.path
    yield "query", raw.query
    for name, value in raw.headers:
        yield f"header {name}", f"{name}: {value}"
    for where, text in raw.fields:
        yield where, without_documented(text)


def leaks(raws: list[Raw], markers: Markers) -> list[str]:
    """Where a marker occurs in the requests. The chat history repeats in every OpenAI request, so each distinct
    text is scanned once."""
    patterns = [(m, what, _bounded(m)) for m, what in markers.markers.items()]
    seen: dict[str, list[str]] = {}
    found = set()
    for i, raw in enumerate(raws):
        for where, text in haystacks(raw):
            if text not in seen:
                seen[text] = [f"{what} {m!r}" for m, what, pattern in patterns if pattern.search(text)]
            found.update(f"request {i}, {where}: {hit}" for hit in seen[text])
    return sorted(found)


def provenance_problems(run: Run, agent: Agent) -> list[str]:
    """Each message comes from the conversation's material: the opening message, a dataset's reset message,
    filler, or a line of its test's definition (verbatim, for tests whose messages are fixed in advance)."""
    problems = []
    resets = {cls.reset_message for cls in known_datasets().values()}
    for turn in agent.turns:
        kind, text, test = turn["kind"], turn["user"], turn["test"]
        d = run.definitions.get(test) if test else None
        if kind == "intro" and text != INTRO:
            problems.append(f"turn {turn['i']}: an opening message that is not the harness's")
        elif kind == "reset" and text not in resets:
            problems.append(f"turn {turn['i']}: a reset message no dataset has")
        elif kind == "test":
            if d is None:
                problems.append(f"turn {turn['i']}: test {test!r} has no definition")
            elif not (d["is_dynamic"] or d["is_temporal"] or d["dataset_name"] in ENV_DATASETS) and text not in d["script"]:
                problems.append(f"turn {turn['i']}: not a line of {test}'s script: {text[:80]!r}")
        elif kind == "filler" and test is not None:
            problems.append(f"turn {turn['i']}: filler attributed to {test}")
    return problems


# -- (1) and (2) -------------------------------------------------------------------------------------
def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def http_problems(run: Run) -> list[str]:
    problems = []
    turns = run.http.turns
    # the ping before the first turn (docs/http-agent.md): one GET of the agent's URL, with nothing in it
    pings = [r for r in run.http.raw if r.method == "GET"]
    if [(r.path, r.query, r.body) for r in pings] != [("/chat", "", b"")]:
        problems.append(f"pings {[(r.path, r.query, len(r.body)) for r in pings]}: expected one GET /chat, empty")
    raws = [r for r in run.http.raw if r.method != "GET"]
    sessions = set()
    messages = []
    for i, raw in enumerate(raws):
        names = {n.lower() for n, _ in raw.headers}
        if names != HTTP_HEADERS:
            problems.append(f"request {i}: headers {sorted(names ^ HTTP_HEADERS)} beyond/missing the standard ones")
        headers = {n.lower(): v for n, v in raw.headers}
        if raw.method != "POST" or raw.path != "/chat" or raw.query:
            problems.append(f"request {i}: {raw.method} {raw.path}?{raw.query} instead of POST /chat")
        expected_header = {"host": f"127.0.0.1:{run.port}", "accept": "*/*", "content-type": "application/json",
                           "content-length": str(len(raw.body))}
        for name, want in expected_header.items():
            if headers.get(name) != want:
                problems.append(f"request {i}: header {name}: {headers.get(name)!r}, not {want!r}")
        if not re.fullmatch(r"Python/[\d.]+ aiohttp/[\w.]+", headers.get("user-agent", "")):
            problems.append(f"request {i}: user-agent {headers.get('user-agent')!r}")
        if not set(re.split(r",\s*", headers.get("accept-encoding", ""))) <= {"gzip", "deflate", "br", "zstd"}:
            problems.append(f"request {i}: accept-encoding {headers.get('accept-encoding')!r}")
        data = raw.data
        if not isinstance(data, dict):
            problems.append(f"request {i}: body is not a JSON object")
            continue
        if data.get("reset") is True:
            if set(data) != HTTP_RESET_KEYS:
                problems.append(f"request {i}: reset with keys {sorted(data)}")
            continue
        if set(data) != HTTP_MESSAGE_KEYS or data["reset"] is not False:
            problems.append(f"request {i}: keys {sorted(data)}, reset {data.get('reset')!r}")
            continue
        sessions.add(data["session"])
        messages.append((data["message"], data["timestamp"]))
    if len(sessions) != 1 or not re.fullmatch(r"ltm-\d+", next(iter(sessions), "")):
        problems.append(f"session ids {sorted(sessions)}: expected one ltm-N")
    if [m for m, _ in messages] != [t["user"] for t in turns]:
        problems.append("the messages received are not the user texts of the turn events, in order")
    if [_when(ts) for _, ts in messages] != [_when(t["time"]) for t in turns]:
        problems.append("the timestamps received are not the times of the turn events")
    if any(_when(ts).utcoffset() is None for _, ts in messages):
        problems.append("a timestamp without a UTC offset")
    return problems


def openai_problems(run: Run) -> list[str]:
    problems = []
    turns = run.openai.turns
    raws = [r for r in run.openai.raw if r.path == "/v1/chat/completions"]
    # the check before the first turn: one GET /v1/models, with nothing in it
    listed = [r for r in run.openai.raw if r.path == "/v1/models"]
    if [(r.method, r.query, r.body) for r in listed] != [("GET", "", b"")]:
        problems.append(f"model lists {[(r.method, r.query, len(r.body)) for r in listed]}: expected one GET, empty")
    if len(raws) + len(listed) != len(run.openai.raw):
        problems.append(f"requests to other paths: {sorted({r.path for r in run.openai.raw} - {'/v1/chat/completions', '/v1/models'})}")
    history: list[dict[str, str]] = []
    for i, raw in enumerate(raws):
        names = {n.lower() for n, _ in raw.headers}
        extra = {n for n in names - OPENAI_HEADERS if not n.startswith("x-stainless-")}
        if extra or not OPENAI_HEADERS <= names:
            problems.append(f"request {i}: headers beyond the standard ones {sorted(extra)} "
                            f"or missing {sorted(OPENAI_HEADERS - names)}")
        headers = {n.lower(): v for n, v in raw.headers}
        if headers.get("authorization") != f"Bearer {LOCAL_KEY}":  # a local endpoint with no key set
            problems.append(f"request {i}: authorization {headers.get('authorization')!r}")
        if headers.get("content-type") != "application/json" or headers.get("host") != run.llm_host:
            problems.append(f"request {i}: content-type/host {headers.get('content-type')!r} {headers.get('host')!r}")
        if raw.method != "POST" or raw.query:
            problems.append(f"request {i}: {raw.method} {raw.path}?{raw.query}")
        data = raw.data
        if not isinstance(data, dict) or set(data) != OPENAI_BODY_KEYS:
            problems.append(f"request {i}: body keys {sorted(data) if isinstance(data, dict) else type(data)}")
            continue
        if data["model"] != "mock" or data["temperature"] != 0.0:
            problems.append(f"request {i}: model {data['model']!r}, temperature {data['temperature']!r}")
        if any(not isinstance(m, dict) or set(m) != {"role", "content"} for m in data["messages"]):
            problems.append(f"request {i}: a message with keys other than role and content")
            continue
        if i >= len(turns):
            problems.append(f"request {i}: more requests than turns")
            break
        turn = turns[i]
        newest = {"role": "user", "content": timestamp_prefix(_when(turn["time"])) + turn["user"]}
        want = [{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}, *history, newest]
        if data["messages"] != want:
            problems.append(f"request {i}: the messages are not the system prompt, the history and turn {i}'s "
                            "user text with its timestamp")
        history += [newest, {"role": "assistant", "content": turn["reply"]}]
    if len(raws) != len(turns):
        problems.append(f"{len(raws)} chat requests for {len(turns)} turns")
    return problems


# -- the tests ---------------------------------------------------------------------------------------
def test_agents_receive_only_the_conversation(run: Run) -> None:
    # the run really is large and varied
    assert {e["test"].split("/")[0] for e in run.http.events if e["type"] == "test_start"} == set(ALL_DATASETS)
    assert len(run.http.turns) > 200 and len(run.openai.turns) > 200
    assert {t["kind"] for t in run.http.turns} >= {"intro", "test", "filler", "reset"}

    # (1) and (2): exactly the protocol's fields, the turn events' texts and times, standard headers
    assert http_problems(run) == []
    assert openai_problems(run) == []
    assert provenance_problems(run, run.http) == []
    assert provenance_problems(run, run.openai) == []

    # the x-stainless-* headers describe the SDK and the platform only
    markers = markers_of(run)
    stainless = {n.lower(): v for r in run.openai.raw for n, v in r.headers if n.lower().startswith("x-stainless-")}
    assert set(stainless) >= {"x-stainless-lang", "x-stainless-package-version"}

    # (3): no marker anywhere in any request
    assert MUST_CHECK_WORDS <= set(markers.markers), markers.skipped
    for kind in ("test id", "expected response", "oracle answer", "scoring reason", "scoring field", "scoring word"):
        assert any(what.startswith(kind) for what in markers.markers.values()), kind
    assert sum(what.startswith("dataset name") for what in markers.markers.values()) >= 16
    assert sum(what.startswith("expected response") for what in markers.markers.values()) >= 20
    assert leaks(run.http.raw, markers) == []
    assert leaks(run.openai.raw, markers) == []


def test_the_scanner_finds_planted_leaks(run: Run) -> None:
    """Every check of the test above fails on requests with something planted in them."""
    markers = markers_of(run)
    some = next(r for r in run.results if r["dataset"] == "how_to_think")
    answer = some["expected"][0]  # an answer the conversation never says
    assert answer.strip(". ") in markers.markers
    assert leaks(run.http.raw, markers) == []

    def plant(raw: Raw, data: Any = None, **change: Any) -> Raw:
        return replace(raw.with_data(data) if data is not None else raw, **change)

    def planted(raws: list[Raw], index: int, data: Any = None, **change: Any) -> list[Raw]:
        return [plant(r, data, **change) if k == index else r for k, r in enumerate(raws)]

    http, i = run.http.raw, 5
    raw, body = http[i], dict(http[i].data)
    cases = {
        "answer in the message": plant(raw, dict(body, message=body["message"] + " " + answer)),
        "test id in a header": plant(raw, headers=raw.headers + [("X-Test", "colours/0")]),
        "dataset in the query": plant(raw, query="d=prospective_memory"),
        "dataset in the path": plant(raw, path="/chat/sallyanne"),
        "scoring field": plant(raw, dict(body, max_score=1.0)),
        "reason in a side field": plant(raw, dict(body, note=some["reasons"][0])),
        "oracle word in the message": plant(raw, dict(body, message="What would an oracle say?")),
        "a duplicate key": plant(raw, body=raw.body[:-1] + b', "session": "name_list"}'),
        "an escaped marker": plant(raw, body=raw.body[:-1] + rb', "x": "\u0073allyanne"}'),
        "kv as a word": plant(raw, dict(body, message="Which kv test is this?")),
    }
    for name, bad in cases.items():
        assert leaks([bad], markers), name
    # the documented environment parts are the only text removed
    assert leaks([plant(raw, dict(body, message="[env_guess #1] Score: 1.00 out of 1."))], markers) == []
    assert leaks([plant(raw, dict(body, message="[env_guess] env_guess/0"))], markers)
    assert leaks([raw], markers) == []

    # (1) and (2) fail too
    def http_with(raws: list[Raw]) -> list[str]:
        return http_problems(replace(run, http=replace(run.http, raw=raws)))

    assert any("keys" in p for p in http_with(planted(http, i, dict(body, test="colours/0"))))
    assert any("headers" in p for p in http_with(planted(http, i, headers=http[i].headers + [("X-Dataset", "x")])))
    assert any("user texts" in p for p in http_with(planted(http, i, dict(body, message=body["message"] + "!"))))
    assert any("timestamps" in p for p in http_with(planted(http, i, dict(body, timestamp="2030-01-01T00:00:00+00:00"))))

    def openai_with(raws: list[Raw]) -> list[str]:
        return openai_problems(replace(run, openai=replace(run.openai, raw=raws)))

    oa = run.openai.raw
    j = next(k for k, r in enumerate(oa) if r.data and len(r.data["messages"]) > 4)  # not the GET /v1/models
    msgs = [dict(m) for m in oa[j].data["messages"]]
    msgs[2]["content"] += " (expected: 7)"
    assert any("messages are not" in p for p in openai_with(planted(oa, j, dict(oa[j].data, messages=msgs))))
    assert any("body keys" in p for p in openai_with(planted(oa, j, dict(oa[j].data, user="colours/0"))))
    assert any("headers" in p for p in openai_with(planted(oa, j, headers=oa[j].headers + [("OpenAI-Organization", "x")])))
    assert openai_with(oa) == [] and http_with(http) == []

