"""The study of the grid tests (12 cells) and how their outputs are compared."""

from __future__ import annotations

import json
from pathlib import Path

BASE = """
config:
  run_name: base
datasets:
  args: {memory_span: 1000, dataset_examples: 1}
  datasets:
    - {name: colours}
    - {name: names}
"""
STUDY = """
name: twelve
base: base.yml
agents: [retrieval, "short=recent:500", oracle]
spans: [1000, 2000]
seeds: [0, 1]
"""



def write_study(folder: Path, study: str = STUDY, base: str = BASE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base.yml").write_text(base)
    path = folder / "study.yml"
    path.write_text(study)
    return path


def outputs(folder: Path) -> dict[str, bytes]:
    """Every file of a run folder that must not depend on how or where it ran (wall-clock times taken out of the
    summaries, and the folder's own path out of the files that name it)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        data = path.read_bytes().replace(str(folder).encode(), b"OUT")
        if path.name == "summary.json":
            summary = json.loads(data)
            for s in [summary, *summary.get("agents", [])]:
                s.pop("wall_seconds", None)
            data = json.dumps(summary, sort_keys=True).encode()
        out[str(path.relative_to(folder))] = data
    return out
