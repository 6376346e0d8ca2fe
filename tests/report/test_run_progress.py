"""Run progress: a live display on a terminal, throttled log lines elsewhere, nothing with --quiet."""

from __future__ import annotations

import io
import re
import time

from rich.console import Console

from ltm_harness._cli import progress as progress_module
from ltm_harness._cli.main import main
from ltm_harness._cli.progress import AgentProgress, RunProgress, describe, measure
from ltm_harness._engine.progress import TurnProgress
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_line_says_tests_turns_tokens_against_the_span_score_cost_and_eta():
    p = AgentProgress("a", 21, tests_done=12, turns=340, tokens=1_204_000, scored=12, score_sum=10.0, cost_usd=0.0123,
                      fraction=0.5, elapsed=80.0)
    assert describe(p, 500_000) == ("12/21 tests, 340 turns, 1.2M tokens (2.4x span 500k), score 0.83, "
                                    "cost $0.0123, ETA 1m20s")
    fresh = AgentProgress("a", 21)
    assert describe(fresh, None) == "0/21 tests, 0 turns, 0 tokens, score -, cost $0.0000, ETA -"


async def test_live_display_counts_each_agents_tests_score_and_span(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "UPDATE_EVERY", 0.0)
    prepared = prepare(make_config(["colours", "kv"], span=1500, examples=2), tmp_path)
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    with RunProgress(console, ["oracle", "null"], 4, span=1500) as progress:
        assert progress.live
        await run_all(prepared, ["oracle", "null"], progress.on_turn)
    assert progress._progress is not None
    tasks = {t.description: t for t in progress._progress.tasks}
    assert tasks["oracle"].completed == tasks["null"].completed == progress_module.BAR_STEPS
    assert tasks["oracle"].fields["detail"].startswith("4/4 tests, ")
    assert "score 1.00" in tasks["oracle"].fields["detail"] and "score 0.00" in tasks["null"].fields["detail"]
    assert "x span 1.5k)" in tasks["oracle"].fields["detail"] and "ETA 0s" in tasks["oracle"].fields["detail"]


async def test_measure_follows_running_tests_through_their_plan(tmp_path):
    prepared = prepare(make_config(["colours"], span=3000, examples=1), tmp_path)
    seen: list[AgentProgress] = []
    heard: list[TurnProgress] = []

    def on_turn(turn):
        heard.append(turn)
        seen.append(measure("oracle", [turn], 1, elapsed=10.0))

    await run_all(prepared, ["oracle"], on_turn)
    assert [t.ended for t in heard] == [False] * (len(heard) - 1) + [True]  # every turn, then the session's end
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[-2] == 0.99  # the last turn comes before the test's end
    assert 0.2 < fractions[len(fractions) // 2] < 0.9  # moves while the only test runs, not just at its end
    assert seen[0].eta is None and 0 < seen[len(seen) // 2].eta < 40
    done = seen[-1]
    assert (done.fraction, done.eta, done.tests_done, done.score) == (1.0, 0.0, 1, 1.0)
    assert (heard[-1].agent, heard[-1].session, heard[-1].tests_total, heard[-1].turn) == ("oracle", "main", 1,
                                                                                        len(heard) - 1)


async def test_log_lines_are_throttled_per_agent_and_end_with_a_last_line(tmp_path):
    prepared = prepare(make_config(["colours", "kv", "jokes"], span=2000, examples=3), tmp_path)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    clock = FakeClock(0.5)  # every turn takes half a second
    with RunProgress(console, ["oracle", "null"], 9, span=2000, clock=clock) as progress:
        assert not progress.live
        await run_all(prepared, ["oracle", "null"], progress.on_turn)
    lines = out.getvalue().splitlines()
    for agent in ("oracle", "null"):
        mine = [line for line in lines if re.match(rf"\[[\dhms]+\] (progress|end) {agent}: ", line)]
        assert len(mine) >= 3 and mine[-1].split("] ")[1].startswith(f"end {agent}: 9/9 tests")
        times = [_seconds(line.split("]")[0][1:]) for line in mine[:-1]]
        gaps = [b - a for a, b in zip(times, times[1:])]
        # (the printed times are rounded to whole seconds)
        assert all(g >= progress_module.LOG_MIN_GAP - 1 for g in gaps), gaps
        assert all(g <= progress_module.LOG_EVERY + 2 for g in gaps), gaps
    assert len(lines) == sum(1 for line in lines if " progress " in line or " end " in line)


def _seconds(text: str) -> int:
    parts = dict((unit, int(n)) for n, unit in re.findall(r"(\d+)([hms])", text))
    return parts.get("h", 0) * 3600 + parts.get("m", 0) * 60 + parts.get("s", 0)


async def test_a_short_run_prints_no_log_lines_and_updates_are_throttled(tmp_path, monkeypatch):
    prepared = prepare(make_config(["colours", "kv", "jokes"], span=4000, examples=3), tmp_path)
    out = io.StringIO()
    calls = []
    started = time.perf_counter()
    with RunProgress(Console(file=out, force_terminal=False), ["oracle"], 9) as progress:
        original = progress.refresh
        monkeypatch.setattr(progress, "refresh", lambda now=None: (calls.append(now), original(now)))
        await run_all(prepared, ["oracle"], progress.on_turn)
    took = time.perf_counter() - started
    assert out.getvalue() == "" and took < progress_module.LOG_MIN_GAP
    turns = progress._sessions["oracle"]["main"].turn
    assert turns > 80 and len(calls) <= took / progress_module.UPDATE_EVERY + 2  # not once per turn


def test_quiet_prints_neither_progress_nor_header(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "UPDATE_EVERY", 0.0)
    monkeypatch.setattr(progress_module, "LOG_EVERY", 0.0)
    monkeypatch.setattr(progress_module, "LOG_MIN_GAP", 0.0)
    args = ["run", "--results", str(tmp_path), "--examples", "1", "--span", "1000", "-a", "oracle", "--no-report"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert " progress oracle: " in out and " end oracle: " in out and out.startswith("run ")
    assert main(args + ["--quiet"]) == 0
    quiet = capsys.readouterr().out
    assert "progress" not in quiet and " end " not in quiet and not quiet.startswith("run ")
    assert "agent oracle" in quiet  # the final table is still printed


def test_agent_names_are_never_cut_at_80_columns():
    names = ["openai:gpt-4o-mini@8k", "retrieval", "recent:8000", "x" * 55]
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    progress = RunProgress(console, names, 33, span=32000)
    assert progress._progress is not None
    for name in names:
        progress._progress.update(progress._tasks[name], completed=400, detail=describe(
            AgentProgress(name, 33, 12, 340, 1_200_000, 5, 4.0, 0.0123, 0.4, 30.0), 32000))
    screen = Console(file=io.StringIO(), width=80, color_system=None)
    screen.print(progress._progress.get_renderable())
    text = screen.file.getvalue()
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines) and "…" not in text
    for name in names[:3]:
        assert any(line.startswith(name + " ") for line in lines), name
    assert "x" * 40 in text and "x" * 15 in text  # a name longer than the column wraps, whole
    assert text.count("ETA 45s") == 4


def test_the_runs_spend_against_its_budget_is_on_every_line_and_on_a_row_of_its_own_live():
    from ltm_harness._llm.ledger import Ledger
    from ltm_harness._llm.pricing import Price, PriceTable

    ledger = Ledger(PriceTable({"m": Price(prompt=1.0, completion=1.0)}), budget=0.5)
    ledger.settle(ledger.reserve("judge", "m", 10_000, 2_345), 0.012345)
    out = io.StringIO()
    logged = RunProgress(Console(file=out, force_terminal=False, width=200), ["oracle"], 2, clock=FakeClock(40.0),
                         spend=ledger.describe)
    with logged:
        logged.on_turn(TurnProgress("oracle", "main", 1, 10, 1, 2, 1, 1.0, 0.0, 0, 0.5))
    assert "; run spent $0.0123 of $0.5000" in out.getvalue()
    live = io.StringIO()
    console = Console(file=live, force_terminal=True, width=120)
    with RunProgress(console, ["oracle"], 2, live=True, spend=ledger.describe) as progress:
        progress.refresh()
        assert "spent $0.0123 of $0.5000" in " ".join(str(t.fields["detail"]) for t in progress._progress.tasks)
