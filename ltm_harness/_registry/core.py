"""One way to find things by name, for every kind: datasets, agents, environments, judge prompts, suites.

A registry of a kind holds entries (a name, the thing, where it came from, one line about it) from, in order:

1. the built-ins the harness ships;
2. what code registered (`ltm_harness.register_dataset(...)` and the like);
3. installed packages, through entry points in the kind's group (`ltm_harness.datasets`, `ltm_harness.agents`,
   `ltm_harness.envs`, `ltm_harness.judge_prompts`, `ltm_harness.suites`), loaded when first needed;
4. folders a run names (datasets' `dataset_dirs`), scanned for that run only;
5. specs naming the code itself: `module:Name` or `path/to/file.py:Name`.

A name belongs to one thing: a second thing under a name already taken is refused, naming both sources. An unknown
name is one error listing the known ones. Built-ins may be known by name before they are loaded (`lazy`: the built-in
dataset modules): a run loads only those it names, and the rest when everything is listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

from ltm_harness._errors import ConfigError, DefinitionError, LTMError
from ltm_harness._guard.limits import exception_line
from ltm_harness._registry.loading import entry_point_source, group_entry_points, is_object_spec, load_object

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    value: T
    source: str  # "built-in", "code in <module>" (registered), "package <dist>", a folder's file, a spec
    description: str = ""


class Registry(Generic[T]):
    """Things of one kind by name.

    `accept(obj, where)` turns a loaded object (a class, a module, a file's content...) into the entries it holds,
    refusing objects that are not of this kind; `builtins()` gives the shipped entries; `scan(folder)` the entries
    of a folder (kinds that have folders)."""

    def __init__(self, kind: str, group: str, accept: Callable[[Any, str], Iterable[Entry[T]]], *,
                 builtins: Callable[[], Iterable[Entry[T]]] = lambda: (),
                 scan: Callable[[Path], Iterable[Entry[T]]] | None = None, spec_default: str | None = None,
                 error: type[LTMError] = ConfigError, hint: str = "",
                 lazy: Callable[[], Mapping[str, Callable[[], Iterable[Entry[T]]]]] = lambda: {}) -> None:
        self.kind = kind
        self.group = group
        self.accept = accept
        self._builtins = builtins
        self._scan = scan
        self.spec_default = spec_default  # the name a spec of just a module or file means (suites: "suite")
        self.error = error
        self.hint = hint  # how to add one, said with an unknown name
        self._entries: dict[str, Entry[T]] = {}
        self._lazy_builtins = lazy  # name -> what loads the entries of its source (a module: its other names too)
        self._lazy: dict[str, Callable[[], Iterable[Entry[T]]]] = {}
        self._loaded = False
        self._eps_loaded = False

    # -- adding --------------------------------------------------------------------------------------------------
    def _add(self, entry: Entry[T], into: dict[str, Entry[T]]) -> None:
        if entry.name in self._lazy:  # a built-in known by name only so far: load it to compare
            self._resolve(entry.name)
            if into is not self._entries and entry.name not in into:
                into[entry.name] = self._entries[entry.name]
        known = into.get(entry.name)
        if known is not None and not _same(known.value, entry.value):
            raise DefinitionError(f"{self.kind} name {entry.name!r} is used by {known.source} and by {entry.source}; "
                                  "rename one")
        into[entry.name] = entry

    def _ensure(self) -> None:
        if not self._loaded:
            self._loaded = True
            for entry in self._builtins():
                self._add(entry, self._entries)
            self._lazy = {name: load for name, load in self._lazy_builtins().items() if name not in self._entries}

    def _resolve(self, name: str) -> Entry[T] | None:
        """Load the built-in `name` known by name only (with the others of its source); None: not such a one."""
        load = self._lazy.get(name)
        if load is None:
            return None
        loaded = list(load())
        for same in [n for n, other in self._lazy.items() if other is load]:
            del self._lazy[same]
        for entry in loaded:
            self._add(entry, self._entries)
        if name not in self._entries:
            raise DefinitionError(f"built-in {self.kind} {name!r} is not defined where the harness expects it; "
                                  "reinstall ltm-harness")
        return self._entries[name]

    def _resolve_all(self) -> None:
        while self._lazy:
            self._resolve(next(iter(self._lazy)))

    def _ensure_entry_points(self) -> None:
        self._ensure()
        if self._eps_loaded:
            return
        self._eps_loaded = True
        for ep in group_entry_points(self.group):
            source = entry_point_source(ep)
            try:
                obj = ep.load()
            except SystemExit as exc:
                raise DefinitionError(f"{self.kind} {ep.name!r} of {source} (entry point {ep.value}) called "
                                      f"sys.exit({exc.code!r:.40}) while being imported; fix or uninstall the "
                                      "package") from None
            except Exception as exc:
                raise DefinitionError(f"{self.kind} {ep.name!r} of {source} (entry point {ep.value}) failed to load "
                                      f"({exception_line(exc)}); fix or uninstall the package") from exc
            for entry in self.accept(obj, source):
                self._add(Entry(ep.name if entry.name == "" else entry.name, entry.value, source, entry.description),
                          self._entries)

    def register(self, obj: Any, source: str, name: str = "") -> list[Entry[T]]:
        """Register what `obj` holds (from code), an entry without a name of its own under `name`."""
        self._ensure()
        added = [entry if entry.name else Entry(name, entry.value, entry.source, entry.description)
                 for entry in self.accept(obj, source)]
        if any(not entry.name for entry in added):
            raise DefinitionError(f"{source}: give the {self.kind} a name to be known by")
        for entry in added:
            self._add(entry, self._entries)
        return added

    def unregister(self, name: str) -> None:
        """Forget what code registered under `name` (built-ins and packages' entries stay)."""
        entry = self._entries.get(name)
        if entry is not None and entry.source.startswith("code in "):
            del self._entries[name]

    def folder(self, folder: Path) -> list[Entry[T]]:
        """The entries of a folder, as its files are now (a module is loaded again only when its file changed)."""
        if self._scan is None:
            raise ConfigError(f"{self.kind}s are not found in folders; name them by spec or package")
        if not folder.is_dir():
            raise ConfigError(f"{self.kind} folder {folder} does not exist; check the path")
        entries: dict[str, Entry[T]] = {}
        for entry in self._scan(folder.resolve()):
            self._add(entry, entries)
        return list(entries.values())

    # -- finding -------------------------------------------------------------------------------------------------
    def scope(self, folders: Iterable[Path] = ()) -> "Scope[T]":
        """Everything known, plus the entries of `folders` (which may not reuse a name)."""
        self._ensure_entry_points()
        entries = dict(self._entries)
        for folder in folders:
            for entry in self.folder(folder):
                self._add(entry, entries)
        return Scope(self, entries, [Path(f) for f in folders])

    def find(self, name: str, folders: Iterable[Path] = ()) -> T:
        """The thing `name` (or a spec) names; an unknown one is one error listing the known ones."""
        return self.scope(folders).find(name)

    def entries(self, folders: Iterable[Path] = ()) -> list[Entry[T]]:
        return self.scope(folders).entries()


class Scope(Mapping[str, T]):
    """A registry's entries as one run sees them (its folders included): lookup by name or spec; read as a
    mapping, the things by name."""

    def __init__(self, registry: Registry[T], entries: dict[str, Entry[T]], folders: list[Path]) -> None:
        self.registry = registry
        self._entries = entries
        self._lazy = set(registry._lazy) - set(entries)  # built-ins known by name, loaded when first looked up
        self.folders = folders

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._lazy

    def __getitem__(self, name: str) -> T:
        known = self._known(name)
        if known is None:
            raise KeyError(name)
        return known.value

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        self._load_all()
        return len(self._entries)

    def entries(self) -> list[Entry[T]]:
        self._load_all()
        return [self._entries[name] for name in sorted(self._entries)]

    def _known(self, name: str) -> Entry[T] | None:
        known = self._entries.get(name)
        if known is None and name in self._lazy:
            known = self.registry._resolve(name) or self.registry._entries[name]  # loaded already with another
            self._entries[name] = known
            self._lazy.discard(name)
        return known

    def _load_all(self) -> None:
        for name in sorted(self._lazy):
            self._known(name)

    def entry(self, name: str) -> Entry[T]:
        known = self._known(name)
        if known is not None:
            return known
        reg = self.registry
        if is_object_spec(name) or (reg.spec_default and "." in name and is_object_spec(f"{name}:{reg.spec_default}")):
            found = list(reg.accept(load_object(name, reg.kind, reg.spec_default), name))
            if len(found) != 1:
                raise DefinitionError(f"{reg.kind} {name!r} names {len(found)} {reg.kind}s; name one of them")
            return Entry(found[0].name, found[0].value, name, found[0].description)
        self._load_all()
        known_names = ", ".join(sorted(self._entries)) or "none"
        raise reg.error(f"unknown {reg.kind} {name!r}; known {reg.kind}s: {known_names}; fix the name"
                        + (f" ({reg.hint})" if reg.hint else ""))

    def find(self, name: str) -> T:
        """The thing `name` (or a spec) names; an unknown one is one error listing the known ones."""
        return self.entry(name).value


def _same(a: Any, b: Any) -> bool:
    """The same thing, or a new version of it (its module was loaded again)."""
    if a is b or a == b:
        return True
    key = lambda v: (getattr(v, "__module__", None), getattr(v, "__qualname__", None))  # noqa: E731
    return isinstance(a, type) and isinstance(b, type) and key(a) == key(b)
