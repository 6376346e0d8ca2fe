"""Finding datasets: the built-in `datasets/` folder and any user folders, loaded by file path.

Dataset modules are loaded under the private package name `ltm_harness_datasets`, never as a
top-level `datasets` package, so they cannot clash with HuggingFace `datasets` in one process.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import DefinitionError
from ltm_harness._resources import shipped

PACKAGE = "ltm_harness_datasets"
BUILTIN_DIR = shipped("datasets")


def _package() -> types.ModuleType:
    pkg = sys.modules.get(PACKAGE)
    if pkg is None:
        pkg = types.ModuleType(PACKAGE)
        pkg.__path__ = []  # a namespace for the loaded dataset modules
        sys.modules[PACKAGE] = pkg
    return pkg


def _load_module(path: Path) -> types.ModuleType:
    name = f"{PACKAGE}.{path.stem}"
    source = path.read_bytes()
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path) and getattr(loaded, "_ltm_source", None) == source:
        return loaded  # loaded already, and unchanged since
    _package()
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    module._ltm_source = source  # type: ignore[attr-defined]
    try:
        # Compiled from the bytes just read (not a cached .pyc), so an edit is always what runs.
        exec(compile(source, str(path), "exec"), module.__dict__)
    except Exception as exc:
        del sys.modules[name]
        raise DefinitionError(f"{path}: failed to import ({type(exc).__name__}: {exc}); fix the dataset module") from exc
    return module


class DatasetRegistry(dict[str, type[DatasetInterface]]):
    """Dataset classes by name, and the user folders they were looked for in (for the message about an unknown name)."""

    def __init__(self, user_dirs: list[Path] | None = None) -> None:
        super().__init__()
        self.user_dirs = list(user_dirs or [])


def discover(extra_dirs: list[Path] | None = None) -> DatasetRegistry:
    """All dataset classes by name: built-ins first, then user folders (which may not reuse a name)."""
    found = DatasetRegistry(extra_dirs)
    origin: dict[str, Path] = {}
    for folder in [BUILTIN_DIR, *(extra_dirs or [])]:
        if not folder.is_dir():
            raise DefinitionError(f"dataset folder {folder} does not exist; check the path")
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):
                continue
            module = _load_module(path)
            for obj in vars(module).values():
                if (isinstance(obj, type) and issubclass(obj, DatasetInterface) and obj.name
                        and obj.__module__ == module.__name__):
                    if obj.name in found and origin[obj.name] != path:
                        raise DefinitionError(f"{path}: dataset name {obj.name!r} is already used by {origin[obj.name]}; rename one")
                    found[obj.name] = obj
                    origin[obj.name] = path
    # GPT-generated datasets: prompt files in prompts/ and in user folders
    from ltm_harness._authoring.gpt_generated import PROMPTS_DIR, dataset_from_prompt_file, prompt_files

    for folder in [PROMPTS_DIR, *(extra_dirs or [])]:
        for path in prompt_files(folder) if folder.is_dir() else []:
            cls = dataset_from_prompt_file(path)
            if cls.name in found and origin[cls.name] != path:
                raise DefinitionError(f"{path}: dataset name {cls.name!r} is already used by {origin[cls.name]}; rename one")
            found[cls.name] = cls
            origin[cls.name] = path
    return found


def get_dataset_class(name: str, registry: dict[str, type[DatasetInterface]]) -> type[DatasetInterface]:
    try:
        return registry[name]
    except KeyError:
        from ltm_harness._authoring.gpt_generated import why_not_a_prompt_file

        for folder in getattr(registry, "user_dirs", []):
            meant = folder / f"{name}.json"  # a prompt file named like the dataset, passed over as not one
            if meant.is_file():
                raise DefinitionError(f"dataset {name!r}: {why_not_a_prompt_file(meant)}") from None
        raise DefinitionError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(registry))}; fix the name "
                        "(or add the folder holding it to config.dataset_dirs)") from None
