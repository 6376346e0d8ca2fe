"""Real runs for the report tests, made once per test session (each takes well under a second)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ltm_harness.testing import make_config, run_config, serve_local

# What a hostile or careless agent may reply: markup, a script, an event handler, entities.
EVIL = ('<script>document.title="pwned";window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
        '<b>bold</b> & "quoted" \'single\' </script> <!-- comment')


async def _evil_reply(request: web.Request) -> web.Response:
    data = await request.json()
    if data.get("reset"):
        return web.Response(status=204)
    return web.json_response({"reply": EVIL, "prompt_tokens": 50, "completion_tokens": 20, "cost_usd": 0.002})


async def _run_with_evil_agent(root: Path) -> tuple[Path, str]:
    app = web.Application()
    app.router.add_post("/chat", _evil_reply)
    async with serve_local(app) as base:
        spec = f"{base}/chat"
        cfg = make_config(["colours", "kv"], span=1500, examples=2, run_name="evil")
        await run_config(cfg, root, ["oracle", spec])
    return root / "evil", spec


@pytest.fixture(scope="session")
def evil_reply() -> str:
    """The reply of the agent of `evil_run`."""
    return EVIL


@pytest.fixture(scope="session")
def small_run_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    cfg = make_config(["colours", "kv", "jokes"], span=1500, examples=2, run_name="small")
    asyncio.run(run_config(cfg, root, ["oracle", "null", "retrieval"]))
    return root / "small"


@pytest.fixture
def small_run(small_run_master: Path, tmp_path: Path) -> Path:
    """A finished run (three datasets, oracle, null and retrieval) in a folder of the test's own."""
    folder = tmp_path / "results" / "small"
    shutil.copytree(small_run_master, folder)
    return folder


@pytest.fixture(scope="session")
def evil_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run with the oracle and an HTTP agent that replies with markup and <script>; its folder and spec."""
    return asyncio.run(_run_with_evil_agent(tmp_path_factory.mktemp("evil")))


# The offline datasets of the shipped benchmark-v3 configs with their published parameters, at 500k tokens.
V3_OFFLINE: list[dict[str, Any]] = [{"name": "colours", "args": {"colour_changes": 3}}, {"name": "shopping", "args": {"item_changes": 6}},
              {"name": "name_list", "args": {"name_changes": 5}}, {"name": "jokes", "args": {"jokes_told": 4}},
              {"name": "sallyanne", "args": {"question_type": "theory_of_mind"}}, {"name": "prospective_memory"},
              {"name": "trigger_response"}]


@pytest.fixture(scope="session")
def run_500k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 500k-token run (7 datasets x 3 examples) with the oracle and the null agent."""
    root = tmp_path_factory.mktemp("big")
    cfg = make_config(V3_OFFLINE, span=500_000, examples=3, run_name="v3-500k")
    asyncio.run(run_config(cfg, root, ["oracle", "null"]))
    return root / "v3-500k"


# Eleven offline datasets (the shipped benchmark-v3's, but chapterbreak, plus kv): a report as wide as a real one.
WIDE = V3_OFFLINE + [{"name": "locations_directions", "args": {"known_locations": 6}}, {"name": "spy_meeting"},
                     {"name": "restaurant"}, {"name": "kv"}]


@pytest.fixture(scope="session")
def wide_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three runs of 11 datasets (3 examples each, span 3000) in one results folder: `wide` (oracle, retrieval,
    recent:1000, null), `wide-more` on the same tests (retrieval, recent:2000, recent:500), and `wide-seed1` on
    other tests (seed 1: oracle, recent:1000)."""
    root = tmp_path_factory.mktemp("wide") / "results"
    made = []
    for name, seed, agents in (("wide", 0, ["oracle", "retrieval", "recent:1000", "null"]),
                               ("wide-more", 0, ["retrieval", "recent:2000", "recent:500"]),
                               ("wide-seed1", 1, ["oracle", "recent:1000"])):
        cfg = make_config(WIDE, span=3000, examples=3, run_name=name, seed=seed,
                          incompatibilities=[["locations", "locations_directions"]])
        asyncio.run(run_config(cfg, root, agents))
        made.append(root / name)
    return made


@pytest.fixture(scope="session")
def quiz_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two runs of a small benchmark with labels and metrics of its own (bench_fixture.Quiz: 2 conversations of 6
    questions, one category unscored without a judge) beside `colours` (no labels), in one results folder: `quiz`
    (oracle, retrieval, null) and `quiz-more` on the same tests (recent:500)."""
    from .bench_fixture import register, unregister

    root = tmp_path_factory.mktemp("quiz") / "results"
    register()
    try:
        for name, agents in (("quiz", ["oracle", "retrieval", "null"]), ("quiz-more", ["recent:500"])):
            cfg = make_config([{"name": "quiz_bench"}, "colours"], span=1500, examples=2, run_name=name)
            asyncio.run(run_config(cfg, root, agents))
    finally:
        unregister()
    return [root / "quiz", root / "quiz-more"]


LOCOMO_DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"


@pytest.fixture(scope="session")
def real_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results folder of real runs, each page's report written: `default` (the shipped default config: the GoodAI
    datasets, 4 agents), `locomo` (the LoCoMo-shaped tests/data/locomo/synthetic.json, reference protocol: oracle,
    null, retrieval) and `locomo-more` (the same tests, recent:500), `beam` (BEAM-shaped 100K chats made by
    benchmarks/beam_data.py: oracle, null, retrieval), a comparison of the two LoCoMo runs, a small study (`study`:
    oracle and null at two spans) and the index. A few seconds."""
    from ltm_harness._cli.main import main
    from ltm_harness._report import write_report
    from ltm_harness.testing import load_script

    top = tmp_path_factory.mktemp("real")
    root = top / "results"
    repo = Path(__file__).resolve().parents[2]
    assert main(["run", "-c", str(repo / "configs" / "default.yml"), "--results", str(root), "--quiet"]) == 0
    locomo = {"name": "locomo", "args": {"data_file": str(LOCOMO_DATA)}}
    for name, agents in (("locomo", ["oracle", "null", "retrieval"]), ("locomo-more", ["recent:500"])):
        asyncio.run(run_config(make_config([locomo], span=4000, examples=2, run_name=name), root, agents))
        write_report([root / name])
    beam = load_script(repo / "benchmarks" / "beam_data.py").write_dataset(top / "beam-data", "100K", 2)
    asyncio.run(run_config(make_config([{"name": "beam", "args": {"data_dir": str(beam)}}], span=32000, examples=2,
                                       run_name="beam"), root, ["oracle", "null", "retrieval"]))
    write_report([root / "beam"])
    write_report([root / "locomo", root / "locomo-more"])
    (top / "base.yml").write_text("config:\n  run_name: base\ndatasets:\n  args: {memory_span: 1000, dataset_examples: 1}\n"
                                  "  datasets:\n    - {name: colours}\n    - {name: names}\n")
    (top / "study.yml").write_text('name: study\nbase: base.yml\nagents: [oracle, "null"]\nspans: [1000, 2000]\n')
    assert main(["grid", str(top / "study.yml"), "--results", str(root), "--quiet"]) == 0
    return root
