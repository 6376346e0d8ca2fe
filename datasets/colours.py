"""colours: the user names a favourite colour several times; only the last one counts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.latest_value import LatestValueDataset

COLOURS = [
    "Red", "Blue", "Green", "Yellow", "Orange", "Purple", "Pink", "Brown", "Black", "White", "Grey", "Cyan",
    "Magenta", "Turquoise", "Beige", "Maroon", "Navy", "Olive", "Teal", "Lavender", "Crimson", "Amber",
    "Indigo", "Violet", "Cream", "Gold", "Silver", "Scarlet", "Coral", "Mauve", "Ochre", "Saffron",
]
STATEMENTS = [
    "My favourite colour is {}.",
    "The name of my favourite colour is {}.",
    "My favourite colour could be described as {}.",
    "These days the colour I like best is {}.",
    "If you ask me for my favourite colour, I will say {}.",
]
QUESTION = "What is my favourite colour?"


class ColoursParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    colour_changes: int = Field(default=3, ge=1, le=len(COLOURS))


class Colours(LatestValueDataset):
    name = "colours"
    description = "The user changes their favourite colour several times; the agent must give the latest one."
    reset_message = "Please disregard any favourite colour I have told you about so far."
    Params = ColoursParams
    params: ColoursParams  # the validated args, typed
    values = COLOURS
    statements = STATEMENTS
    question = QUESTION
    answer = "Your favourite colour is {}."
    noun = "colour"

    def changes(self) -> int:
        return self.params.colour_changes
