"""`--set KEY=VALUE`: one value of a run config given on the command line, at a dotted path into the config as the
YAML file spells it, with a dataset of the list addressed by its name:

    config.seed=3                          config.judge.model=gpt-4o-mini      config.turns.attempts=5
    datasets.args.memory_span=8000         (every dataset's common value)
    datasets.locomo.args.data_file=~/locomo10.json                            datasets.locomo.args.mode=interleaved
    datasets.longmemeval.args.variant=oracle

The value is read as YAML (`3` a number, `true` a switch, `[1, 2]` a list, `null` nothing, anything else text) by
the same safe reader as config files, and the whole config is validated again by its pydantic models, so a wrong
value is refused exactly as in a file, in one line naming the `--set` it came from; a dataset's own arguments are
checked by the dataset when the run prepares it, as those of a file are."""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple, Sequence

from pydantic import ValidationError

from ltm_harness._errors import ConfigError
from ltm_harness._guard.limits import clip
from ltm_harness._runner.config import RunConfig, describe_validation_error

MAX_SETTING = 10_000  # characters of one --set
_KEY = re.compile(r"[A-Za-z_][\w\-]*(?:\.[A-Za-z_0-9][\w\-]*)*")
_DATASET_KEYS = ("args", "datasets")  # the keys of the datasets section itself; other names address a dataset


def parse_setting(given: str) -> tuple[list[str], Any]:
    """`KEY=VALUE` as (path, value); ConfigError in one line for a malformed one."""
    if len(given) > MAX_SETTING:
        raise ConfigError(f"--set {clip(given, 60)}: longer than {MAX_SETTING:,} characters; put the value in a config "
                          "file")
    key, eq, text = given.partition("=")
    key = key.strip()
    if not eq or not _KEY.fullmatch(key):
        raise ConfigError(f"--set {clip(given, 80)}: give KEY=VALUE with KEY a dotted path into the config, e.g. "
                          "config.seed=3 or datasets.locomo.args.data_file=PATH")
    from ltm_harness._guard.yamlsafe import load

    try:
        value = load(text) if text.strip() else None
    except Exception as exc:  # a YAMLError: the value as written is not YAML
        raise ConfigError(f"--set {_shown(given)}: the value {clip(text, 60)} is not a YAML value ({str(exc).splitlines()[0]}); "
                          "quote it as text, e.g. --set 'KEY=\"...\"'") from None
    return key.split("."), value


def apply_settings(cfg: RunConfig, settings: Sequence[str], source: str = "config") -> RunConfig:
    """`cfg` (read from `source`) with each `--set KEY=VALUE` of `settings` applied in order, validated again; a new
    RunConfig."""
    if not settings:
        return cfg
    data = cfg.model_dump(mode="python")  # keys stay SecretStr objects: validated again as they are
    for given in settings:
        path, value = parse_setting(given)
        _put(data, path, value, _shown(given))
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(_culprit(settings, exc, source), exc)) from None


def _culprit(settings: Sequence[str], exc: ValidationError, source: str) -> str:
    """Where the error the message reports comes from: the `--set` that gave the field (or a section holding it),
    else the config file."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = ".".join(str(p) for p in err["loc"])
    for given in reversed(settings):
        key = given.partition("=")[0].strip()
        if where == key or where.startswith(key + ".") or key.startswith(where + "."):
            return f"--set {_shown(given)}"
    return source


def dataset_setting_error(exc: ConfigError, settings: Sequence[str], names: Sequence[str]) -> ConfigError:
    """A dataset's refusal of its args (`datasets.datasets[0].args.mode: ...; fix the value`) said of the `--set`
    that gave the arg, when one did; `names` are the datasets of the config in order."""
    text = str(exc)
    for given in reversed(settings):
        path, _ = parse_setting(given)
        if len(path) >= 4 and path[0] == "datasets" and path[2] == "args" and path[1] in names:
            marker = f"datasets.datasets[{names.index(path[1])}].args.{path[3]}: "
            if marker in text:
                return ConfigError(f"--set {_shown(given)}: {text.split(marker, 1)[1]}")
    return exc


def _put(data: dict[str, Any], path: list[str], value: Any, key: str) -> None:
    top = path[0]
    if top == "config":
        if len(path) < 2:
            raise ConfigError(f"--set {key}: name a field of the config section, e.g. config.seed=3")
        _assign(data["config"], path[1:], value, key)
    elif top == "datasets":
        if len(path) < 3:
            raise ConfigError(f"--set {key}: give datasets.args.KEY (every dataset) or datasets.NAME.args.KEY (the "
                              "dataset NAME), e.g. datasets.locomo.args.data_file=PATH")
        section = data["datasets"]
        if path[1] == "args":
            _assign(section["args"], path[2:], value, key)
            return
        if path[1] == "datasets":
            raise ConfigError(f"--set {key}: address a dataset by its name, e.g. datasets.locomo.args.mode=interleaved")
        entries = [e for e in section["datasets"] if e.get("name") == path[1]]
        if not entries:
            listed = ", ".join(dict.fromkeys(e.get("name", "?") for e in section["datasets"])) or "none"
            raise ConfigError(f"--set {key}: the config has no dataset {clip(path[1], 60)} (it lists {listed}); give "
                              "one of those names")
        if path[2] != "args" or len(path) < 4:
            raise ConfigError(f"--set {key}: a dataset's settings are its args; give datasets.{path[1]}.args.KEY")
        for entry in entries:
            _assign(entry.setdefault("args", {}), path[3:], value, key)
    else:
        raise ConfigError(f"--set {key}: a path starts with config. or datasets., e.g. config.seed=3 or "
                          "datasets.locomo.args.mode=interleaved")


def _assign(mapping: dict[str, Any], path: list[str], value: Any, key: str) -> None:
    """`value` at `path` below `mapping`, making the mappings on the way (validation refuses unknown fields)."""
    for part in path[:-1]:
        inner = mapping.get(part)
        if inner is None:
            inner = mapping[part] = {}
        elif not isinstance(inner, dict):
            raise ConfigError(f"--set {key}: {part} is a value, not a section; set {part} itself")
        mapping = inner
    mapping[path[-1]] = value


def _shown(given: str) -> str:
    """A --set as typed, or clipped when long."""
    return given if len(given) <= 200 and given.isprintable() else clip(given, 200)


def setting_flags(settings: Sequence[str] | None) -> list[str]:
    """The command-line words that give `settings` again (for a resume hint)."""
    return [word for s in settings or [] for word in ("--set", s)]


class Given(NamedTuple):
    """A setting given on the command line: which (`memory_span`, `seed`, `distance`), as typed (`--span 8000`), and
    the dataset it is given for (None: every dataset)."""

    setting: str
    flag: str
    dataset: str | None = None


def given_settings(span: int | None, seed: int | None, settings: Sequence[str] | None) -> list[Given]:
    """The settings a dataset can make meaningless, as the command line gives them: --span, --seed and their --set
    forms (config.seed, datasets.args.memory_span, datasets.NAME.args.memory_span / distance)."""
    out = []
    if span is not None:
        out.append(Given("memory_span", f"--span {span}"))
    if seed is not None:
        out.append(Given("seed", f"--seed {seed}"))
    for given in settings or []:
        path, _ = parse_setting(given)
        flag = f"--set {given}"
        if path == ["config", "seed"]:
            out.append(Given("seed", flag))
        elif path[:2] == ["datasets", "args"] and path[2:] == ["memory_span"]:
            out.append(Given("memory_span", flag))
        elif len(path) == 4 and path[0] == "datasets" and path[2] == "args" and path[3] in ("memory_span", "distance"):
            out.append(Given(path[3], flag, path[1]))
    return out


def as_set_flag(dataset: str, arg: str, value: str) -> str:
    """An arg of a dataset as the command line sets it."""
    return f"--set datasets.{dataset}.args.{arg}={value}"


def meaningless(given: Sequence[Given], datasets: Sequence[tuple[str, Any]],
                setting: Callable[[str, str, str], str] = as_set_flag) -> tuple[str | None, list[str]]:
    """(an error, warnings) for settings the datasets of a run ignore: `datasets` is (name in the config, dataset),
    `setting` says how the fix is given (default: as `--set`). A setting every dataset it is given for ignores is an
    error naming what to set instead; one that only some ignore is a warning naming those."""
    warnings: list[str] = []
    for g in given:
        scope = [(name, d) for name, d in datasets if g.dataset in (None, name)]
        ignoring = [(name, *d.ignored_settings()[g.setting]) for name, d in scope if g.setting in d.ignored_settings()]
        if not ignoring:
            continue
        said = "; ".join(f"{name} {why}" for name, why, _ in ignoring)
        sets = [setting(name, k, v) for name, _, instead in ignoring for k, v in instead.items()]
        fix = f"add {' '.join(sets)}, or leave {g.flag} out" if sets else f"leave {g.flag} out"
        if len(ignoring) == len(scope):
            return f"{g.flag}: {said}; {fix}", warnings
        warnings.append(f"{g.flag}: {said}, so it is not used there" +
                        (f"; add {' '.join(sets)} to use it there" if sets else ""))
    return None, warnings
