"""Before a run: the datasets of its config, their test definitions (generated once, then reused), and the checks
that an existing run folder may be resumed or re-scored with them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Container, Iterator, Mapping, Sequence

from pydantic import ValidationError

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.definitions import LazyExamples, definitions_match, load_or_generate, read_definition
from ltm_harness._authoring.example import TestExample
from ltm_harness._errors import ConfigError, LTMError, RunFolderError, option
from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import read_text
from ltm_harness._guard.redact import redact, redact_url
from ltm_harness._authoring.catalog import DatasetClass, dataset_class, known_datasets
from ltm_harness._registry.core import Scope
from ltm_harness._llm.contexts import ContextTable
from ltm_harness._llm.ledger import Ledger
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._results.outputs import folder_state
from ltm_harness._runner.config import RunConfig, Selection
from ltm_harness._store.files import write_model
from ltm_harness._store.layout import RunFolder

RESULTS_ROOT = Path("results")
# Settings that change how a run is carried out but not what is said or scored: a run may be resumed with other values.
OPERATIONAL = {"agents", "watchdog", "turns", "llm", "http", "debug", "isolated_concurrency", "preflight", "max_cost"}
BuiltDatasets = list[tuple[DatasetInterface, int]]  # each dataset with its number of examples


@dataclass
class PreparedRun:
    config: RunConfig
    datasets: BuiltDatasets
    # each dataset's tests; those of datasets whose examples are conversations of their own are read from the
    # definitions when their session starts (LazyExamples), the others are held
    examples: dict[str, Sequence[TestExample]]
    folder: RunFolder
    reused_definitions: bool = False
    warnings: list[str] = field(default_factory=list)
    ledger: Ledger | None = None  # the run's spend and budget, kept in the folder (spend.jsonl)

    @property
    def run_dir(self) -> Path:
        return self.folder.path

    def interleaved(self) -> list[tuple[DatasetInterface, TestExample]]:
        """Tests in start order: the first example of every dataset, then the second, and so on (of the datasets
        sharing a conversation or isolated; see `own_conversations` for the others)."""
        out = []
        shared = [d for d, _ in self.datasets if not d.conversation_per_example]
        depth = max((len(self.examples[d.name]) for d in shared), default=0)
        for i in range(depth):
            for dataset in shared:
                exs = self.examples[dataset.name]
                if i < len(exs):
                    out.append((dataset, exs[i]))
        return out

    def own_conversations(self) -> Iterator[tuple[DatasetInterface, str, int]]:
        """The tests that are conversations of their own: dataset, unique id and index, each read only when its
        session starts (`self.examples[dataset.name][index]`)."""
        for dataset, _ in self.datasets:
            if dataset.conversation_per_example:
                exs = self.examples[dataset.name]
                uids = exs.uids if isinstance(exs, LazyExamples) else [e.unique_id for e in exs]
                for i, uid in enumerate(uids):
                    yield dataset, uid, i

    def results_total(self) -> int:
        """How many results the run's tests give each agent: one per test, or one per question of a test scored
        question by question (read from the definitions only for datasets that score so)."""
        total = 0
        for dataset, _ in self.datasets:
            exs = self.examples[dataset.name]
            if type(dataset).result_parts is DatasetInterface.result_parts:
                total += len(exs)
            else:
                total += sum(max(len(dataset.result_parts(e)), 1) for e in exs)
        return total

    def example_index(self) -> "ExampleIndex":
        """Every test by its unique id (those of conversations of their own read from the definitions when asked)."""
        return ExampleIndex(self.examples)


class ExampleIndex(Mapping[str, TestExample]):
    """Tests by unique id: the held ones from a dict, those of datasets read lazily from their definitions."""

    def __init__(self, examples: dict[str, Sequence[TestExample]]) -> None:
        self._held = {e.unique_id: e for exs in examples.values() if not isinstance(exs, LazyExamples) for e in exs}
        self._lazy = {name: exs for name, exs in examples.items() if isinstance(exs, LazyExamples)}

    def __getitem__(self, uid: str) -> TestExample:
        held = self._held.get(uid)
        if held is not None:
            return held
        lazy = self._lazy.get(uid.partition("/")[0])
        if lazy is None or uid not in lazy.uids:
            raise KeyError(uid)
        return read_definition(lazy.folder, uid)

    def __iter__(self) -> Iterator[str]:
        yield from self._held
        for exs in self._lazy.values():
            yield from exs.uids

    def __len__(self) -> int:
        return len(self._held) + sum(len(exs) for exs in self._lazy.values())


def config_base(source: str) -> Path:
    """Where a config's relative paths start: the config file's folder (the current folder for a config in code)."""
    return Path(source).parent if Path(source).is_file() else Path.cwd()


def dataset_spec(name: str, base: Path) -> str:
    """A dataset's name as the config gives it; a `path/to/file.py:Class` spec with its relative path taken from
    `base`, as `dataset_dirs` are."""
    target, sep, attr = name.rpartition(":")
    if sep and target.endswith(".py") and not Path(target).is_absolute():
        return f"{(base / target).resolve()}:{attr}"
    return name


def dataset_dirs(cfg: RunConfig, source: str) -> list[Path]:
    """`config.dataset_dirs`, relative paths taken from the config file's folder."""
    base = config_base(source)
    dirs = []
    for i, d in enumerate(cfg.config.dataset_dirs):
        path = (base / d).resolve()
        if not path.is_dir():
            raise ConfigError(f"{source}: config.dataset_dirs[{i}]: folder {path} does not exist; fix the path "
                              "(relative paths start at the config file's folder)")
        dirs.append(path)
    return dirs


def build_datasets(cfg: RunConfig, source: str = "config", registry: Scope[DatasetClass] | None = None) -> BuiltDatasets:
    if registry is None:
        registry = known_datasets(dataset_dirs(cfg, source))
    built = []
    seen = set()
    base = config_base(source)
    for i, entry in enumerate(cfg.datasets.datasets):
        try:
            cls = dataset_class(dataset_spec(entry.name, base), registry)
        except LTMError as exc:
            raise ConfigError(f"{source}: datasets.datasets[{i}].name: {exc}") from None
        if entry.name in seen:
            raise ConfigError(f"{source}: datasets.datasets[{i}]: dataset {entry.name!r} is listed twice; list it once")
        seen.add(entry.name)
        try:
            common = entry.common(cfg.datasets.args)
            dataset = cls(memory_span=common.memory_span, seed=cfg.config.seed, **entry.params)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            fix = "remove it or fix its spelling" if err["type"] == "extra_forbidden" else "fix the value"
            raise ConfigError(f"{source}: datasets.datasets[{i}].args.{where}: {err['msg']}; {fix}") from None
        built.append((dataset, common.dataset_examples))
    if not built:
        raise ConfigError(f"{source}: datasets.datasets is empty; list at least one dataset")
    return built


def _warnings(cfg: RunConfig, datasets: BuiltDatasets, source: str, known: Container[str]) -> list[str]:
    out = []
    for i, pair in enumerate(cfg.config.incompatibilities):
        for name in pair:
            if name not in known:
                out.append(f"{source}: config.incompatibilities[{i}]: {name!r} is not a known dataset (a typo?)")
    for dataset, _ in datasets:
        if dataset.memory_span < 1000:
            out.append(f"{dataset.name}: a memory span of {dataset.memory_span} tokens is below 1000; "
                       "information gaps may miss their targets by more than 10%")
    return out


def _config_difference(saved: dict[str, Any], now: dict[str, Any], where: str = "") -> str | None:
    """The first setting (dotted path) that differs between two config dumps, ignoring operational ones."""
    for key in sorted(set(saved) | set(now)):
        if where == "config" and key in OPERATIONAL:
            continue
        path = f"{where}.{key}" if where else key
        a, b = saved.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found = _config_difference(a, b, path)
            if found:
                return found
        elif a != b:
            return path
    return None


def _saved_config(cfg: RunConfig, dirs: list[Path], source: str) -> RunConfig:
    saved = cfg.model_copy(deep=True)  # paths absolute: the saved config has no folder of its own
    saved.config.dataset_dirs = [str(d) for d in dirs]
    # no secret in the file: URLs lose their user:password and secret query values (api_key is masked by pydantic)
    for section in (saved.config.openai, saved.config.judge, saved.config.test_llm):
        if section.base_url:
            section.base_url = redact_url(section.base_url)
    saved.config.agents = [redact(agent) for agent in saved.config.agents]
    for entry in saved.datasets.datasets:
        entry.name = dataset_spec(entry.name, config_base(source))
    return saved


def prepare(cfg: RunConfig, results_root: Path = RESULTS_ROOT, source: str = "config", existing_only: bool = False,
            resume: bool = False, datasets: Sequence[tuple[DatasetInterface, int]] | None = None,
            folder: RunFolder | None = None) -> PreparedRun:
    """Datasets and their definitions for `cfg`. With `existing_only`, the run folder's definitions must
    be reused as they are (re-scoring): anything that would regenerate them is an error instead. With `resume`,
    the run folder must hold a run made with the same config (operational settings aside) and definitions.
    `datasets` (built by the caller, as the AIQ runner does) replaces those the config names; `folder` is the run
    folder when it is not the one the config's run name gives (a run re-scored where it was put)."""
    dirs = dataset_dirs(cfg, source)
    known: Container[str]
    if datasets is None:
        registry = known_datasets(dirs)
        built = build_datasets(cfg, source, registry)
        known = registry  # asked by name only: no other dataset module is loaded
    else:
        built, known = list(datasets), {d.name for d, _ in datasets}
    folder = folder or RunFolder.named(results_root, cfg.config.run_name)
    saved = _saved_config(cfg, dirs, source)
    resuming = resume and _check_resumable(folder, saved)
    if (existing_only or resuming) and not definitions_match(folder.definitions, built):
        raise RunFolderError(f"{folder.definitions}: the datasets' code or settings changed since the run, so its "
                             f"answers cannot be {'resumed' if resuming else 're-scored'} with these definitions; "
                             f"run it again {'with ' + option('overwrite') if resuming else 'instead'}")
    try:
        examples, reused = load_or_generate(folder.definitions, built)
        if not reused:
            folder.clear()  # results of other definitions no longer belong with these
        if not existing_only:
            write_model(folder.run_config, saved)
    except OSError as exc:
        raise RunFolderError(f"cannot write results under {results_root}: {exc.strerror or exc} ({exc.filename}); "
                             "give another results folder") from None
    ledger = Ledger(PriceTable(cfg.config.llm.prices), cfg.config.max_cost, ContextTable(cfg.config.llm.contexts))
    ledger.keep(folder.spend, None if existing_only else resume)  # a resume goes on from what was spent
    return PreparedRun(cfg, built, examples, folder, reused, _warnings(cfg, built, source, known), ledger)


def _check_resumable(folder: RunFolder, saved: RunConfig) -> bool:
    """Whether the run folder holds agent outputs to resume (False: nothing ran yet, it simply starts)."""
    if not folder.path.is_dir():
        return False
    has_outputs = bool(folder_state(folder))
    path = folder.run_config
    if not path.is_file():
        if has_outputs:
            raise RunFolderError(f"{path}: missing, so the run cannot be resumed; run it again with "
                                 f"{option('overwrite')}")
        return False
    try:
        before = jsonsafe.loads(read_text(path))
    except (OSError, ValueError):
        raise RunFolderError(f"{path}: cannot be read, so the run cannot be resumed; run it again with "
                             f"{option('overwrite')}") from None
    _check_same_selection(path, before, saved.config.selection)
    differs = _config_difference(before if isinstance(before, dict) else {}, json.loads(saved.model_dump_json()))
    if differs:
        raise ConfigError(f"{path}: {differs} differs from the run being resumed; resume it with the config and "
                          f"options it was started with, or run it again with {option('overwrite')}")
    return has_outputs


def _check_same_selection(path: Path, before: Any, now: Selection | None) -> None:
    """A run resumed with another selection (datasets, exclude, limit) than it was started with is refused, naming
    both."""
    section = before.get("config") if isinstance(before, dict) else None
    raw = section.get("selection") if isinstance(section, dict) else None
    try:
        was = Selection.model_validate(raw) if raw is not None else None
    except ValidationError:
        raise RunFolderError(f"{path}: config.selection cannot be read, so the run cannot be resumed; run it again "
                             f"with {option('overwrite')}") from None
    if (was.flags() if was else []) != (now.flags() if now else []):
        given = now.describe() if now else "none of them"
        raise ConfigError(f"{path}: the run was started with {(was or Selection()).describe()} but is resumed with "
                          f"{given}; resume it with the options it was started with, or run it again with "
                          f"{option('overwrite')}")
