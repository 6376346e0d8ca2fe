"""The study file: a base config and the lists to cross (agents, spans, seeds, datasets or configs), validated by
pydantic like run configs; and the cells it makes, each an ordinary run of one agent.

    name: span-curve              # the study's folder under --results (default: the file's name)
    base: default                 # a config file (relative to this file) or a shipped config's name
    agents:
      - retrieval
      - recent4k=recent:4000
      - {agent: "llama=http://10.0.0.5:8080/chat", num_gpus: 1, resources: {a100: 1}}
    spans: [2000, 8000, 32000]    # memory span of every dataset (default: the config's)
    seeds: [0, 1, 2]              # default: the config's seed
    datasets: [colours, kv]       # optional: a cell per dataset (default: all of the config's, in one conversation)
    configs:                      # optional, instead of `base`: a cell per config, NAME=PATH, or a variant of base
      - short=configs/short.yml
      - {name: isolated, override: {config: {isolated: true}}}
    concurrency: 8                # cells at a time (default: 8 locally, as many as Ray's resources allow)
    retries: 3                    # Ray: times a cell is run again when its worker dies
    num_cpus: 1                   # Ray resources of every cell, unless its agent gives its own
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ltm_harness._agents.specs import agent_choice, check_agents
from ltm_harness._errors import ConfigError, LTMError, option
from ltm_harness._runner.config import (DatasetEntry, RunConfig, Selection, select_datasets, describe_validation_error, load_config,
                                        read_yaml_mapping, resolve_config_path)
from ltm_harness._store.layout import slug, taken_entry

STUDY_EXPECTED = "a study with `agents` and at least one of `spans`, `seeds`, `datasets`, `configs` (see docs/grid.md)"
LOCAL_CONCURRENCY = 8


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Resources(_Strict):
    """What a cell needs on a Ray node (ignored by the local executor): Ray's `num_cpus`, `num_gpus` and custom
    resources by name."""

    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    resources: dict[str, float] = Field(default_factory=dict)


class StudyAgent(Resources):
    """An agent of the study: a spec or NAME=SPEC, with the resources its cells need."""

    agent: str

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        if v is None:
            raise ValueError("an empty agent (YAML reads null, ~ and nothing as no value); quote the spec, e.g. 'null'")
        return {"agent": v} if isinstance(v, str) else v

    @field_validator("agent")
    @classmethod
    def _spec(cls, v: str) -> str:
        try:
            agent_choice(v)
        except LTMError as exc:
            raise ValueError(str(exc)) from None
        return v

    @property
    def name(self) -> str:
        return agent_choice(self.agent).name


class StudyConfig(_Strict):
    """A config crossed by the study: a file (NAME=PATH or PATH), or `override`, a variant of `base` (its mapping is
    merged into base's, section by section)."""

    name: str
    path: str | None = None
    override: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        if isinstance(v, str):
            name, sep, path = v.partition("=")
            return {"name": name, "path": path} if sep else {"name": Path(v).stem, "path": v}
        return v

    @model_validator(mode="after")
    def _one_source(self) -> "StudyConfig":
        if (self.path is None) == (self.override is None):
            raise ValueError("give the config as `path` or as `override` (a variant of base), one of the two")
        if slug(self.name) != self.name:
            raise ValueError(f"config name {self.name!r}: use letters, digits, '.', '_' and '-' only (it names folders)")
        return self


class StudyDataset(_Strict):
    """A dataset crossed by the study: a name (its entry in the config, or the dataset with its defaults) or an
    entry with its own `args`."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v


class StudyFile(Resources):
    name: str | None = None
    base: str | None = None
    configs: list[StudyConfig] = Field(default_factory=list)
    agents: list[StudyAgent] = Field(min_length=1)
    spans: list[int] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    datasets: list[StudyDataset] = Field(default_factory=list)
    concurrency: int | None = Field(default=None, ge=1)
    retries: int = Field(default=3, ge=0)

    @field_validator("spans")
    @classmethod
    def _spans(cls, v: list[int]) -> list[int]:
        for span in v:
            if span < 500:
                raise ValueError(f"every span must be at least 500 tokens (got {span})")
        return v

    @model_validator(mode="after")
    def _unique(self) -> "StudyFile":
        axes: list[tuple[str, list[Any]]] = [("agent", [a.name for a in self.agents]),
                                             ("config", [c.name for c in self.configs]),
                                             ("dataset", [d.name for d in self.datasets]), ("span", list(self.spans)),
                                             ("seed", list(self.seeds))]
        for what, names in axes:
            twice = next((n for n in names if names.count(n) > 1), None)
            if twice is not None:
                raise ValueError(f"{what} {twice!r} is listed twice; list it once (agents: name them NAME=SPEC)")
        if self.configs and self.base is not None and all(c.path is not None for c in self.configs):
            raise ValueError("`base` is only used by configs given as `override`; remove it or the `configs` paths")
        return self


class Cell(BaseModel):
    """One run of the study: one agent, config, dataset (or all of the config's), span (or the config's) and seed."""

    id: str
    agent: str  # the agent's name (its folder, tables)
    spec: str  # as the study gives it (NAME=SPEC)
    config: str | None = None  # the config's name, when the study crosses configs
    dataset: str | None = None  # the dataset, when the study crosses datasets
    span: int | None = None  # None: the config's spans
    seed: int
    resources: Resources = Field(default_factory=Resources)


class Study:
    """A loaded study file: where it is, what it says, its configs, and its cells in a fixed order."""

    def __init__(self, path: Path, spec: StudyFile, selection: Selection | None = None) -> None:
        self.path = path
        self.spec = spec
        self.selection = selection  # the command line's --datasets, --exclude and --limit, for every cell
        self.name = slug(spec.name or path.stem)
        if (taken := taken_entry(self.name, in_run=False)) is not None:
            raise ConfigError(f"{path}: the study {self.name!r} would write to {taken}; give it another `name`")
        self.configs = self._configs()  # name (None: base) -> (config, where its relative paths start)
        self.cells = self._cells()
        if selection is not None:  # a name a config does not list is said now, not when its cells run
            for config in self.configs:
                first = next((c for c in self.cells if c.config == config), None)
                if first is not None:
                    self.cell_config(first)
        if spec.spans:
            self._check_spans()

    def _check_spans(self) -> None:
        """Spans crossed over datasets that use no span (LoCoMo in reference mode) are refused in one line naming
        the args that would use it: every cell of such a study would be the same run."""
        from ltm_harness._runner.prepare import build_datasets
        from ltm_harness._runner.settings import Given, meaningless

        seen: set[tuple[str | None, str | None]] = set()
        for cell in self.cells:
            if (cell.config, cell.dataset) in seen:
                continue
            seen.add((cell.config, cell.dataset))
            cfg, source = self.cell_config(cell)
            built = build_datasets(cfg, source)
            error, _ = meaningless([Given("memory_span", f"{self.path}: spans")],
                                   [(e.name, d) for e, (d, _) in zip(cfg.datasets.datasets, built)],
                                   lambda name, arg, value: f"args {{{arg}: {value}}} to {name} in the config")
            if error is not None:
                raise ConfigError(error.replace(f"leave {self.path}: spans out", "leave spans out"))

    def _resolve(self, name: str) -> Path:
        """A config named by the study: a path from the study file's folder, else any path or shipped name."""
        near = self.path.parent / name
        return near.resolve() if near.is_file() else resolve_config_path(name).resolve()

    def _configs(self) -> dict[str | None, tuple[RunConfig, str]]:
        if not self.spec.configs:
            base = self._resolve(self.spec.base or "default")
            return {None: (load_config(base), str(base))}
        out: dict[str | None, tuple[RunConfig, str]] = {}
        variants = any(c.override is not None for c in self.spec.configs)
        base_path = self._resolve(self.spec.base or "default") if variants else None
        for i, entry in enumerate(self.spec.configs):
            if entry.path is not None:
                path = self._resolve(entry.path)
                out[entry.name] = (load_config(path), str(path))
                continue
            assert base_path is not None
            raw = _merge(load_config(base_path).model_dump(), entry.override or {})
            try:
                out[entry.name] = (RunConfig.model_validate(raw), str(base_path))
            except ValidationError as exc:
                where = describe_validation_error(f"{self.path}: configs[{i}].override", exc)
                raise ConfigError(where) from None
        return out

    def _cells(self) -> list[Cell]:
        cells = []
        for agent in self.spec.agents:
            for config in self.configs:
                datasets: list[str | None] = list(self._crossed_datasets()) or [None]
                for dataset in datasets:
                    spans: list[int | None] = list(self.spec.spans) or [None]
                    for span in spans:
                        for seed in self.spec.seeds or [self.configs[config][0].config.seed]:
                            parts = [agent.name] + ([config] if config else []) + ([dataset] if dataset else [])
                            parts += ([f"span{span}"] if span else []) + [f"seed{seed}"]
                            resources = Resources(
                                num_cpus=agent.num_cpus if agent.num_cpus is not None else self.spec.num_cpus,
                                num_gpus=agent.num_gpus if agent.num_gpus is not None else self.spec.num_gpus,
                                resources={**self.spec.resources, **agent.resources})
                            cells.append(Cell(id=slug("__".join(parts)), agent=agent.name, spec=agent.agent,
                                              config=config, dataset=dataset, span=span, seed=seed,
                                              resources=resources))
        ids = [c.id for c in cells]
        twice = next((i for i in ids if ids.count(i) > 1), None)
        if twice is not None:
            raise ConfigError(f"{self.path}: two cells would share the folder {twice!r}; name the agents, configs or "
                              "datasets so that their names differ")
        return cells

    def _crossed_datasets(self) -> list[str]:
        """The datasets the study crosses, less those --datasets leaves out or --exclude drops (a name it does not
        cross is refused in one line)."""
        crossed = [d.name for d in self.spec.datasets]
        if not crossed or self.selection is None:
            return crossed
        for name, names in (("datasets", self.selection.datasets or []), ("exclude", self.selection.exclude)):
            unknown = [n for n in names if n not in crossed]
            if unknown:
                raise ConfigError(f"{option(name, unknown)}: not crossed by {self.path}, which crosses "
                                  f"{', '.join(crossed)}; give names from that list")
        kept = [n for n in crossed if (self.selection.datasets is None or n in self.selection.datasets)
                and n not in self.selection.exclude]
        if not kept:
            raise ConfigError(f"{self.selection.describe()}: leaves none of the datasets {self.path} crosses; keep at "
                              "least one")
        return kept

    def cell_config(self, cell: Cell) -> tuple[RunConfig, str]:
        """The run config of a cell (a copy), and where its relative paths start."""
        base, source = self.configs[cell.config]
        cfg = base.model_copy(deep=True)
        cfg.config.run_name = cell.id
        cfg.config.seed = cell.seed
        if cell.dataset is not None:
            given = next(d for d in self.spec.datasets if d.name == cell.dataset)
            entry = next((e for e in cfg.datasets.datasets if e.name == cell.dataset), None)
            args = {**(entry.args if entry is not None else {}), **given.args}
            cfg.datasets.datasets = [DatasetEntry(name=cell.dataset, args=args)]
        if cell.span is not None:
            cfg.datasets.set_for_all("memory_span", cell.span)
        if self.selection is not None:
            # A cell of one crossed dataset takes only --limit (its dataset was chosen above); any other cell the
            # whole selection, as `run` would.
            chosen = self.selection if cell.dataset is None else Selection(limit=self.selection.limit)
            if chosen.flags():
                select_datasets(cfg, chosen, source)
        return cfg, source

    @property
    def concurrency(self) -> int | None:
        return self.spec.concurrency


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` merged into `base`: mappings key by key, anything else replaced."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_study(path: str | Path, selection: Selection | None = None) -> Study:
    """The study file at `path`, checked: its configs load and its agents are known specs."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"study file {file} not found; give the path of a YAML study file")
    raw = read_yaml_mapping(file, "study", STUDY_EXPECTED)
    try:
        spec = StudyFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(str(file), exc)) from None
    try:
        check_agents([a.agent for a in spec.agents])  # an unknown kind or code that does not load, said now
    except LTMError as exc:
        raise ConfigError(f"{file}: agents: {exc}") from None
    return Study(file.resolve(), spec, selection)
