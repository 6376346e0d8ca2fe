"""Test definitions on disk: generated once from the seed, saved as JSON, reused by later runs."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ltm_harness._guard.files import read_text
from ltm_harness._guard.limits import clip
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import DefinitionError, option_name
from ltm_harness._authoring.example import DEFINITION_FORMAT, TestExample
from ltm_harness._store.files import write_model, write_text, writing
from ltm_harness._store.layout import MANIFEST, definition_path


class Manifest(BaseModel):
    format: int = DEFINITION_FORMAT
    fingerprint: str
    tests: list[str]
    imported_from: str | None = None  # set by import-goodai: fixed tests, kept whatever the seed, span or code


def _source_hash(dataset: DatasetInterface) -> str:
    """A hash of the dataset's module file and of the files it names in `source_files()` (e.g. the stored
    sets of a GPT-generated dataset): editing any of them regenerates its definitions."""
    path = getattr(sys.modules.get(type(dataset).__module__), "__file__", None)
    h = hashlib.sha256(Path(path).read_bytes() if path else b"")
    for extra in dataset.source_files():
        h.update(extra.name.encode() + b"\0" + (extra.read_bytes() if extra.is_file() else b"(missing)"))
    return h.hexdigest()[:16] if path or dataset.source_files() else ""


def fingerprint(datasets: list[tuple[DatasetInterface, int]]) -> str:
    spec = [
        {"name": d.name, "span": d.memory_span, "seed": d.seed, "params": d.params.model_dump(mode="json"), "n": n,
         "code": _source_hash(d)}
        for d, n in datasets
    ]
    blob = json.dumps({"format": DEFINITION_FORMAT, "datasets": spec}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def write_definitions(folder: Path, examples: list[TestExample], manifest: Manifest) -> None:
    """Save tests and their manifest in `folder` (the manifest last: without it the folder is never reused)."""
    for example in examples:
        try:
            path = definition_path(folder, example.dataset_name, example.example_id)
        except ValueError as exc:  # a name that would leave the folder
            raise DefinitionError(f"dataset {clip(example.dataset_name)}: test {clip(example.example_id)}: {exc}; "
                                  "fix the dataset's name or example ids") from None
        write_text(path, example.model_dump_json(indent=2) + "\n")
    write_model(folder / MANIFEST, manifest)


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
    """True when `folder` holds definitions made by these datasets (same config and code)."""
    try:
        manifest = Manifest.model_validate_json(read_text(folder / MANIFEST))
    except (OSError, ValidationError, UnicodeDecodeError):
        return False
    return _reusable(manifest, datasets, fingerprint(datasets))


def load_or_generate(folder: Path, datasets: list[tuple[DatasetInterface, int]]) -> tuple[dict[str, list[TestExample]], bool]:
    """The examples of every dataset, and whether they were reused: read from `folder` if made by the
    same config and dataset code, else generated and saved there."""
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
        with writing(folder):
            shutil.rmtree(folder)  # made by another config: replaced as a whole
    generated: dict[str, list[TestExample]] = {}
    for dataset, n in datasets:
        examples = dataset.generate_examples(n)
        if len(examples) != n:
            raise DefinitionError(f"dataset {dataset.name!r} generated {len(examples)} examples instead of {n}; fix its generate_examples")
        generated[dataset.name] = examples
    every = [ex for examples in generated.values() for ex in examples]
    write_definitions(folder, every, Manifest(fingerprint=fp, tests=[ex.unique_id for ex in every]))
    return generated, False


def _read_all(folder: Path, manifest: Manifest, datasets: list[tuple[DatasetInterface, int]]) -> dict[str, list[TestExample]]:
    out: dict[str, list[TestExample]] = {d.name: [] for d, _ in datasets}
    for uid in manifest.tests:
        dataset_name, _, example_id = uid.partition("/")
        try:
            path = definition_path(folder, dataset_name, example_id)
        except ValueError as exc:  # a hand-edited manifest naming a file outside the folder
            raise DefinitionError(f"{folder / MANIFEST}: entry {clip(uid)}: {exc}; delete the folder to "
                                  "regenerate") from None
        try:
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
        if dataset_name not in out:
            raise DefinitionError(f"{folder / MANIFEST}: lists {uid!r}, a dataset this config does not run; delete the folder to regenerate")
        out[dataset_name].append(example)
    return out
