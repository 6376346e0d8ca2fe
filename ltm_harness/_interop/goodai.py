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

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.definitions import Manifest, fingerprint, write_definitions
from ltm_harness._authoring.example import TestExample
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.goodai_converters import CONVERTERS, NOT_YET, Converter
from ltm_harness._interop.goodai_files import CONFIG_FILE, read_reference_config, read_test
from ltm_harness._runner.config import RunConfig, describe_validation_error
from ltm_harness._store.files import write_text, writing
from ltm_harness._store.layout import RunFolder


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


def convert_folder(folder: Path, converter: Converter) -> list[TestExample]:
    examples = []
    for path in sorted(folder.glob("*.def.json"), key=lambda p: _natural(p.name)):
        ref = read_test(path)
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

    # Write, holding the folder (no run may be writing there): definitions (replacing an older import when forced,
    # with the results made from it), manifest, config.
    config_path = target.imported_config
    with target.lock():
        if definitions.exists():
            with writing(definitions):
                shutil.rmtree(definitions)
        target.clear()
        every = [example for dataset in order for example in converted[dataset][1]]
        write_definitions(definitions, every, Manifest(fingerprint=fingerprint(built),
                                                       tests=[e.unique_id for e in every],
                                                       imported_from=str(source.resolve())))
        header = (f"# Written by `ltm-harness import-goodai` from {source.resolve()}.\n"
                  f"# The tests are the imported ones in {definitions}; run them with:\n"
                  f"#   python -m ltm_harness run -c {config_path}\n")
        write_text(config_path, header + yaml.safe_dump(raw_config, sort_keys=False))
    return ImportResult(run_dir, config_path, reports, dropped)
