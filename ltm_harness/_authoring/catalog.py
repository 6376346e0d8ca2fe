"""The datasets a run can name: the built-in ones, those registered in code or by installed packages
(`ltm_harness.datasets` entry points), the modules and prompt files of a config's `dataset_dirs`, and specs
(`module:Class`, `path/to/file.py:Class`).

Dataset modules of a folder are loaded by file path under the private package `ltm_harness_datasets`, never as a
top-level `datasets` package, so they cannot clash with HuggingFace `datasets` in one process. A prompt file (a JSON
file with `content`, `question` and `answer` prompts) is a dataset of its own.

The built-in dataset modules are known by name before they are loaded (the `name = "..."` of their classes, read
from their source), and each is loaded when a run names one of its datasets (or everything is listed): a LoCoMo run
does not import the environments or LongMemEval's reader.
"""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ltm_harness._guard.names import UnsafeName, check_name
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.gpt_generated import PROMPTS_DIR, dataset_from_prompt_file, prompt_files, why_not_a_prompt_file
from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._registry.core import Entry, Registry, Scope
from ltm_harness._registry.loading import code_source, load_module_file
from ltm_harness._resources import shipped

PACKAGE = "ltm_harness_datasets"
DatasetClass = type[DatasetInterface]


def _safe(name: str, where: str) -> str:
    """A dataset name becomes a folder of the run's definitions: it must be a safe name."""
    try:
        return check_name(name, "dataset name")
    except UnsafeName as exc:
        raise DefinitionError(f"{where}: {exc}; rename the dataset") from None


def _accept(obj: Any, where: str) -> Iterator[Entry[DatasetClass]]:
    """A dataset class, or every dataset class a module defines."""
    if isinstance(obj, type) and issubclass(obj, DatasetInterface):
        if not obj.name:
            raise DefinitionError(f"{where}: {obj.__qualname__} has no `name`; give the dataset a name")
        yield Entry(_safe(obj.name, where), obj, where, obj.description)
    elif isinstance(obj, types.ModuleType):
        for value in vars(obj).values():
            if (isinstance(value, type) and issubclass(value, DatasetInterface) and value.name
                    and value.__module__ == obj.__name__):
                yield Entry(_safe(value.name, where), value, where, value.description)
    else:
        raise DefinitionError(f"{where}: {obj!r} is not a dataset (a DatasetInterface subclass, or a module of them)")


def _scan(folder: Path, source: str | None = None) -> Iterator[Entry[DatasetClass]]:
    """The datasets of a folder: its modules (not starting with `_`) and its prompt files."""
    for path in sorted(folder.glob("*.py")):
        if not path.name.startswith("_"):
            yield from _accept(load_module_file(path, PACKAGE), source or str(path))
    for path in prompt_files(folder):
        cls = dataset_from_prompt_file(path)
        yield Entry(cls.name, cls, source or str(path), cls.description)


def _builtins() -> Iterable[Entry[DatasetClass]]:
    for path in prompt_files(shipped("datasets")) + prompt_files(PROMPTS_DIR):
        cls = dataset_from_prompt_file(path)
        yield Entry(cls.name, cls, "built-in", cls.description)


_NAME = re.compile(r"""    name\s*=\s*(["'])([^"'\\]*)\1\s*(#.*)?""")


def _class_names(path: Path) -> list[str]:
    """The `name = "..."` of each class a built-in module's source defines at its top level, read line by line (a
    tenth of the time of parsing the source; tests/core/test_catalog_names.py checks it gives what `ast` gives for every
    built-in module)."""
    names, in_class = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line[:1] not in ("", " ", "\t", "#"):  # a top-level statement starts
            in_class = line.startswith("class ")
        elif in_class and (found := _NAME.fullmatch(line)):
            names.append(found.group(2))
    return names


def _lazy_builtins() -> dict[str, Callable[[], Iterable[Entry[DatasetClass]]]]:
    """Each built-in dataset's name, and what loads its module (with the module's other datasets)."""
    found: dict[str, Callable[[], Iterable[Entry[DatasetClass]]]] = {}
    for path in sorted(shipped("datasets").glob("*.py")):
        if not path.name.startswith("_"):
            def load(path: Path = path) -> Iterable[Entry[DatasetClass]]:
                return list(_accept(load_module_file(path, PACKAGE), "built-in"))

            for name in _class_names(path):
                found.setdefault(name, load)
    return found


DATASETS: Registry[DatasetClass] = Registry(
    "dataset", "ltm_harness.datasets", _accept, builtins=_builtins, scan=_scan, error=ConfigError,
    hint="add the folder holding it to config.dataset_dirs, name it as module:Class, or register it",
    lazy=_lazy_builtins)


def known_datasets(folders: Iterable[Path] = ()) -> Scope[DatasetClass]:
    """Every dataset a run with these `dataset_dirs` can name."""
    return DATASETS.scope(folders)


def dataset_class(name: str, scope: Scope[DatasetClass]) -> DatasetClass:
    """The dataset class `name` (or spec) names; a prompt file named like it that is not one says why."""
    if name not in scope:
        for folder in scope.folders:
            meant = folder / f"{name}.json"  # a prompt file named like the dataset, passed over as not one
            if meant.is_file():
                raise DefinitionError(f"dataset {name!r}: {why_not_a_prompt_file(meant)}")
    return scope.find(name)


def register_dataset(cls: DatasetClass) -> DatasetClass:
    """Make a dataset class known by its `name` to every run of this process (usable as a class decorator)."""
    DATASETS.register(cls, code_source(cls))
    return cls
