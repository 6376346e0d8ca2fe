"""Import the GoodAI LTM Benchmark's test definitions, so this harness runs the very same tests.

The reference benchmark saves a run's tests as `<Dataset Name>/<id>.def.json`, one folder per
dataset, next to the run's `config.yml`. `import_goodai` turns such a folder into this harness's
definitions (`TestExample` JSON) plus a config, in a run folder:

    results/<run>/config.yml                     the run's config for this harness
    results/<run>/definitions/manifest.json      marked as imported (kept whatever the seed or code)
    results/<run>/definitions/<dataset>/<id>.def.json

so that `run -c results/<run>/config.yml` runs them unchanged (with any agent, span or seed).

Each reference dataset folder has one converter: it maps the folder to a dataset of this harness
and fills what that dataset's scoring needs (`extra`, oracle answers) from the reference test. A
folder without a converter is reported and skipped, never guessed; add a converter to support it.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ltm_harness._runner.config import RunConfig, describe_validation_error
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.definitions import Manifest, fingerprint, write_definitions
from ltm_harness._errors import DefinitionError
from ltm_harness._authoring.example import TestExample, Wait
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._store.files import write_text
from ltm_harness._store.layout import RunFolder, definition_path

CONFIG_FILE = "config.yml"


# -- the reference's files ------------------------------------------------------------------------------
class ReferenceWait(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tokens: int = Field(default=0, ge=0)
    time: float = Field(default=0.0, ge=0)
    percentage_finished: float = Field(default=0.0, ge=0, le=100)


class ReferenceTest(BaseModel):
    """A reference `*.def.json`. Fields this harness has no use for are refused, so a format change shows."""

    model_config = ConfigDict(extra="forbid")
    script: list[str]
    is_question: list[bool]
    waits: list[ReferenceWait] = Field(default_factory=list)
    expected_responses: list[Any] = Field(default_factory=list)
    can_be_interleaved: bool = True
    is_temporal: bool = False
    uses_callback: bool = False

    @field_validator("expected_responses", mode="before")
    @classmethod
    def _one_answer_as_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v  # e.g. Locations: "They are in the same location."


class ReferenceDatasetEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ReferenceDatasets(BaseModel):
    model_config = ConfigDict(extra="allow")
    args: dict[str, Any] = Field(default_factory=dict)
    datasets: list[ReferenceDatasetEntry] = Field(default_factory=list)


class ReferenceRunSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    run_name: str = ""
    incompatibilities: list[list[str]] = Field(default_factory=list)


class ReferenceConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    config: ReferenceRunSection = Field(default_factory=ReferenceRunSection)
    datasets: ReferenceDatasets = Field(default_factory=ReferenceDatasets)


# -- converters: one per reference dataset folder ----------------------------------------------------
@dataclass
class Converted:
    """A reference test in this harness's terms (dataset name and example id are set by the importer)."""

    script: list[str]
    is_question: list[bool]
    waits: list[Wait]
    expected: list[Any]
    oracle: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


ConvertFn = Callable[[ReferenceTest], Converted]


@dataclass(frozen=True)
class Converter:
    folder: str  # the reference's dataset folder, e.g. "Locations Directions"
    dataset: str  # this harness's dataset, e.g. "locations_directions"
    config_name: str  # the dataset's name in the reference's config.yml
    convert: ConvertFn


def _plain(ref: ReferenceTest, expected: list[Any] | None = None, oracle: list[str] | None = None,
           extra: dict[str, Any] | None = None) -> Converted:
    waits = [Wait(**w.model_dump()) for w in ref.waits] or [Wait() for _ in ref.script]
    exp = ref.expected_responses if expected is None else expected
    return Converted(list(ref.script), list(ref.is_question), waits, exp,
                     oracle if oracle is not None else [str(e) for e in exp], extra or {})


def _stated(lines: list[str], patterns: list[str]) -> list[str] | None:
    """The value each statement line gives, by the reference's templates; None if a line fits none."""
    values = []
    for line in lines:
        for p in patterns:
            m = re.fullmatch(p, line.strip())
            if m:
                values.append(m.group(1).strip())
                break
        else:
            return None
    return values


def _latest_value(patterns: list[str]) -> ConvertFn:
    def convert(ref: ReferenceTest) -> Converted:
        statements = [line for line, q in zip(ref.script, ref.is_question) if not q]
        stated = _stated(statements, patterns)
        return _plain(ref, extra={"stated": stated} if stated else {})
    return convert


COLOUR_LINES = [r"My favourite colour is (.+)\.", r"(.+) is my favourite colour\.",
                r"My favourite colour could be described as (.+)\.", r"The name of my favourite colour is (.+)\."]
NAME_LINES = [r"My name is (.+)\.", r"Refer to me as (.+)\.", r"Start calling me by my name which is (.+)\.",
              r"(.+) is my name\.", r"(.+) is what I am called\.", r"My name has changed to (.+)\."]


def _name_list(ref: ReferenceTest) -> Converted:
    return _plain(ref, oracle=[json.dumps([str(n) for n in ref.expected_responses])])


def _shopping(ref: ReferenceTest) -> Converted:
    items = []
    for entry in ref.expected_responses:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], int)):
            raise ValueError(f"expected_responses: {entry!r} is not an [item, quantity] pair")
        items.append({"item": str(entry[0]), "quantity": entry[1]})
    return _plain(ref, oracle=[json.dumps(items)])


def _jokes_question() -> str:
    """The jokes dataset's question template (with its `{elapsed}` placeholder)."""
    module = _dataset_module("jokes")
    question = getattr(module, "QUESTION", None)
    if not isinstance(question, str) or "{elapsed}" not in question:
        raise DefinitionError("datasets/jokes.py has no QUESTION template with {elapsed}; the jokes importer needs it")
    return question


def _jokes(ref: ReferenceTest) -> Converted:
    # The reference's jokes definitions lack the question line: it is decided at run time, from the clock.
    converted = _plain(ref)
    if len(ref.is_question) == len(ref.script) + 1 and ref.is_question[-1] and not any(ref.is_question[:-1]):
        converted.script.append(_jokes_question())
        if len(converted.waits) == len(ref.script):
            converted.waits.append(Wait())
    if not ref.expected_responses or ref.expected_responses[0] not in converted.script[:-1]:
        raise ValueError("expected_responses[0] must be one of the jokes told")
    converted.oracle = [str(ref.expected_responses[0])]
    return converted


_ASKED = re.compile(r"Where will (\w+) look for the ([\w ]+?)\?")
_EXITED = "{who} exited the "


def _sallyanne(ref: ReferenceTest) -> Converted:
    """The answer line of a false-belief question: the asked person's last exit before the object is moved."""
    extra: dict[str, Any] = {}
    asked = _ASKED.search(ref.script[-1])
    moved = next((i for i, line in enumerate(ref.script) if " moved the " in line), None)
    if asked and moved is not None:
        exits = [i for i, line in enumerate(ref.script[:moved]) if _EXITED.format(who=asked.group(1)) in line]
        if exits:
            extra = {"question_type": "theory_of_mind", "answer_line": exits[-1]}
    answer = str(ref.expected_responses[0]) if ref.expected_responses else ""
    return _plain(ref, oracle=[json.dumps({"answer": answer})], extra=extra)


def _prospective_memory(ref: ReferenceTest) -> Converted:
    entry = ref.expected_responses[0] if ref.expected_responses else None
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], int)):
        raise ValueError("expected_responses must be [[quote, author, n]]")
    return _plain(ref, oracle=["OK, I will do that."])


def _trigger_response(ref: ReferenceTest) -> Converted:
    return _plain(ref, oracle=[str(e) for e in ref.expected_responses])


_SPY_TOPICS = [("time", re.compile(r"^[^:]+: The time we will meet is (.+?)\.?$")),
               ("place", re.compile(r"^[^:]+: We will rendezvous (.+?)\.?$")),
               ("thing", re.compile(r"^[^:]+: Bring to the meeting (.+?)\.?$"))]


def _spy_meeting(ref: ReferenceTest) -> Converted:
    messages = [line for line, q in zip(ref.script[1:], ref.is_question[1:]) if not q]
    if len(messages) != len(ref.expected_responses):
        raise ValueError(f"{len(messages)} messages but {len(ref.expected_responses)} lists of expected meanings")
    topics, codes = [], []
    for line in messages:
        for topic, pattern in _SPY_TOPICS:
            m = pattern.match(line)
            if m:
                topics.append(topic)
                codes.append(m.group(1))
                break
        else:
            raise ValueError(f"message {line!r} is not a time, place or thing message of the reference")
    expected = [[str(k) for k in keywords] for keywords in ref.expected_responses]
    first = dict(zip(topics, (k[0] for k in expected)))
    oracle = f"We meet at {first.get('time', '')}, at the {first.get('place', '')}, and I should bring this: {first.get('thing', '')}."
    # The reference's meanings are its own lists: nothing else is known to be a wrong meaning.
    return _plain(ref, expected=expected, oracle=[oracle],
                  extra={"topics": topics, "codes": codes, "rivals": [[] for _ in topics]})


_ROUTE_NOTE = "(Just an example"


def _locations_directions(ref: ReferenceTest) -> Converted:
    read_moves = getattr(_dataset_module("locations_directions"), "read_moves")
    text = str(ref.expected_responses[0]) if ref.expected_responses else ""
    route = "\n".join(line for line in text.splitlines() if not line.startswith(_ROUTE_NOTE))
    moves = read_moves(route).moves
    statements = sum(1 for q in ref.is_question if not q)
    if len(moves) != statements - 1:
        raise ValueError(f"the expected route has {len(moves)} steps with a distance and a direction, "
                         f"but the test describes {statements} places")
    return _plain(ref, oracle=[route], extra={"moves": [[int(d) if float(d).is_integer() else d, r] for d, r in moves]})


def _locations(ref: ReferenceTest) -> Converted:
    read_moves = getattr(_dataset_module("locations"), "read_moves")
    answer = ref.expected_responses[0] if ref.expected_responses else ""
    answer = str(answer[0] if isinstance(answer, list) and answer else answer)
    moves = read_moves(answer).moves
    extra = {"distance": int(moves[0][0]) if float(moves[0][0]).is_integer() else moves[0][0],
             "direction": moves[0][1]} if len(moves) == 1 else {}
    return _plain(ref, expected=[answer], oracle=[answer], extra=extra)


def _chapterbreak(ref: ReferenceTest) -> Converted:
    options = [i for i, line in enumerate(ref.script) if re.match(r"Option [1-9]:", line)]
    if len(options) < 2 or options[0] < 2:
        raise ValueError("no numbered options after the chapter's pages")
    answer = str(ref.expected_responses[0]).strip() if ref.expected_responses else ""
    if not answer.isdigit() or not 1 <= int(answer) <= len(options):
        raise ValueError(f"expected_responses[0] {answer!r} is not an option number 1..{len(options)}")
    return _plain(ref, expected=[answer], oracle=[answer],
                  extra={"answer_line": options[0] - 2, "options": len(options)})


def _gpt_generated(ref: ReferenceTest) -> Converted:
    """Facts (one or more lines), then questions, one expected answer each (an LLM judge scores them best)."""
    questions = sum(ref.is_question)
    if not questions or len(ref.expected_responses) != questions:
        raise ValueError(f"{questions} questions but {len(ref.expected_responses)} expected answers")
    answers = [str(a) for a in ref.expected_responses]
    return _plain(ref, expected=answers, oracle=answers)


CONVERTERS: list[Converter] = [
    Converter("Colours", "colours", "colours", _latest_value(COLOUR_LINES)),
    Converter("Names", "names", "names", _latest_value(NAME_LINES)),
    Converter("NameList", "name_list", "name_list", _name_list),
    Converter("Shopping", "shopping", "shopping", _shopping),
    Converter("Jokes", "jokes", "jokes", _jokes),
    Converter("SallyAnne", "sallyanne", "sallyanne", _sallyanne),
    Converter("Prospective Memory", "prospective_memory", "prospective_memory", _prospective_memory),
    Converter("Trigger Response", "trigger_response", "trigger_response", _trigger_response),
    Converter("Spy Meeting", "spy_meeting", "spy_meeting", _spy_meeting),
    Converter("Locations Directions", "locations_directions", "locations_directions", _locations_directions),
    Converter("Locations", "locations", "locations", _locations),
    Converter("ChapterBreak", "chapterbreak", "chapterbreak", _chapterbreak),
    Converter("Delayed Recall", "delayed_recall", "delayed_recall", _gpt_generated),
    Converter("Instruction Recall", "instruction_recall", "instruction_recall", _gpt_generated),
    Converter("How to Think", "how_to_think", "how_to_think", _gpt_generated),
    Converter("Conflicting Personal Information", "conflicting_personal_info", "conflicting_personal_info",
              _gpt_generated),
]
# Reference folders that cannot be imported, and why (reported, never guessed).
NOT_YET: dict[str, tuple[str, str]] = {
    "Restaurant": ("restaurant", "the reference writes these tests during its run and stores no lines for them; "
                                 "run this harness's 'restaurant' dataset in a run of its own"),
}


def _dataset_module(name: str) -> Any:
    cls = known_datasets().get(name)
    if cls is None:
        raise DefinitionError(f"dataset {name!r} is not available; its importer needs it")
    return sys.modules[cls.__module__]


# -- the import ------------------------------------------------------------------------------------------
@dataclass
class FolderReport:
    folder: str
    dataset: str | None
    tests: int
    status: str  # "imported" | "unknown" | "unsupported"
    note: str = ""


@dataclass
class ImportResult:
    run_dir: Path
    config_path: Path
    folders: list[FolderReport]
    dropped_args: list[str]

    @property
    def skipped(self) -> list[FolderReport]:
        return [f for f in self.folders if f.status != "imported"]

    @property
    def tests(self) -> int:
        return sum(f.tests for f in self.folders if f.status == "imported")


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _safe_id(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "test"


def default_run_name(source: Path, reference_name: str) -> str:
    base = reference_name or source.resolve().name
    return "goodai-" + (re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-") or "import")


def read_reference_config(source: Path) -> ReferenceConfig | None:
    path = source / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        raise DefinitionError(f"{path}: not a valid YAML file; fix it or remove it and pass --span") from None
    try:
        return ReferenceConfig.model_validate(raw if isinstance(raw, dict) else {})
    except ValidationError as exc:
        raise DefinitionError(describe_validation_error(str(path), exc)) from None


def _read_test(path: Path) -> ReferenceTest:
    try:
        return ReferenceTest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise DefinitionError(f"{path}: {where}: {err['msg']}; it is not a test definition of the GoodAI LTM Benchmark, "
                        "fix or remove it") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file; it is not a test definition of the GoodAI LTM Benchmark, "
                        "remove it") from None


def convert_folder(folder: Path, converter: Converter) -> list[TestExample]:
    examples = []
    for path in sorted(folder.glob("*.def.json"), key=lambda p: _natural(p.name)):
        ref = _read_test(path)
        try:
            c = converter.convert(ref)
            example = TestExample(
                dataset_name=converter.dataset, example_id=_safe_id(path.name.removesuffix(".def.json")),
                script=c.script, is_question=c.is_question, waits=c.waits, expected_responses=c.expected,
                uses_callback=ref.uses_callback, is_temporal=ref.is_temporal, can_be_interleaved=ref.can_be_interleaved,
                oracle_answers=c.oracle, extra={"imported_from": f"{folder.name}/{path.name}", **c.extra},
            )
        except (ValueError, ValidationError, IndexError, KeyError) as exc:
            msg = exc.errors()[0]["msg"].removeprefix("Value error, ") if isinstance(exc, ValidationError) else str(exc)
            raise DefinitionError(f"{path}: cannot be read as a {converter.folder} test ({msg})") from None
        examples.append(example)
    return examples


def _dataset_args(cls: type[DatasetInterface], args: dict[str, Any], dropped: list[str], where: str) -> dict[str, Any]:
    """The reference's args that this dataset's Params accept (the imported tests do not depend on them)."""
    kept: dict[str, Any] = {}
    for key, value in args.items():
        if key in ("memory_span", "dataset_examples"):
            continue
        try:
            cls.Params(**{**kept, key: value})
        except (ValidationError, TypeError):
            dropped.append(f"{where}.{key}")
            continue
        kept[key] = value
    return kept


def import_goodai(source: Path, results_root: Path, run_name: str | None = None, span: int | None = None,
                  force: bool = False) -> ImportResult:
    """Convert the reference definitions in `source` into a run folder under `results_root`."""
    if not source.is_dir():
        raise DefinitionError(f"{source}: not a folder; give the folder that holds the reference's dataset folders "
                        "(e.g. data/tests/<run>/definitions)")
    ref_config = read_reference_config(source)
    memory_span = span or (ref_config.datasets.args.get("memory_span") if ref_config else None)
    if not isinstance(memory_span, int) or memory_span < 500:
        raise DefinitionError(f"{source}: no {CONFIG_FILE} with datasets.args.memory_span (>= 500) to take the memory span "
                        "from; pass --span N")
    name = run_name or default_run_name(source, ref_config.config.run_name if ref_config else "")
    target = RunFolder.named(results_root, name)
    run_dir, definitions = target.path, target.definitions
    if definitions.exists() and not force:
        raise DefinitionError(f"{definitions} already exists; pass --force to replace it, or another --run-name")

    by_folder = {c.folder: c for c in CONVERTERS}
    registry = known_datasets()
    folders = sorted((p for p in source.iterdir() if p.is_dir()), key=lambda p: p.name)
    reports: list[FolderReport] = []
    converted: dict[str, tuple[Converter, list[TestExample]]] = {}
    for folder in folders:
        files = list(folder.glob("*.def.json"))
        if not files:
            continue
        converter = by_folder.get(folder.name)
        if converter is None:
            if folder.name in NOT_YET:
                dataset, why = NOT_YET[folder.name]
                reports.append(FolderReport(folder.name, dataset, 0, "unsupported", why))
            else:
                reports.append(FolderReport(folder.name, None, 0, "unknown", "no converter for this dataset folder"))
            continue
        if converter.dataset not in registry:
            reports.append(FolderReport(folder.name, converter.dataset, 0, "unsupported",
                                        f"the {converter.dataset!r} dataset is not available"))
            continue
        examples = convert_folder(folder, converter)
        converted[converter.dataset] = (converter, examples)
        reports.append(FolderReport(folder.name, converter.dataset, len(examples), "imported"))
    if not converted:
        known = ", ".join(sorted(by_folder))
        raise DefinitionError(f"{source}: no reference dataset folder with *.def.json files that this harness can import "
                        f"(known folders: {known}); give the reference's definitions folder, e.g. "
                        "data/tests/<run>/definitions")

    # The run's config: the reference's order, args and incompatibilities, for the datasets imported.
    order: list[str] = []
    ref_args: dict[str, dict[str, Any]] = {}
    by_config_name = {c.config_name: c.dataset for c in CONVERTERS}
    for entry in ref_config.datasets.datasets if ref_config else []:
        ours = by_config_name.get(entry.name)
        if ours in converted and ours not in order:
            order.append(ours)
            ref_args[ours] = entry.args
    order += sorted(d for d in converted if d not in order)
    dropped = [f"datasets.args.{key}" for key in (ref_config.datasets.args if ref_config else {})
               if key not in ("memory_span", "dataset_examples")]
    entries: list[tuple[str, dict[str, Any]]] = []
    for dataset in order:
        args = _dataset_args(registry[dataset], ref_args.get(dataset, {}), dropped, f"datasets.datasets[{dataset}].args")
        entries.append((dataset, args))
    pairs = []
    for pair in ref_config.config.incompatibilities if ref_config else []:
        mapped = [by_config_name.get(n, n) for n in pair]
        if all(n in registry for n in mapped):
            pairs.append(mapped)
    counts = {d: len(exs) for d, (_, exs) in converted.items()}
    raw_config = {
        "config": {"run_name": name, "seed": 0, "incompatibilities": pairs},
        "datasets": {"args": {"memory_span": memory_span, "dataset_examples": max(counts.values())},
                     "datasets": [{"name": d, **({"args": a} if a else {})} for d, a in entries]},
    }
    try:
        RunConfig.model_validate(raw_config)
    except ValidationError as exc:  # pragma: no cover - built from validated parts
        raise DefinitionError(describe_validation_error("the imported config", exc)) from None
    built = [(registry[d](memory_span=memory_span, seed=0, **a), counts[d]) for d, a in entries]

    # Write: definitions (replacing an older import when forced, with the results made from it), manifest, config.
    if definitions.exists():
        shutil.rmtree(definitions)
    target.clear()
    every = [example for dataset in order for example in converted[dataset][1]]
    write_definitions(definitions, every, Manifest(fingerprint=fingerprint(built), tests=[e.unique_id for e in every],
                                                   imported_from=str(source.resolve())))
    config_path = target.imported_config
    header = (f"# Written by `ltm-harness import-goodai` from {source.resolve()}.\n"
              f"# The tests are the imported ones in {definitions}; run them with:\n"
              f"#   python -m ltm_harness run -c {config_path}\n")
    write_text(config_path, header + yaml.safe_dump(raw_config, sort_keys=False))
    return ImportResult(run_dir, config_path, reports, dropped)
