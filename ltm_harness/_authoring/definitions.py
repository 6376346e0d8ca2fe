"""Test definitions on disk: generated once from the seed, saved as JSON, reused by later runs.

A definition bigger than `COMPRESS_ABOVE` bytes of JSON (a benchmark's haystack) is kept zstd-compressed
(`<id>.def.json.zst`). The tests of a dataset whose examples are conversations of their own (LoCoMo,
LongMemEval) are written as they are generated and read back one at a time when their session starts
(`LazyExamples`), so that a run holds in memory only the conversations it is playing. Each set generated is
also kept in the user cache for the next run folder with the same settings, data and code (`definitions_cache`).

A conversation's text (tens of MB for a BEAM-10M chat) is held once at a time: generation lets the dataset's test go
before reading its copy back from the JSON, makes the JSON as bytes (never also a str), and holds neither test nor JSON
while the next test is made; a compressed definition is parsed as a stream, a value at a time, never held whole as
JSON beside the test made from it (`_read_packed`). So a run's peak memory does not grow with the number of such
conversations (tests/core/test_memory_flat.py; benchmarks/beam_scale.py measures it).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Iterator, Sequence, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ltm_harness._guard.files import CHUNK, NotARegularFile, hash_file, read_bytes, read_text
from ltm_harness._guard.jsonsafe import TooDeep, build
from ltm_harness._guard.limits import MAX_FILE_BYTES, clip, exception_line, kind_of
from ltm_harness._authoring import definitions_cache
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import DefinitionError, LTMError, option, option_name
from ltm_harness._authoring.example import DEFINITION_FORMAT, TestExample
from ltm_harness._store.files import first_error, write_bytes, write_model, write_text, writing
from ltm_harness._store.layout import MANIFEST, compressed, definition_path
from ltm_harness._tokens import plural

COMPRESS_ABOVE = 256 * 1024  # bytes of JSON above which a definition is kept compressed


class Manifest(BaseModel):
    format: int = DEFINITION_FORMAT
    fingerprint: str
    tests: list[str]
    imported_from: str | None = None  # set by import-goodai: fixed tests, kept whatever the seed, span or code


def _module_file(dataset: DatasetInterface) -> str | None:
    return getattr(sys.modules.get(type(dataset).__module__), "__file__", None)


def _named(dataset: DatasetInterface) -> str:
    """The dataset as errors about its code name it: its name and the file of its module."""
    path = _module_file(dataset)
    return f"dataset {clip(dataset.name)}" + (f" ({path})" if path else "")


def _source_files(dataset: DatasetInterface) -> list[Path]:
    """What the dataset's `source_files()` returns, checked to be a list of paths."""
    try:
        files = dataset.source_files()
    except LTMError:
        raise
    except Exception as exc:
        raise DefinitionError(f"{_named(dataset)}: source_files() raised {exception_line(exc)}; fix it") from exc
    if not isinstance(files, (list, tuple)) or not all(isinstance(f, (str, Path)) for f in files):
        raise DefinitionError(f"{_named(dataset)}: source_files() returned {kind_of(files)}, not a list of paths; "
                              "return a list of pathlib.Path")
    return [Path(f) for f in files]


def _source_hash(dataset: DatasetInterface) -> str:
    """A hash of the dataset's module file and of the files it names in `source_files()` (e.g. the stored
    sets of a GPT-generated dataset): editing any of them regenerates its definitions.
    Each file is hashed in chunks (a data file of GBs costs one chunk of memory), after the one check of
    `_guard.files` (a FIFO or a device is refused, never opened)."""
    path = _module_file(dataset)
    h = hashlib.sha256()
    if path:
        hash_file(h, Path(path))
    extras = _source_files(dataset)
    for extra in extras:
        h.update(extra.name.encode() + b"\0")
        try:
            hash_file(h, extra)
        except FileNotFoundError:
            h.update(b"(missing)")
        except OSError as exc:
            raise DefinitionError(f"{_named(dataset)}: {extra}, one of its source_files(), cannot be read "
                                  f"({exc.strerror or exc}); check the file") from None
    return h.hexdigest()[:16] if path or extras else ""


def _problem(exc: ValidationError) -> str:
    """A TestExample's first validation problem, in words."""
    err = exc.errors()[0]
    if err["type"] == "json_invalid" and "out of range" in str(err["msg"]):
        return f"it holds a number too long to be read back (more than {sys.get_int_max_str_digits():,} digits)"
    return first_error(exc).removeprefix("(top level): ")


_END = object()
T = TypeVar("T")


def _user_code(named: str, what: str, call: Callable[[], T]) -> T:
    """`call()`, a step of the dataset's generate_examples; whatever it raises but a user error is one DefinitionError."""
    try:
        return call()
    except LTMError:
        raise
    except ValidationError as exc:  # a TestExample made with wrong fields
        raise DefinitionError(f"{named}: {what} made an invalid test ({_problem(exc)}); fix its "
                              "generate_examples") from exc
    except Exception as exc:
        raise DefinitionError(f"{named}: {what} raised {exception_line(exc)}; fix it (--debug shows where)") from exc


def generate(dataset: DatasetInterface, n: int) -> Iterator[tuple[TestExample, bytes]]:
    """The tests `dataset.generate_examples(n)` makes (a list, or any iterable: each is taken as it comes), each
    checked and with the JSON its definition file holds: a TestExample of this dataset with an id of its own, read
    back from that JSON, so that the run that generates the tests and every later run that reads them use the same
    tests. Whatever else the user's code returns or raises is one DefinitionError naming the dataset's file, the test
    and the fix. (How many there are is the caller's to check.)"""
    named = _named(dataset)
    made = _user_code(named, "generate_examples", lambda: dataset.generate_examples(n))
    if isinstance(made, (str, bytes, dict)) or not isinstance(made, Iterable):
        raise DefinitionError(f"{named}: generate_examples returned {kind_of(made)}, not a list of tests; return a list "
                              "of self.make_example(...)")
    items = iter(made)
    first: dict[str, int] = {}
    for k in itertools.count():
        example = _user_code(named, "generate_examples", lambda: next(items, _END))
        if example is _END:
            return
        if not isinstance(example, TestExample):
            raise DefinitionError(f"{named}: generate_examples gave {kind_of(example)} as test {k}, not a TestExample; "
                                  "make each test with self.make_example(...)")
        try:
            data = _json(example, warnings=False)
            # the dataset's test is let go before its copy is read back: a conversation's text is held once, not twice
            example = None
            example = TestExample.model_validate_json(data)
        except ValidationError as exc:  # a field set to a wrong value after the test was made, a huge number
            raise DefinitionError(f"{named}: test {k}: {_problem(exc)}; fix its generate_examples") from None
        except ValueError as exc:  # a value JSON cannot hold (an object, a lone surrogate)
            raise DefinitionError(f"{named}: test {k} cannot be saved as JSON ({exception_line(exc)}); fix its "
                                  "generate_examples") from None
        if example.dataset_name != dataset.name:
            raise DefinitionError(f"{named}: test {k} says it belongs to the dataset {clip(example.dataset_name)}; make "
                                  "it with self.make_example(...), which sets dataset_name")
        if example.example_id in first:
            raise DefinitionError(f"{named}: tests {first[example.example_id]} and {k} have the same example id "
                                  f"{clip(example.example_id)}; give each test its own (make_example's index)")
        first[example.example_id] = k
        yield example, data
        del example, data  # not held while the next test is made (a benchmark's conversation each)


def fingerprint(datasets: list[tuple[DatasetInterface, int]]) -> str:
    spec = [
        {"name": d.name, "span": d.memory_span, "seed": d.seed,
         "params": d.params.model_dump(mode="json", exclude=set(d.scoring_args)), "n": n,
         "code": _source_hash(d)}
        for d, n in datasets
    ]
    blob = json.dumps({"format": DEFINITION_FORMAT, "datasets": spec}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def write_definitions(folder: Path, examples: list[TestExample], manifest: Manifest) -> None:
    """Save tests and their manifest in `folder` (the manifest last: without it the folder is never reused)."""
    for example in examples:
        write_definition(folder, example)
    write_model(folder / MANIFEST, manifest)


def _json(example: TestExample, warnings: bool = True) -> bytes:
    """A test's definition file as UTF-8 bytes (what `model_dump_json(indent=2)` and a newline say, made as bytes, so
    that a benchmark's conversation of tens of MB is never also held as a str)."""
    return example.__pydantic_serializer__.to_json(example, indent=2, warnings=warnings) + b"\n"


def _big(data: bytes) -> bool:
    """Whether a definition is kept compressed: its JSON longer than `COMPRESS_ABOVE` characters (its bytes decoded
    only when that cannot be told from their number: a character is 1 to 4 bytes)."""
    if len(data) <= COMPRESS_ABOVE:
        return False
    return len(data) > 4 * COMPRESS_ABOVE or len(data.decode("utf-8")) > COMPRESS_ABOVE


def write_definition(folder: Path, example: TestExample, data: bytes | None = None) -> None:
    """Save one test (compressed when big); `data`: its JSON, when already made."""
    try:
        path = definition_path(folder, example.dataset_name, example.example_id)
    except ValueError as exc:  # a name that would leave the folder
        raise DefinitionError(f"dataset {clip(example.dataset_name)}: test {clip(example.example_id)}: {exc}; "
                              "fix the dataset's name or example ids") from None
    if data is None:
        data = _json(example)
    if _big(data):
        import zstandard

        write_bytes(compressed(path), zstandard.ZstdCompressor(level=3).compress(data))
    else:
        write_bytes(path, data)


def read_definition(folder: Path, uid: str) -> TestExample:
    """One saved test by its unique id (`dataset/id`), checked; every problem is one DefinitionError line."""
    dataset_name, _, example_id = uid.partition("/")
    try:
        path = definition_path(folder, dataset_name, example_id)
    except ValueError as exc:  # a hand-edited manifest naming a file outside the folder
        raise DefinitionError(f"{folder / MANIFEST}: entry {clip(uid)}: {exc}; delete the folder to "
                              "regenerate") from None
    packed = compressed(path)
    try:
        if packed.is_file() and not path.is_file():
            path = packed
            example = _read_packed(packed)
        else:
            example = TestExample.model_validate_json(read_text(path))
    except FileNotFoundError:
        raise DefinitionError(f"{path}: listed in {folder / MANIFEST} but missing; delete the folder to regenerate") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file; fix the definition or delete the folder to regenerate") from None
    except OSError as exc:  # a FIFO or device in place of a definition, or unreadable
        raise DefinitionError(f"{path}: cannot be read ({exc.strerror or exc}); delete the folder to regenerate") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise DefinitionError(f"{path}: {where}: {msg}; fix the definition or delete the folder to regenerate") from None
    if (example.dataset_name, example.example_id) != (dataset_name, example_id):
        raise DefinitionError(f"{path}: dataset_name/example_id say {example.unique_id!r} but the file is {uid!r}; "
                              "fix them or delete the folder to regenerate")
    return example


class _Bounded:
    """A file object read through, refusing more than `MAX_FILE_BYTES` in all."""

    def __init__(self, reader: Any, path: Path) -> None:
        self.reader, self.path, self.total = reader, path, 0

    def read(self, n: int = -1) -> bytes:
        chunk: bytes = self.reader.read(n)
        self.total += len(chunk)
        if self.total > MAX_FILE_BYTES:
            raise _too_big(self.path)
        return chunk


def _too_big(path: Path) -> DefinitionError:
    return DefinitionError(f"{path}: decompresses to more than {MAX_FILE_BYTES:,} bytes; delete the folder to "
                           "regenerate")


def _read_packed(path: Path) -> TestExample:
    """The test of a compressed definition, parsed as a stream (ijson's C tokenizer) a value at a time: a benchmark's
    conversation (tens of MB) is held once, as the strings its test is made of, never also as its JSON text, nor in a
    buffer sized for the largest file allowed. What the stream parser cannot read (bad JSON, nesting past the bound,
    an integer past 64 bits) is parsed whole as every other definition is, so that it says the same. Bounded in size
    as any file read whole (as its frame states it, and as it is read)."""
    import ijson
    import zstandard

    packed = read_bytes(path)
    try:
        if zstandard.frame_content_size(packed) > MAX_FILE_BYTES:
            raise _too_big(path)
        try:
            with zstandard.ZstdDecompressor().stream_reader(packed) as reader:
                events = ijson.basic_parse(_Bounded(reader, path), use_float=True)
                if next(events, None) == ("start_map", None):
                    data: dict[str, Any] = build(events, {})
                    for _ in events:  # the parser refuses anything after the object
                        pass
                    return TestExample.model_validate(data)
        except (ijson.JSONError, TooDeep):
            pass
        with zstandard.ZstdDecompressor().stream_reader(packed) as reader:
            bounded = _Bounded(reader, path)
            raw = b"".join(iter(lambda: bounded.read(CHUNK), b""))
    except zstandard.ZstdError as exc:
        raise DefinitionError(f"{path}: not a complete zstd file ({exc}); delete the folder to regenerate") from None
    try:
        return TestExample.model_validate_json(raw)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid" and not _utf8(raw):
            raise DefinitionError(f"{path}: not a UTF-8 text file; fix the definition or delete the folder to "
                                  "regenerate") from None
        raise


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class LazyExamples(Sequence[TestExample]):
    """The saved tests of one dataset, read from `folder` each time one is asked for (never kept): for datasets
    whose examples are conversations of their own, which a run plays a few at a time."""

    def __init__(self, folder: Path, uids: list[str]) -> None:
        self.folder = folder
        self.uids = uids

    def __len__(self) -> int:
        return len(self.uids)

    @overload
    def __getitem__(self, index: int) -> TestExample: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TestExample]: ...

    def __getitem__(self, index: int | slice) -> TestExample | Sequence[TestExample]:
        if isinstance(index, slice):
            return [read_definition(self.folder, uid) for uid in self.uids[index]]
        return read_definition(self.folder, self.uids[index])

    def __iter__(self) -> Iterator[TestExample]:
        return (read_definition(self.folder, uid) for uid in self.uids)


def _reusable(manifest: Manifest, datasets: list[tuple[DatasetInterface, int]], fp: str) -> bool:
    """Made by these datasets (same config and code), or imported (import-goodai) for exactly these datasets."""
    if manifest.imported_from is None:
        return manifest.fingerprint == fp
    return {uid.split("/", 1)[0] for uid in manifest.tests} == {d.name for d, _ in datasets}


def definitions_fingerprint(folder: Path) -> str | None:
    """The fingerprint of the definitions in `folder` (None: there are none, or the manifest cannot be read)."""
    try:
        return Manifest.model_validate_json(read_text(folder / MANIFEST)).fingerprint
    except (OSError, ValidationError, UnicodeDecodeError):
        return None


def definitions_match(folder: Path, datasets: list[tuple[DatasetInterface, int]]) -> bool:
    """True when `folder` holds definitions made by these datasets (same config and code). A manifest that is there
    but cannot be read as a file (a FIFO, a device, a folder, too large) is a DefinitionError saying so: no code
    changed then."""
    try:
        manifest = Manifest.model_validate_json(read_text(folder / MANIFEST))
    except NotARegularFile as exc:
        raise DefinitionError(f"{folder / MANIFEST}: cannot be read ({exc.strerror}), so it is not the manifest this "
                              "harness wrote and the run's definitions cannot be checked; run it again with "
                              f"{option('overwrite')}") from None
    except (OSError, ValidationError, UnicodeDecodeError):
        return False
    return _reusable(manifest, datasets, fingerprint(datasets))


Examples = Sequence[TestExample]


def load_or_generate(folder: Path, datasets: list[tuple[DatasetInterface, int]]) -> tuple[dict[str, Examples], bool]:
    """The examples of every dataset, and whether they were reused: read from `folder` if made by the
    same config and dataset code, else generated and saved there (each as it comes)."""
    fp = fingerprint(datasets)
    manifest_path = folder / MANIFEST
    if manifest_path.exists():
        try:
            manifest = Manifest.model_validate_json(read_text(manifest_path))
        except OSError as exc:  # a FIFO, a device or a folder where the manifest should be
            raise DefinitionError(f"{manifest_path}: cannot be read ({exc.strerror or exc}); delete the folder to "
                                  "regenerate") from None
        except (ValidationError, UnicodeDecodeError):
            raise DefinitionError(f"{manifest_path}: not a definitions manifest of this harness; delete the folder to regenerate") from None
        if manifest.format > DEFINITION_FORMAT:
            raise DefinitionError(f"{manifest_path}: definitions format {manifest.format} is newer than this harness "
                            f"understands ({DEFINITION_FORMAT}); upgrade ltm-harness")
        if _reusable(manifest, datasets, fp):
            return _read_all(folder, manifest, datasets), True
        if manifest.imported_from is not None:  # never replaced by generated tests
            imported = ", ".join(sorted({uid.split("/", 1)[0] for uid in manifest.tests}))
            raise DefinitionError(f"{folder}: holds tests imported from {manifest.imported_from} for the datasets {imported}, "
                            f"not this config's; run them with {folder.parent / 'config.yml'} or use another "
                            f"{option_name('run_name')}")
    if folder.exists():
        with writing(folder):
            shutil.rmtree(folder)  # made by another config (or cut short): replaced as a whole
    cacheable = definitions_cache.cacheable([d for d, _ in datasets])
    if cacheable and definitions_cache.restore(folder, fp):  # made before by a run with the same settings, data, code
        try:
            restored = Manifest.model_validate_json(read_text(manifest_path))
            if restored.fingerprint == fp and restored.format == DEFINITION_FORMAT and restored.imported_from is None:
                return _read_all(folder, restored, datasets), False
        except (OSError, ValidationError, UnicodeDecodeError, DefinitionError):
            pass
        with writing(folder):
            shutil.rmtree(folder)  # not what it should be: made again
    generated: dict[str, Examples] = {}
    every: list[str] = []
    for dataset, n in datasets:
        kept: list[TestExample] = []
        uids: list[str] = []
        for example, data in generate(dataset, n):
            write_definition(folder, example, data)
            uids.append(example.unique_id)
            if not dataset.conversation_per_example:
                kept.append(example)
            del example, data  # a conversation of its own is read back when its session starts, not held till then
        if len(uids) != n:
            raise DefinitionError(f"{_named(dataset)}: generate_examples made {plural(len(uids), 'test')} "
                                  f"instead of {n}; fix its generate_examples")
        generated[dataset.name] = LazyExamples(folder, uids) if dataset.conversation_per_example else kept
        every += uids
    write_model(folder / MANIFEST, Manifest(fingerprint=fp, tests=every))
    if cacheable:
        definitions_cache.keep(folder, fp)
    return generated, False


def _read_all(folder: Path, manifest: Manifest, datasets: list[tuple[DatasetInterface, int]]) -> dict[str, Examples]:
    lazy = {d.name for d, _ in datasets if d.conversation_per_example}
    out: dict[str, list[TestExample]] = {d.name: [] for d, _ in datasets}
    uids: dict[str, list[str]] = {name: [] for name in lazy}
    for uid in manifest.tests:
        dataset_name, _, example_id = uid.partition("/")
        try:
            definition_path(folder, dataset_name, example_id)  # a safe name, before anything is read
        except ValueError as exc:  # a hand-edited manifest naming a file outside the folder
            raise DefinitionError(f"{folder / MANIFEST}: entry {clip(uid)}: {exc}; delete the folder to "
                                  "regenerate") from None
        if dataset_name in lazy:  # read when its conversation's turn comes
            uids[dataset_name].append(uid)
            continue
        example = read_definition(folder, uid)
        if dataset_name not in out:
            raise DefinitionError(f"{folder / MANIFEST}: lists {uid!r}, a dataset this config does not run; delete the folder to regenerate")
        out[dataset_name].append(example)
    return {name: LazyExamples(folder, uids[name]) if name in lazy else examples for name, examples in out.items()}
