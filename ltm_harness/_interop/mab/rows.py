"""MemoryAgentBench's rows, streamed from its parquet files: one row at a time (pyarrow's `iter_batches`), only the
columns the harness uses (never `haystack_sessions`), only the row groups holding a wanted source, so a split is
never in memory as a whole; a 1.44M-token recommendation row is the largest thing held.

Why pyarrow: it is already installed with HuggingFace `datasets` (which the test extra brings), reads a parquet
file incrementally by row group and column (`datasets.load_dataset` would convert every split into an Arrow cache
first, a second copy on disk), and needs nothing else; `huggingface_hub` is not needed either, a file of the hub is
a plain HTTPS download (`fetch`). It is the `mab` extra: without it, the dataset says the one line to install.

A row is checked as it is read: `context` a string, `questions` a list of strings, `answers` a list of lists of
strings (a list of strings is taken as one gold each), `metadata.source` a string; a row that is not shaped so is
one DefinitionError naming the file, the row and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, ValidationError

from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import problem

EXTRA = "pip install 'ltm-harness[mab]'"
METADATA_FIELDS = ("source", "qa_pair_ids", "question_ids", "question_types", "question_dates", "previous_events",
                   "keypoints", "demo")


class MabMetadata(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    source: str
    qa_pair_ids: list[str | None] | None = None
    question_ids: list[str | None] | None = None
    question_types: list[str | None] | None = None
    question_dates: list[str | None] | None = None
    previous_events: list[str | None] | None = None
    keypoints: list[str | None] | None = None
    demo: str | None = None


class MabRow(BaseModel):
    """One row: a context and its questions, `answers[i]` the accepted golds of `questions[i]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    split: str
    index: int  # the row's place in its file (0-based)
    context: str
    questions: list[str]
    answers: list[list[str]]
    metadata: MabMetadata

    @property
    def source(self) -> str:
        return self.metadata.source

    def pairs(self) -> list[tuple[str, list[str]]]:
        """The question/gold pairs as the reference makes them: the i-th question with the i-th answers when the row
        has more than one of each; otherwise one pair, its golds every answer of the row (flattened)."""
        if len(self.questions) > 1 and len(self.answers) > 1:
            return list(zip(self.questions, self.answers))
        return [(self.questions[0] if self.questions else "", [a for golds in self.answers for a in golds])]


def pyarrow_parquet() -> Any:
    """`pyarrow.parquet`, or one line naming the extra to install."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DefinitionError(f"memoryagentbench: reading its parquet files needs pyarrow; {EXTRA}") from None
    return pq


def open_parquet(path: Path) -> Any:
    """The parquet file at `path` (checked to be a regular file first), or one DefinitionError line."""
    why = problem(path, None)
    if why is not None:
        raise DefinitionError(f"memoryagentbench: {path} cannot be read ({why})")
    pq = pyarrow_parquet()
    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow's ArrowInvalid / OSError: not parquet, cut short
        raise DefinitionError(f"memoryagentbench: {path} is not a readable parquet file ({str(exc)[:120]}); it is "
                              "not a split of MemoryAgentBench (a cut download?)") from None


def check_split_file(path: Path) -> None:
    """DefinitionError unless `path` is a parquet file with MemoryAgentBench's columns (read from its footer only)."""
    f = open_parquet(path)
    names = set(f.schema_arrow.names)
    missing = [c for c in ("context", "questions", "answers", "metadata") if c not in names]
    if missing:
        raise DefinitionError(f"memoryagentbench: {path} has no column {missing[0]!r}; it is not a split of "
                              "MemoryAgentBench")


def _columns(f: Any) -> list[str]:
    meta = f.schema_arrow.field("metadata").type
    have = {meta.field(i).name for i in range(meta.num_fields)}
    return ["context", "questions", "answers", *(f"metadata.{k}" for k in METADATA_FIELDS if k in have)]


def sources_in(path: Path) -> list[tuple[str, int]]:
    """Each source of the file with its number of rows, in file order (reads the `metadata.source` column only)."""
    f = open_parquet(path)
    counts: dict[str, int] = {}
    for batch in f.iter_batches(batch_size=4096, columns=["metadata.source"]):
        for m in batch.column(0).to_pylist():
            s = str((m or {}).get("source"))
            counts[s] = counts.get(s, 0) + 1
    return list(counts.items())


def iter_rows(path: Path, split: str, sources: set[str] | None = None) -> Iterator[MabRow]:
    """The rows of a split file whose source is one of `sources` (None: every row), in file order, one at a time."""
    check_split_file(path)
    f = open_parquet(path)
    wanted_groups = []
    for g in range(f.num_row_groups):  # the source column of each row group, to skip groups with no wanted row
        column = f.read_row_group(g, columns=["metadata.source"]).column(0).to_pylist()
        if sources is None or any((m or {}).get("source") in sources for m in column):
            wanted_groups.append(g)
    offsets = [0]
    for g in range(f.num_row_groups):
        offsets.append(offsets[-1] + f.metadata.row_group(g).num_rows)
    columns = _columns(f)
    for g in wanted_groups:
        for k, batch in enumerate(f.iter_batches(batch_size=1, row_groups=[g], columns=columns)):
            meta = batch.column(batch.schema.get_field_index("metadata"))[0].as_py() or {}
            if sources is not None and meta.get("source") not in sources:
                continue
            record = batch.to_pylist()[0]
            yield _row(record, split, offsets[g] + k, path)


def _row(record: dict[str, Any], split: str, index: int, path: Path) -> MabRow:
    answers = record.get("answers")
    if isinstance(answers, list):
        answers = [a if isinstance(a, list) else [a] for a in answers]
    try:
        return MabRow.model_validate({"split": split, "index": index, "context": record.get("context"),
                                      "questions": record.get("questions"), "answers": answers,
                                      "metadata": record.get("metadata")})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DefinitionError(f"memoryagentbench: {path} row {index}: {where}: {err['msg']}; the file is not "
                              "shaped as MemoryAgentBench's") from None
