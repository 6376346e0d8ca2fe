"""The README's "Writing a dataset" example works as written."""

from __future__ import annotations

import re
from pathlib import Path

from ltm_harness.testing import make_config, run_config

README = Path(__file__).resolve().parents[2] / "README.md"


async def test_readme_dataset_example_runs(tmp_path):
    text = README.read_text()
    section = text[text.index("## Writing a dataset"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    folder = tmp_path / "my_datasets"
    folder.mkdir()
    (folder / "capitals.py").write_text(code)
    cfg = make_config([{"name": "capitals_of_fiction", "args": {"countries": 3}}], span=1000, examples=2,
                      dataset_dirs=[str(folder)])
    summary = await run_config(cfg, tmp_path / "results", ["oracle", "null", "retrieval"])
    score = {a.agent: a.benchmark_score for a in summary.agents}
    assert score == {"oracle": 1.0, "null": 0.0, "retrieval": score["retrieval"]} and score["retrieval"] > 0
