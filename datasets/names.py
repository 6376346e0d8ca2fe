"""names: the user tells the agent their name several times; only the last one counts."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.latest_value import LatestValueDataset

NAMES: list[str] = json.loads((Path(__file__).parent / "data" / "first_names.json").read_text(encoding="utf-8"))["first_names"]
STATEMENTS = [
    "My name is {}.",
    "Hi, I'm {}, by the way.",
    "Please call me {} from now on.",
    "Just so you know, my name is {}.",
    "I've decided I'd like to be called {} now.",
    "You can call me {}.",
    "These days everyone knows me as {}.",
]
QUESTION = "What is my name?"


class NamesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name_changes: int = Field(default=3, ge=1, le=len(NAMES))


class Names(LatestValueDataset):
    name = "names"
    description = "The user gives their name several times; the agent must say the latest one."
    reset_message = "Please disregard any names I have given you for myself so far."
    Params = NamesParams
    params: NamesParams  # the validated args, typed
    values = NAMES
    statements = STATEMENTS
    question = QUESTION
    answer = "Your name is {}."
    noun = "name"

    def changes(self) -> int:
        return self.params.name_changes
