"""An agent whose adapter cannot count every model call says so (`Agent.usage_note`): in summary.json, under its
table in the terminal and in the report, kept by a rescore; an agent that counts everything says nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._cli.main import main as cli

AGENT = '''
from ltm_harness import Agent

class Hidden(Agent):
    usage_note = "the embedding calls of its vector store are not counted"

    async def reply(self, message, oracle_hint=None):
        return "Noted."
'''

NOTE = "the embedding calls of its vector store are not counted"


def _summary(results: Path, agent: str) -> dict:
    return json.loads((results / "run" / agent / "summary.json").read_text(encoding="utf-8"))


def test_a_partial_usage_is_said_everywhere_and_kept_by_a_rescore(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hidden.py").write_text(AGENT, encoding="utf-8")
    config = tmp_path / "c.yml"
    config.write_text("config: {run_name: run}\ndatasets:\n  args: {memory_span: 500, dataset_examples: 1}\n"
                      "  datasets:\n    - name: colours\n", encoding="utf-8")
    assert cli(["run", "-c", str(config), "-a", "hidden=hidden.py:Hidden", "-a", "null", "--results", "results"]) == 0
    out = capsys.readouterr().out
    assert f"agent usage partial: {NOTE}" in out
    results = tmp_path / "results"
    assert _summary(results, "hidden")["usage_note"] == NOTE
    assert "usage_note" not in _summary(results, "null")  # a baseline counts everything: nothing said
    page = (results / "run" / "report.html").read_text(encoding="utf-8")
    assert f"Agent tokens and cost are partial: {NOTE}." in page and page.count("are partial") == 1
    assert cli(["rescore", str(results / "run")]) == 0
    capsys.readouterr()
    assert _summary(results, "hidden")["usage_note"] == NOTE  # the agent did not run again: the note is kept
