"""The README's first agent, and the dataset of docs/datasets.md, work as written."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from ltm_harness.testing import make_config, run_config

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DATASETS_PAGE = ROOT / "docs" / "datasets.md"


async def test_the_docs_dataset_example_runs(tmp_path):
    text = DATASETS_PAGE.read_text()
    section = text[text.index("## A complete dataset"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    folder = tmp_path / "my_datasets"
    folder.mkdir()
    (folder / "capitals.py").write_text(code)
    cfg = make_config([{"name": "capitals_of_fiction", "args": {"countries": 3}}], span=1000, examples=2,
                      dataset_dirs=[str(folder)])
    summary = await run_config(cfg, tmp_path / "results", ["oracle", "null", "retrieval"])
    score = {a.agent: a.benchmark_score for a in summary.agents}
    assert score == {"oracle": 1.0, "null": 0.0, "retrieval": score["retrieval"]} and score["retrieval"] > 0


def test_readme_short_path_agent_runs_as_written(tmp_path, monkeypatch):
    """The first agent the README shows, run with the command it gives (the offline baselines beside it)."""
    from ltm_harness._cli.main import main

    text = README.read_text()
    start = text.index("## Your agent in Python")
    section = text[start:text.index("\n## ", start + 1)]
    code = textwrap.dedent(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    command = re.search(r"\./ltm run (-a mine=mem\.py:Mem -a retrieval -a null)", section).group(1).split()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mem.py").write_text(code)
    assert main(["run", *command, "--span", "1500", "--examples", "1", "--quiet", "--no-report"]) == 0
    summary = json.loads((tmp_path / "results" / "default" / "mine" / "summary.json").read_text())
    assert summary["agent"] == "mine" and summary["turns"] > 0
