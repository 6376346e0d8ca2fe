"""Loading code the user names: a module file by its path, an object by its spec, the entry points of a group.

Files are loaded under private package names (`ltm_harness_user.<stem>_<hash of the path>`), never as top-level
modules, so a user's `datasets/` folder or `utils.py` cannot clash with installed packages (HuggingFace `datasets`)
or with each other. A file is compiled from the bytes read now, so an edit is always what runs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import types
from contextlib import contextmanager, nullcontext
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Iterator

from ltm_harness._guard.limits import clip, exception_line
from ltm_harness._errors import ConfigError, DefinitionError

USER_PACKAGE = "ltm_harness_user"


def _package(name: str) -> None:
    if name not in sys.modules:
        pkg = types.ModuleType(name)
        pkg.__path__ = []  # a namespace for the loaded modules
        sys.modules[name] = pkg


@contextmanager
def _folder_importable(folder: Path) -> Iterator[None]:
    """`folder` first on `sys.path` while a file in it loads, as `python FILE.py` has it: the file may import the
    modules beside it (`from my_tools import search`); the modules it imported stay loaded afterwards."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
        importlib.invalidate_caches()
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def load_module_file(path: Path, package: str = USER_PACKAGE, beside: bool = False) -> types.ModuleType:
    """The module in the .py file `path`, loaded under `package` (again only when the file changed); `beside`: the
    file's folder is importable while it loads (agents' files, as `python FILE.py` would have it; not dataset files,
    whose folder could shadow installed packages)."""
    path = path.resolve()
    name = f"{package}.{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot be read ({exc.strerror or exc}); check the path") from None
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "_ltm_source", None) == source:
        return loaded  # loaded already, and unchanged since
    _package(package)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"{path}: cannot be loaded as a Python module; give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    module._ltm_source = source  # type: ignore[attr-defined]
    try:
        with _folder_importable(path.parent) if beside else nullcontext():
            exec(compile(source, str(path), "exec"), module.__dict__)
    except SystemExit as exc:
        del sys.modules[name]
        raise DefinitionError(f"{path}: called sys.exit({clip(exc.code)}) while being imported; remove the call (or "
                              "put it under `if __name__ == \"__main__\":`)") from None
    except Exception as exc:
        del sys.modules[name]
        raise DefinitionError(f"{path}: failed to import ({exception_line(exc)}); fix the "
                              "module") from exc
    return module


def is_object_spec(spec: str) -> bool:
    """`module:Name` or `path/to/file.py:Name` (a `.py` path alone names the file's default object)."""
    target, sep, attr = spec.rpartition(":")
    if spec.endswith(".py"):
        return True
    return bool(sep and target and attr.isidentifier() and (target.endswith(".py") or _dotted(target)))


def _dotted(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def load_object(spec: str, what: str, default: str | None = None, beside: bool = False) -> Any:
    """The object a spec names: `module:Name`, `path/to/file.py:Name`, or (with a `default` name) just the module
    or file. `what` names it in errors ("agent", "dataset", ...); `beside`: see `load_module_file`."""
    target, sep, attr = spec.rpartition(":")
    if not sep or "/" in attr or "\\" in attr or attr.endswith(".py"):
        target, attr = spec, default or ""
    if not attr:
        raise ConfigError(f"{what} {spec!r}: write MODULE:NAME or path/to/file.py:NAME")
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if not path.is_file():
            raise ConfigError(f"{what} {spec!r}: the file {path} does not exist; check the path")
        module = load_module_file(path, beside=beside)
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise ConfigError(f"{what} {spec!r}: cannot import {target!r} ({exc}); give an importable module or a "
                              ".py file") from None
        except SystemExit as exc:
            raise DefinitionError(f"{what} {spec!r}: {target} called sys.exit({clip(exc.code)}) while being imported; "
                                  "remove the call") from None
        except Exception as exc:
            raise DefinitionError(f"{what} {spec!r}: {target} failed to import ({exception_line(exc)}); "
                                  "fix it") from exc
    if not hasattr(module, attr):
        raise ConfigError(f"{what} {spec!r}: {target} has no {attr!r}; write MODULE:NAME")
    return getattr(module, attr)


def group_entry_points(group: str) -> list[EntryPoint]:
    """The entry points installed packages declare in `group`, by name."""
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


def entry_point_source(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"package {dist.name}" if dist is not None else f"entry point {ep.value}"


def code_source(obj: object, caller: str | None = None) -> str:
    """Where registered code comes from, as `list` shows it: its module, or its file when the module was loaded
    from a file (a dataset folder's module, a `file.py:Name` spec), whose private module name says nothing."""
    module_name = getattr(obj, "__module__", None) or caller or "?"
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if path and module_name.split(".")[0] in (USER_PACKAGE, "ltm_harness_datasets"):
        return f"code in {path}"
    return f"code in {module_name}"

