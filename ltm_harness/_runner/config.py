"""Run configuration: YAML shaped like the reference benchmark's, validated by pydantic."""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from pydantic import (BaseModel, ConfigDict, Field, SecretStr, SerializationInfo, SerializerFunctionWrapHandler,
                      ValidationError, field_validator, model_serializer)

from ltm_harness._errors import ConfigError, option, option_name
from ltm_harness._guard.yamlsafe import read_yaml_mapping
from ltm_harness._guard.limits import (MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_EXAMPLES, MAX_MEMORY_SPAN, MAX_MESSAGE_TOKENS,
                                       MAX_REPLY_BYTES, MAX_SECONDS, MAX_SEED, clip)
from ltm_harness._llm.client import LLMSettings
from ltm_harness._resources import shipped

CONFIG_DIR = shipped("configs")
DEFAULT_CONFIG = CONFIG_DIR / "default.yml"
MAX_SECONDS_PER_TURN = 30 * 24 * 3600.0  # a month of virtual time per turn
START_TIME_MIN = datetime(1900, 1, 1, tzinfo=timezone.utc)
START_TIME_MAX = datetime(3000, 1, 1, tzinfo=timezone.utc)  # a run of years of virtual time still fits in datetime


class _Strict(BaseModel):
    # strict: `true` is not a number, "3" is not an int (YAML already gives numbers their types)
    model_config = ConfigDict(extra="forbid", strict=True)


class OpenAIOptions(_Strict):
    """Settings of `openai:` agents; each falls back to the environment (OPENAI_BASE_URL, OPENAI_API_KEY)."""

    base_url: str | None = None
    api_key_env: str | None = None  # the name of an environment variable holding the key (preferred)
    api_key: SecretStr | None = None  # the key itself; it is never written to any output
    system_prompt: str | None = None  # None: the built-in prompt
    temperature: float | None = Field(default=0.0, ge=0, le=100)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_MESSAGE_TOKENS)
    timeout: float | None = Field(default=None, gt=0, le=MAX_SECONDS)

    def agent_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"temperature": self.temperature}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(f"config.openai.api_key_env: the environment variable {self.api_key_env} is not set; "
                                "export it or change the name")
            kwargs["api_key"] = key
        elif self.api_key is not None:
            kwargs["api_key"] = self.api_key.get_secret_value()
        for name in ("system_prompt", "max_tokens", "timeout"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        return kwargs


class EndpointOptions(_Strict):
    """An OpenAI-compatible endpoint for the judge or test LLM; unset fields fall back to `config.openai`,
    then to the environment (OPENAI_BASE_URL, OPENAI_API_KEY)."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: SecretStr | None = None
    temperature: float | None = Field(default=0.0, ge=0, le=100)

    def endpoint_args(self, section: str, fallback: OpenAIOptions) -> tuple[str | None, str | None]:
        """(base_url, api_key) for this endpoint, checked now."""
        base_url = self.base_url or fallback.base_url
        if self.api_key_env or self.api_key is not None:
            source, env, key = section, self.api_key_env, self.api_key
        else:
            source, env, key = "openai", fallback.api_key_env, fallback.api_key
        if env:
            value = os.environ.get(env)
            if not value:
                raise ConfigError(f"config.{source}.api_key_env: the environment variable {env} is not set; "
                                "export it or change the name")
            return base_url, value
        return base_url, key.get_secret_value() if key is not None else None


class JudgeOptions(EndpointOptions):
    """`config.judge`: the LLM judge (off unless a model is set here or with --judge)."""

    prompt: str = "default"  # prompts/judge/<prompt>.json, or a path to a JSON file


class HTTPOptions(_Strict):
    """Settings of agents behind HTTP."""

    timeout: float | None = Field(default=None, gt=0, le=MAX_SECONDS)  # seconds per request (default 300, or LTM_HTTP_TIMEOUT)
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1024, le=1024**3)  # one reply body, decoded

    def agent_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_reply_bytes": self.max_reply_bytes}
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs


class TurnOptions(_Strict):
    """What a failing agent gets (config.turns): tries per turn, a time limit per try, the pause before the second
    try (doubling after), and how many failed turns in a row stop its session. A turn that fails every try errors
    the test it belongs to; the other tests go on."""

    attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS)
    timeout: float | None = Field(default=600.0, gt=0, le=MAX_SECONDS)  # seconds per try; null: no limit
    backoff: float = Field(default=0.5, ge=0, le=3600)
    give_up_after: int = Field(default=5, ge=1, le=1_000_000)
    retry_after_max: float = Field(default=300.0, ge=0, le=MAX_SECONDS)  # longest Retry-After an HTTP agent is waited


class Selection(_Strict):
    """Which of a config's datasets a run plays and how many examples of each: `run`'s `datasets`, `exclude` and
    `limit` (the command line's `--datasets`, `--exclude` and `--limit`), applied by `select_datasets` and saved
    with the run (run_config.json) so that a resume must give the same ones and a rescore plays the same tests."""

    datasets: list[str] | None = None  # only these (None: all of the config's)
    exclude: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1, le=MAX_EXAMPLES)  # at most this many examples per dataset

    @classmethod
    def given(cls, datasets: Sequence[str] | str | None = None, exclude: Sequence[str] | str | None = None,
              limit: int | None = None) -> Selection:
        """The selection a caller asks for, checked (one line naming the option when it is wrong): dataset names as
        a list or as "a,b" (None: every dataset of the config), at most `limit` examples each (None: all)."""
        for name, names in (("datasets", datasets), ("exclude", exclude)):
            if names is not None and not (isinstance(names, str) or (isinstance(names, (list, tuple))
                                                                     and all(isinstance(n, str) for n in names))):
                raise ConfigError(f"{option_name(name)}: give dataset names, as a list or as \"a,b\", not "
                                  f"{clip(names, 60)}")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise ConfigError(f"{option_name('limit')}: give a whole number of examples, not {clip(limit, 60)}")
            if limit < 1:
                raise ConfigError(f"{option('limit', limit)}: there must be at least 1 example per dataset; give "
                                  f"{option('limit', 1)} or more")
            if limit > MAX_EXAMPLES:
                raise ConfigError(f"{option('limit', limit)}: at most {MAX_EXAMPLES:,} examples per dataset; give a "
                                  f"smaller {option_name('limit')}")
        return cls(datasets=split_names(datasets) if datasets is not None else None, exclude=split_names(exclude),
                   limit=limit)

    def flags(self) -> list[str]:
        """The command-line options that make this selection (empty when it selects everything)."""
        out = []
        if self.datasets is not None:
            out += ["--datasets", ",".join(self.datasets)]
        if self.exclude:
            out += ["--exclude", ",".join(self.exclude)]
        if self.limit is not None:
            out += ["--limit", str(self.limit)]
        return out

    def describe(self) -> str:
        """The selection as its reader gives it: `--datasets a,b --limit 1` or `datasets=['a', 'b'] limit=1`."""
        given = [option(name, value) for name, value, on in (("datasets", self.datasets, self.datasets is not None),
                                                             ("exclude", self.exclude, bool(self.exclude)),
                                                             ("limit", self.limit, self.limit is not None)) if on]
        return " ".join(given) or (f"no {option_name('datasets')}, {option_name('exclude')} or "
                                   f"{option_name('limit')}")


class RunSection(_Strict):
    run_name: str = "default"
    seed: int = Field(default=0, ge=-MAX_SEED, le=MAX_SEED)
    incompatibilities: list[list[str]] = Field(default_factory=list)
    isolated: bool = False
    isolated_concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    max_message_tokens: int = Field(default=4096, ge=256, le=MAX_MESSAGE_TOKENS)
    seconds_per_turn: float = Field(default=10.0, ge=0, le=MAX_SECONDS_PER_TURN)
    start_time: datetime = Field(default=datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc), strict=False)
    tokenizer: str = "cl100k_base"
    agents: list[str] = Field(default_factory=list)
    dataset_dirs: list[str] = Field(default_factory=list)
    openai: OpenAIOptions = Field(default_factory=OpenAIOptions)
    http: HTTPOptions = Field(default_factory=HTTPOptions)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    judge: JudgeOptions = Field(default_factory=JudgeOptions)
    test_llm: EndpointOptions = Field(default_factory=EndpointOptions)  # the LLM test programs may call (ctx.llm)
    debug: bool = False  # accepted for configs written for the reference benchmark
    turns: TurnOptions = Field(default_factory=TurnOptions)
    watchdog: float | None = Field(default=86400.0, gt=0, le=MAX_SECONDS)  # seconds the whole run may take; then it stops, tests errored
    preflight: bool = True  # each agent checked once before the first turn (_runner/preflight.py)
    max_cost: float | None = Field(default=None, ge=0, le=1e9, strict=False)  # USD the run may spend (--max-cost)
    selection: Selection | None = None  # set by select_datasets; saved only when a selection was made

    @model_serializer(mode="wrap")
    def _without_empty_selection(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("selection") is None:
            data.pop("selection", None)  # configs of runs without a selection stay as they were
        if isinstance(data, dict) and data.get("preflight") is True:
            data.pop("preflight", None)  # the same for runs that keep the checks on
        if isinstance(data, dict) and data.get("max_cost") is None:
            data.pop("max_cost", None)  # and for runs without a budget
        return data

    @field_validator("incompatibilities")
    @classmethod
    def _pairs(cls, v: list[list[str]]) -> list[list[str]]:
        for pair in v:
            if len(pair) < 2:
                raise ValueError("each entry must list at least two dataset names, e.g. [names, name_list]")
        return v

    @field_validator("tokenizer")
    @classmethod
    def _offline_encoding(cls, v: str) -> str:
        from ltm_harness._tokens import SHIPPED_ENCODINGS

        if v not in SHIPPED_ENCODINGS:
            raise ValueError(f"must be one of {', '.join(SHIPPED_ENCODINGS)} (the encodings available offline)")
        return v

    @field_validator("start_time")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        v = v if v.tzinfo else v.replace(tzinfo=timezone.utc)
        if not START_TIME_MIN <= v <= START_TIME_MAX:
            raise ValueError(f"must be between {START_TIME_MIN.year} and {START_TIME_MAX.year - 1} (virtual time runs "
                             "on from it, so it must leave room)")
        return v


class DatasetDefaults(_Strict):
    memory_span: int = Field(default=4000, ge=500, le=MAX_MEMORY_SPAN)
    dataset_examples: int = Field(default=1, ge=1, le=MAX_EXAMPLES)


class DatasetEntry(_Strict):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    def common(self, defaults: DatasetDefaults) -> DatasetDefaults:
        return DatasetDefaults(
            memory_span=self.args.get("memory_span", defaults.memory_span),
            dataset_examples=self.args.get("dataset_examples", defaults.dataset_examples),
        )

    @property
    def params(self) -> dict[str, Any]:
        return {k: v for k, v in self.args.items() if k not in ("memory_span", "dataset_examples")}


class DatasetsSection(_Strict):
    args: DatasetDefaults = Field(default_factory=DatasetDefaults)
    datasets: list[DatasetEntry]

    def set_for(self, name: str, arg: str, value: object) -> int:
        """`arg` for every entry of the dataset `name`; how many there are."""
        entries = [e for e in self.datasets if e.name == name]
        for entry in entries:
            entry.args[arg] = value
        return len(entries)

    def set_for_all(self, arg: str, value: int) -> None:
        """`arg` (memory_span or dataset_examples) for every dataset: the common value, and no dataset's own."""
        setattr(self.args, arg, value)
        for entry in self.datasets:
            entry.args.pop(arg, None)


class RunConfig(_Strict):
    config: RunSection = Field(default_factory=RunSection)
    datasets: DatasetsSection

    def incompatible(self, a: str, b: str) -> bool:
        if a == b:
            return True
        return any(a in pair and b in pair for pair in self.config.incompatibilities)


def split_names(values: Sequence[str] | str | None) -> list[str]:
    """Names given as `a,b` (possibly repeated: ["a,b", "c"]), in order, each once, blanks dropped."""
    if values is None:
        return []
    out: list[str] = []
    for value in [values] if isinstance(values, str) else values:
        for name in value.split(","):
            name = name.strip()
            if name and name not in out:
                out.append(name)
    return out


def select_datasets(cfg: RunConfig, selection: Selection, source: str = "config") -> RunConfig:
    """Keep the config's datasets that `selection` names (all of them when it names none), drop those it excludes,
    and give each at most `selection.limit` examples; the selection is recorded in the config (so in
    run_config.json). Changes `cfg` in place and returns it. A name the config does not list is refused in one
    line that lists the names it does; a selection that leaves nothing is refused too. Used by `run`, `estimate`
    and grid studies alike."""
    listed = [entry.name for entry in cfg.datasets.datasets]
    for name, names in (("datasets", selection.datasets or []), ("exclude", selection.exclude)):
        unknown = [n for n in names if n not in listed]
        if unknown:
            raise ConfigError(f"{option(name, unknown)}: not {'a dataset' if len(unknown) == 1 else 'datasets'} "
                              f"of {source}, which lists {', '.join(listed) or 'none'}; give names from that list")
    keep = [entry for entry in cfg.datasets.datasets
            if (selection.datasets is None or entry.name in selection.datasets) and entry.name not in selection.exclude]
    if not keep:
        raise ConfigError(f"{selection.describe()}: leaves none of the datasets of {source} ({', '.join(listed)}); "
                          "select at least one")
    if selection.limit is not None:
        for entry in keep:
            n = entry.args.get("dataset_examples", cfg.datasets.args.dataset_examples)
            if isinstance(n, int) and n > selection.limit:  # a wrong value is left for prepare to report
                entry.args["dataset_examples"] = selection.limit
    cfg.datasets.datasets = keep
    if selection.flags():
        cfg.config.selection = selection
    return cfg


def _where(loc: tuple[Any, ...]) -> str:
    """A field's place as the file spells it (`config.turns.attempts`, `datasets.datasets[2]`); a key that is not a
    plain name (spaces, line breaks, a long string) is shown quoted and clipped, so the error stays one short line."""
    out = ""
    for part in loc:
        text = str(part) if isinstance(part, int) or _PLAIN_KEY.fullmatch(str(part)) else clip(str(part), 60)
        out += f"[{text}]" if isinstance(part, int) else (f".{text}" if out else text)
    return out or "(top level)"


_PLAIN_KEY = re.compile(r"[\w.\-@:/]{1,100}")


def describe_validation_error(source: str, exc: ValidationError) -> str:
    errors = exc.errors()
    # An unknown field explains the rest (a misspelt key also shows up as a missing one): report it first.
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = _where(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"{source}: {where}: unknown field; remove it or fix its spelling"
    if kind == "missing":
        return f"{source}: {where}: required field is missing; add it"
    return f"{source}: {where}: {str(err['msg']).removeprefix('Value error, ')} (got {clip(err.get('input'))}); fix the value"


def resolve_config_path(name: str) -> Path:
    """A path, or the name of a shipped config in configs/ (with or without .yml)."""
    path = Path(name)
    if path.is_file():
        return path
    if path.exists() and not path.is_dir():  # a FIFO or a device: never opened
        raise ConfigError(f"config {path}: not a regular file (a FIFO, device or socket); give a YAML file")
    for candidate in (CONFIG_DIR / name, CONFIG_DIR / f"{name}.yml"):
        if candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yml")))
    raise ConfigError(f"config {name!r} not found; give a YAML file path or one of the shipped configs: {shipped}")


def load_config(name: str | Path) -> RunConfig:
    path = resolve_config_path(str(name))
    raw = read_yaml_mapping(path, "config", f"a config with `config` and `datasets` sections (see {DEFAULT_CONFIG})")
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(str(path), exc)) from None
