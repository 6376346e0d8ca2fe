"""chapterbreak: the agent hears the end of a chapter, later six candidate openings of the next chapter, and
must pick the real one.

The stories come from the ChapterBreak dataset (Sun et al., 2022); this project ships none of its text. On first
use the file is fetched from the reference benchmark's release asset (`chapterbreak_ctx_8192.zst`, zstd-compressed
JSON of 8192-token chapter endings, under GoodAI/goodai-ltm-benchmark's v1.1 release) into the user cache
(`$LTM_HARNESS_CACHE/chapterbreak/`, default the platform's cache folder, e.g. `~/.cache/ltm-harness/`; see
`ltm_harness._authoring.datafiles`), its sha256 and structure checked. `LTM_CHAPTERBREAK_URL` names a mirror,
`LTM_CHAPTERBREAK_SHA256` another expected sha256 (`none`: structure check only). Offline, put the file at the
cache path by hand, or leave the dataset out (`--exclude chapterbreak`).

A file of your own is read instead when the dataset's `data_dir` argument (also accepted as `config`, as AIQ-style
tests name it) names its folder, or when `datasets/data/chapterbreak/chapterbreak_ctx_8192.json` exists in a
checkout; `data_file` is its name (JSON, or zstd-compressed JSON when it ends in `.zst`). The format:
`{"ao3": {book_id: [{"ctx": chapter end, "pos": true next opening, "negs": [other openings]}, ...]},
"pg19": {...}}`.

A test reads the chapter end page by page (pages of at most `page_tokens` tokens, split at
sentence ends), then the conversation goes on until `options_at_percent` of the memory span has
passed since the test began, and then the options are read and the question asked. So the agent
must keep the chapter in memory across the span; the reference benchmark reads everything back
to back (its gap is only the options, whatever the span): `options_at_percent: 0` does that.

Scoring: the reply must name the right option number and no other one. A reply naming several
options, or none, is inconclusive: the LLM judge decides when the run has one, else it scores 0.
Definitions are generated from the file once and saved, so later runs need no file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from ltm_harness._guard.files import problem, read_text
from ltm_harness._authoring.datafiles import RemoteFile, decompress_json, fetch_json
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import DefinitionError
from ltm_harness._authoring.example import TestExample, Wait
from ltm_harness._engine.program import TestOutcome
from ltm_harness._tokens import get_tokenizer
from ltm_harness._scoring.verdict import Judge

DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data" / "chapterbreak"
DEFAULT_FILE = "chapterbreak_ctx_8192.json"
SOURCE = "the ChapterBreak dataset (https://github.com/SimengSun/ChapterBreak, data linked from its README)"
# The reference benchmark's copy of the file, and the sha256 its code checks the download against
# (GoodAI/goodai-ltm-benchmark, datasets/chapterbreak.py: CHAPTERBREAK_8K_URL and CHAPTERBREAK_8K_SUM).
REMOTE = RemoteFile(
    dataset="chapterbreak", name="chapterbreak_ctx_8192.zst",
    url="https://github.com/GoodAI/goodai-ltm-benchmark/releases/download/v1.1/chapterbreak_ctx_8192.zst",
    sha256="1567de8463149cfb314ab2ccc7e7acc17a3b262bccd70889e2d1e43be09043ed",
    max_bytes=1 << 30, max_json_bytes=3 << 30, env_prefix="LTM_CHAPTERBREAK",
)
MAX_OPTIONS = 9  # answers are single digits

INTRO = ("I'm going to read you the last pages of a chapter of a story, one page at a time. There is nothing to "
         "say about them yet; just listen.")
PAGE = "Page {k} of {n}:\n\n{text}"
OPTIONS_INTRO = ("Here are {n} possible openings for the next chapter of the story I read you. Just read them for "
                 "now; I will ask about them afterwards.")
OPTION = "Option {k}:\n\n{text}"
QUESTION = ("Which option is the real opening of the next chapter? Reply with the option's number only "
            "(a single digit).")
CONTEXT = ("The user read the agent the end of a chapter of a story and then {n} candidate openings of the next "
           "chapter, numbered 1 to {n}, and asked which one really comes next. The right option number is given. "
           "Score 1 if the response picks that option and no other, 0 otherwise.")
_SENTENCE_END = re.compile(r"(?<=[.!?\u201d\"'])\s+")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_OPTION_NUMBER = re.compile(r"(?<![\d.,])\b([1-9])\b(?![\d]|\.\d)|\boption\s+(one|two|three|four|five|six|seven|eight|nine)\b",
                            re.IGNORECASE)


class ChapterSample(BaseModel):
    model_config = ConfigDict(extra="allow")
    ctx: str = Field(min_length=1)
    pos: str = Field(min_length=1)
    negs: list[str] = Field(min_length=1, max_length=MAX_OPTIONS - 1)


class ChapterBreakParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    split: Literal["ao3", "pg19", "all"] = "ao3"
    page_tokens: int = Field(default=1024, ge=64, le=4000)
    data_dir: str | None = Field(default=None, validation_alias=AliasChoices("data_dir", "config"))
    data_file: str = DEFAULT_FILE
    options_at_percent: float = Field(default=90.0, ge=0, le=100)


def _pack(pieces: list[str], limit: int, sep: str) -> list[str]:
    """Consecutive pieces joined by `sep` into chunks of at most `limit` tokens (a piece over the limit alone)."""
    count = get_tokenizer().count
    chunks: list[list[str]] = []
    size = 0
    for piece in pieces:
        n = count(piece) + 1
        if chunks and chunks[-1] and size + n <= limit:
            chunks[-1].append(piece)
            size += n
        else:
            chunks.append([piece])
            size = n
    out: list[str] = []
    for chunk in chunks:  # counted apart, pieces can merge into fewer tokens, rarely more: check each chunk
        stack = [chunk]
        while stack:
            part = stack.pop()
            if len(part) > 1 and count(sep.join(part)) > limit:
                mid = len(part) // 2
                stack += [part[mid:], part[:mid]]
            else:
                out.append(sep.join(part))
    return out


def split_pages(text: str, page_tokens: int) -> list[str]:
    """The text in pages of at most `page_tokens` tokens (cl100k), cut at sentence ends where possible."""
    count = get_tokenizer().count
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        if count(sentence) <= page_tokens:
            pieces.append(sentence)
        else:  # a sentence longer than a page: cut between words
            pieces += _pack(sentence.split(" "), page_tokens, " ")
    return _pack(pieces, page_tokens, " ")


def option_numbers(reply: str, options: int) -> list[int]:
    """Option numbers (1..options) the reply names, in order, each once."""
    found: list[int] = []
    for m in _OPTION_NUMBER.finditer(reply):
        n = int(m.group(1)) if m.group(1) else _NUMBER_WORDS[m.group(2).lower()]
        if 1 <= n <= options and n not in found:
            found.append(n)
    return found


_WORDS = {
    "subject": ["the traveller", "the old keeper", "her brother", "the stranger", "the captain", "his mother",
                "the young clerk", "the gardener", "the widow", "the smith"],
    "verb": ["watched", "remembered", "carried", "followed", "mended", "opened", "forgot", "described", "buried",
             "questioned"],
    "object": ["the letter", "a lantern", "the locked door", "the last of the bread", "a broken chair", "the map",
               "an empty cup", "the ledger", "a folded coat", "the wooden box"],
    "tail": ["before the rain came", "without a word", "as the fire died down", "while the others slept",
             "for the second time that week", "with great care", "as if nothing had happened", "until it was late"],
}


def synthetic_data(seed: int = 0, books: int = 3, chapters: int = 2, ctx_tokens: int = 8192,
                   option_tokens: int = 250, negatives: int = 5) -> dict[str, Any]:
    """Made-up text in ChapterBreak's file format (for tests and benchmarks of the harness, never a benchmark).

    Chapter ends of about `ctx_tokens` tokens, openings of about `option_tokens`, in both splits."""
    import random

    rng = random.Random(f"chapterbreak-synthetic:{seed}")
    count = get_tokenizer().count

    def text(tokens: int) -> str:
        sentences: list[str] = []
        total = 0
        while total < tokens:
            s = " ".join(rng.choice(_WORDS[k]) for k in ("subject", "verb", "object", "tail")).capitalize() + "."
            sentences.append(s)
            total += count(s) + 1
        return " ".join(sentences)

    def sample() -> dict[str, Any]:
        return {"ctx": text(ctx_tokens), "pos": text(option_tokens), "negs": [text(option_tokens) for _ in range(negatives)]}

    return {split: {f"{split}{b:03d}": [sample() for _ in range(chapters)] for b in range(books)}
            for split in ("ao3", "pg19")}


def samples_of(raw: Any, path: Path, splits: list[str]) -> dict[str, ChapterSample]:
    """Samples by id (`<book>_<index>`) of the given splits; a file shaped otherwise is a DefinitionError."""
    samples: dict[str, ChapterSample] = {}
    for split in splits:
        books = raw.get(split) if isinstance(raw, dict) else None
        if not isinstance(books, dict):
            raise DefinitionError(f"{path}: has no {split!r} section of books; it must be ChapterBreak's JSON "
                                  '({"ao3": {book_id: [{"ctx", "pos", "negs"}, ...]}, "pg19": {...}})')
        for book, chapters in books.items():
            if not isinstance(chapters, list):
                raise DefinitionError(f"{path}: {split}.{book}: must be a list of chapter samples")
            for i, chapter in enumerate(chapters):
                try:
                    samples[f"{book}_{i}"] = ChapterSample.model_validate(chapter)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"])
                    raise DefinitionError(f"{path}: {split}.{book}[{i}].{where}: {err['msg']}; the file must be "
                                          "ChapterBreak's JSON with ctx, pos and negs per sample") from None
    return samples


def check_file(raw: Any, path: Path) -> None:
    """The structure a data file must have: both splits, every sample with ctx, pos and negs, and some samples."""
    if not samples_of(raw, path, ["ao3", "pg19"]):
        raise DefinitionError(f"{path}: holds no chapter samples; it must be ChapterBreak's JSON")


class ChapterBreak(DatasetInterface):
    name = "chapterbreak"
    description = ("The agent hears the end of a book chapter, later six candidate openings of the next chapter, "
                   "and must pick the real one (needs the ChapterBreak data file).")
    reset_message = "Please forget the story chapter and the chapter openings I read to you."
    Params = ChapterBreakParams
    params: ChapterBreakParams  # the validated args, typed
    requires_user_data: ClassVar[bool] = True  # needs a file users download (see the module docstring)

    # -- the data file ------------------------------------------------------------------------------
    @property
    def data_path(self) -> Path:
        folder = Path(self.params.data_dir).expanduser() if self.params.data_dir else DEFAULT_DATA_DIR
        return folder / self.params.data_file

    @property
    def uses_own_file(self) -> bool:
        """A file of the user's (data_dir, or one in the checkout's data folder) rather than the fetched one."""
        return self.params.data_dir is not None or (DEFAULT_DATA_DIR / self.params.data_file).is_file()

    def load_raw(self) -> tuple[Any, Path]:
        """The parsed data file and where it is: the user's own, else the cached download (fetched if missing)."""
        if not self.uses_own_file:
            return fetch_json(REMOTE, check_file), REMOTE.path
        path = self.data_path
        why = problem(path, REMOTE.max_json_bytes)
        if why is not None and why != "it does not exist":
            raise DefinitionError(f"chapterbreak: the data file {path} cannot be read ({why}); put {self.params.data_file} "
                                  f"from {SOURCE} into {path.parent}")
        if why is not None:
            raise DefinitionError(f"chapterbreak: the data file {path} is missing; put {self.params.data_file} from "
                                  f"{SOURCE} into {path.parent}, or remove `data_dir` from the chapterbreak args of "
                                  f"your config to download the reference's copy ({REMOTE.url})")
        if path.suffix == ".zst":
            return decompress_json(path, REMOTE.max_json_bytes), path
        try:
            return json.loads(read_text(path, REMOTE.max_json_bytes)), path
        except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
            raise DefinitionError(f"{path}: not a JSON file ({exc}); download {self.params.data_file} again from "
                                  f"{SOURCE}") from None

    def load_samples(self) -> dict[str, ChapterSample]:
        """Samples by id (`<book>_<index>`) from the chosen split(s) of the data file."""
        raw, path = self.load_raw()
        return samples_of(raw, path, ["ao3", "pg19"] if self.params.split == "all" else [self.params.split])

    # -- generation -----------------------------------------------------------------------------------
    def generate_examples(self, num_examples: int) -> list[TestExample]:
        samples = self.load_samples()
        if len(samples) < num_examples:
            raise DefinitionError(f"{self.data_path}: the {self.params.split!r} split has {len(samples)} samples but the "
                            f"config asks for {num_examples} chapterbreak examples; ask for fewer")
        chosen = self.rng.sample(sorted(samples), num_examples)
        return [self._example(i, sample_id, samples[sample_id]) for i, sample_id in enumerate(chosen)]

    def _example(self, index: int, sample_id: str, sample: ChapterSample) -> TestExample:
        openings = [(True, sample.pos)] + [(False, neg) for neg in sample.negs]
        self.rng.shuffle(openings)
        answer = next(k for k, (true, _) in enumerate(openings, start=1) if true)
        pages = split_pages(sample.ctx, self.params.page_tokens)
        script = [INTRO] + [PAGE.format(k=k, n=len(pages), text=p) for k, p in enumerate(pages, start=1)]
        answer_line = len(script) - 1
        script.append(OPTIONS_INTRO.format(n=len(openings)))
        script += [OPTION.format(k=k, text=text.strip()) for k, (_, text) in enumerate(openings, start=1)]
        script.append(QUESTION)
        waits = [Wait() for _ in script]
        if self.params.options_at_percent:
            waits[answer_line] = Wait(percentage_finished=self.params.options_at_percent)
        return self.make_example(
            index, script, [False] * (len(script) - 1) + [True], [str(answer)], waits=waits,
            oracle_answers=[str(answer)],
            extra={"sample": sample_id, "answer_line": answer_line, "options": len(openings)},
        )

    # -- gaps and scoring -----------------------------------------------------------------------------
    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """The chapter's last page: the openings are judged against how the chapter ends."""
        line = example.extra.get("answer_line")
        if not isinstance(line, int) or not 0 <= line < len(example.script):
            # A definition without `extra`: the last page is two lines before "Option 1".
            first_option = next((i for i, s in enumerate(example.script) if s.startswith("Option 1")), None)
            if first_option is None or first_option < 2:
                return super().answer_statement_idx(example)
            line = first_option - 2
        return line, len(example.script[line])

    @staticmethod
    def _options(example: TestExample) -> int:
        n = example.extra.get("options")
        if isinstance(n, int) and 1 < n <= MAX_OPTIONS:
            return n
        counted = sum(1 for s in example.script if re.match(r"Option [1-9]:", s))
        return counted if counted > 1 else 6

    @staticmethod
    def rule_verdict(reply: str, answer: str, options: int) -> tuple[float, str, bool]:
        """(score, reason, conclusive)."""
        right = int(answer.strip())
        named = option_numbers(reply, options)
        if named == [right]:
            return 1.0, f"The answer picks option {right}, the real next chapter.", True
        if not named:
            return 0.0, f"The answer names no option number (the real one is {right}).", False
        if right in named:
            return 0.0, f"The answer names options {named}, not only the real one, {right}.", False
        return 0.0, f"The answer picks option {named[0] if len(named) == 1 else named}; the real one is {right}.", True

    def _verdict(self, example: TestExample, responses: list[str]) -> tuple[float, str, bool]:
        return self.rule_verdict(responses[0] if responses else "", str(example.expected_responses[0]),
                                 self._options(example))

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        score, reason, conclusive = self._verdict(example, responses)
        return score, 1.0, [reason if conclusive else f"{reason} Inconclusive by rules; no judge, so it scores {score:g}."]

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        score, reason, conclusive = self.rule_verdict(responses[0] if responses else "", str(expected_answers[0]), 6)
        return score, 1.0, [reason if conclusive else f"{reason} Inconclusive by rules; no judge, so it scores {score:g}."]

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        score, reason, conclusive = self._verdict(example, responses)
        if conclusive or judge is None:
            return TestOutcome(*self.evaluate_example(example, questions, responses))
        n = self._options(example)
        verdict = await judge.grade(questions[0] if questions else QUESTION, f"Option {example.expected_responses[0]}",
                                    responses[0] if responses else "", context=CONTEXT.format(n=n))
        return TestOutcome(verdict.score, 1.0, [f"{reason} Inconclusive by rules; judge {verdict.model}: "
                                                f"{verdict.score:g} ({verdict.reason})."], verdicts=[verdict])
