"""A small GPT-generated dataset written into a test's folder."""

from __future__ import annotations

import json
from pathlib import Path

SETS = [
    {"content": ["The capital of Varrow is Kestrel.", "The river of Varrow is the Tallow."],
     "questions": ["What is the capital of Varrow?", "What is the river of Varrow called?"],
     "answers": ["Kestrel", "the Tallow"], "keywords": [["Kestrel"], ["Tallow"]]},
    {"content": ["The currency of Ysmere is the salt mark.", "Ysmere's oldest festival is the Kite Vigil."],
     "questions": ["What is the currency of Ysmere?", "What is the oldest festival of Ysmere?"],
     "answers": ["the salt mark", "the Kite Vigil"], "keywords": [["salt mark"], ["Kite Vigil"]]},
]


def write_gpt_dataset(folder: Path, name: str = "fictional_facts", sets: list | None = None,
                      scoring: str = "judge") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    prompt = folder / f"{name}.json"
    prompt.write_text(json.dumps({
        "name": name, "description": "facts about invented places", "scoring": scoring,
        "content": "Generate two distinct facts about a fictional world.",
        "question": "Generate two questions, one per fact.",
        "answer": "Give the answer to each question. There needs to be two answers.",
    }), encoding="utf-8")
    (folder / f"{name}.examples.json").write_text(json.dumps(
        {"format": 1, "generated_by": ["hand-written"], "sets": SETS if sets is None else sets}), encoding="utf-8")
    return prompt
