"""cipher: a passive problem set: decode enciphered words (sub-tests `shift` and `substitution`).

One secret cipher per seed: a Caesar shift (1-25) or a letter substitution (a permutation of a-z),
given in the params or drawn. The words come from a word list (built in, or `words.txt` in the
folder given as `config`) and are split into train / dev / test without overlap. The agent sees the
train pairs and the enciphered test words; the test words themselves stay inside the environment.
No test word is a word of the message templates or equal to any enciphered word shown, so an
answer can never be read off a message.

Score: the number of test words decoded right (case-insensitive), out of `n_test`.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Literal, Sequence

from pydantic import Field, ValidationInfo, field_validator

from ltm_harness._guard.files import read_text
from ltm_harness._envs.base import PassiveEnv

from ltm_harness._envs.header import EnvHeader, EnvParams, Example, Space
from ltm_harness._envs.words import WORDS
from ltm_harness._errors import DefinitionError

ALPHABET = string.ascii_lowercase
RULES = {
    "shift": ("Every word below was enciphered by moving each letter the same secret number of places along "
              "the alphabet, wrapping round from z to a."),
    "substitution": ("Every word below was enciphered with the same secret letter substitution: each letter "
                     "always stands for the same other letter."),
}
TITLE = "[{label}] Cipher task{part}."
SAME_CIPHER = "The words below use the same secret cipher as in part 1."
TRAIN_HEAD = "Worked examples (enciphered -> plain):"
TEST_HEAD = "Decode these words:"
REPLY = "Reply with a JSON list of the {n} decoded words in order, like [<word {a}>, <word {b}>, ...]."
# Words of the messages themselves (and of likely labels): never used as test words.
TEMPLATE_WORDS = frozenset(re.findall(r"[a-z]+", " ".join(
    [*RULES.values(), TITLE, SAME_CIPHER, TRAIN_HEAD, TEST_HEAD, REPLY, "part of env name cipher shift substitution"]
).lower()))
MAX_DRAWS = 200


class CipherParams(EnvParams):
    env_name: Literal["shift", "substitution"] = "shift"
    shift: int | None = Field(default=None, ge=1, le=25)  # shift only; drawn per seed when not given
    key: str | None = None  # substitution only: the 26 cipher letters for a..z; drawn when not given
    n_train: int = Field(default=6, ge=0, le=50)
    n_dev: int = Field(default=4, ge=0, le=50)
    n_test: int = Field(default=10, ge=1, le=100)
    config: str | None = None  # a folder with words.txt (one word per line) instead of the built-in list

    @field_validator("shift")
    @classmethod
    def _shift(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and info.data.get("env_name") == "substitution":
            raise ValueError("shift is for env_name shift; give key for env_name substitution")
        return v

    @field_validator("key")
    @classmethod
    def _key(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return None
        if info.data.get("env_name") == "shift":
            raise ValueError("key is for env_name substitution; give shift for env_name shift")
        if len(v) != 26 or set(v.lower()) != set(ALPHABET):
            raise ValueError("key must hold each letter a-z exactly once (the cipher letters for a, b, ..., z)")
        return v.lower()


def load_words(folder: str | None) -> list[str]:
    """The word list: built in, or `words.txt` in `folder` (lower-cased; duplicates dropped)."""
    if folder is None:
        words: Sequence[str] = WORDS
    else:
        path = Path(folder) / "words.txt"
        try:
            lines = read_text(path).splitlines()
        except OSError as exc:
            raise DefinitionError(f"cipher: config: cannot read {path} ({exc.strerror or exc}); give a folder holding words.txt") from None
        words = []
        for i, line in enumerate(lines, 1):
            word = line.strip().lower()
            if word and not re.fullmatch(r"[a-z]+", word):
                raise DefinitionError(f"{path} line {i}: {line.strip()!r} is not one word of letters a-z; fix or remove it")
            if word:
                words.append(word)
    return list(dict.fromkeys(w.lower() for w in words))


class Cipher(PassiveEnv):
    test_name = "cipher"
    Params = CipherParams
    params: CipherParams
    sub_tests = ("shift", "substitution")

    table: dict[str, str]
    train: list[Example]
    dev: list[Example]
    test_problems: list[str]
    __answers: list[str]

    def _on_seed(self) -> None:
        p = self.params
        if p.env_name == "shift":
            k = p.shift if p.shift is not None else self.rng.randint(1, 25)
            self.table = {c: ALPHABET[(i + k) % 26] for i, c in enumerate(ALPHABET)}
        else:
            letters = p.key or "".join(self.rng.sample(ALPHABET, 26))
            self.table = dict(zip(ALPHABET, letters))
        pool = [w for w in load_words(p.config) if w not in TEMPLATE_WORDS]
        need = p.n_train + p.n_dev + p.n_test
        if len(pool) < need:
            raise DefinitionError(f"cipher: the word list has {len(pool)} usable words but n_train + n_dev + n_test = {need}; "
                            "ask for fewer words or give a longer words.txt")
        for _ in range(MAX_DRAWS):
            words = self.rng.sample(pool, need)
            train, dev, test = words[:p.n_train], words[p.n_train:p.n_train + p.n_dev], words[p.n_train + p.n_dev:]
            shown = {self.encipher(w) for w in train + test} | set(train)
            if not shown & set(test):
                break
        else:
            raise DefinitionError("cipher: could not draw test words that differ from every enciphered word shown; "
                            "give a longer word list")
        self.train = [Example(problem=self.encipher(w), answer=w) for w in train]
        self.dev = [Example(problem=self.encipher(w), answer=w) for w in dev]
        self.test_problems = [self.encipher(w) for w in test]
        self.__answers = test

    def encipher(self, word: str) -> str:
        return "".join(self.table.get(c, c) for c in word)

    @property
    def header(self) -> EnvHeader:
        return EnvHeader(
            name=f"cipher-{self.params.env_name}", kind="passive",
            action_space=Space(description="the decoded words, one per problem, in order"),
            observation_space=Space(description="enciphered words; worked examples from the train split"),
            info=f"decode {self.params.n_test} words enciphered with one secret {self.params.env_name} cipher",
            min_score=0.0, max_score=float(self.params.n_test),
        )

    def rules(self) -> str:
        return RULES[self.params.env_name]

    def get_test(self) -> list[str]:
        return list(self.test_problems)

    def get_train(self) -> list[Example]:
        return list(self.train)

    def get_dev(self) -> list[Example]:
        return list(self.dev)

    def _answers(self) -> list[str]:
        return self.__answers

    def render_problems(self, problems: Sequence[str], *, start: int = 0, train: Sequence[Example] = (),
                        label: str | None = None, part: tuple[int, int] | None = None) -> str:
        shown_part = f", part {part[0]} of {part[1]}" if part and part[1] > 1 else ""
        lines = [TITLE.format(label=label or self.header.name, part=shown_part)]
        lines.append(SAME_CIPHER if part and part[0] > 1 else self.rules())
        if train:
            lines.append(TRAIN_HEAD)
            lines.extend(f"{ex.problem} -> {ex.answer}" for ex in train)
        lines.append(TEST_HEAD)
        lines.extend(f"{start + i + 1}. {word}" for i, word in enumerate(problems))
        lines.append(REPLY.format(n=len(problems), a=start + 1, b=start + 2))
        return "\n".join(lines)

    def __repr__(self) -> str:  # never shows the answers
        return f"Cipher(env_name={self.params.env_name!r}, seed={self.current_seed}, n_test={self.params.n_test})"
