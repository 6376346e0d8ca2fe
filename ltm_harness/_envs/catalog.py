"""Tests by name: `make_env("keydoor", env_name="6x6", seed=3)`, and test specs such as
`keydoor,env_name=6x6,max_steps=30` for the command line."""

from __future__ import annotations

import json
import types
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, ValidationError

from ltm_harness._guard import jsonsafe
from ltm_harness._envs.bandit import Bandit
from ltm_harness._envs.base import Env
from ltm_harness._envs.cipher import Cipher
from ltm_harness._envs.guess import NumberGuess
from ltm_harness._envs.keydoor import KeyDoor
from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._registry.core import Entry, Registry
from ltm_harness._registry.loading import code_source

def _accept(obj: Any, where: str) -> Iterator[Entry[type[Env]]]:
    """An environment class, or every environment class a module defines."""
    if isinstance(obj, type) and issubclass(obj, Env):
        if not obj.test_name:
            raise DefinitionError(f"{where}: {obj.__qualname__} has no test_name; set the name it is known by")
        yield Entry(obj.test_name, obj, where, _describe(obj))
    elif isinstance(obj, types.ModuleType):
        for value in vars(obj).values():
            if isinstance(value, type) and issubclass(value, Env) and value.test_name and value.__module__ == obj.__name__:
                yield from _accept(value, where)
    else:
        raise DefinitionError(f"{where}: {obj!r} is not an environment (an ActiveEnv or PassiveEnv subclass)")


def _describe(cls: type[Env]) -> str:
    """The header's info of the environment with its default params (the class's docstring if it needs others)."""
    try:
        return f"{cls.kind}: {cls().header.info}"
    except Exception:
        return f"{cls.kind}: " + (cls.__doc__ or "").strip().split("\n")[0]


def _builtins() -> Iterator[Entry[type[Env]]]:
    for cls in (Bandit, KeyDoor, NumberGuess, Cipher):
        yield from _accept(cls, "built-in")


ENVIRONMENTS: Registry[type[Env]] = Registry(
    "environment", "ltm_harness.envs", _accept, builtins=_builtins, error=ConfigError,
    hint="`aiq --list` shows them with their params; register yours, or name it as module:Class")


def register_env(cls: type[Env]) -> type[Env]:
    """Make `cls` known by its `test_name` to `make_env`, test specs, the AIQ runner, syllabi and datasets (usable
    as a class decorator). A name can only be given to one class (or to a new version of the same class, when its
    module is loaded again)."""
    ENVIRONMENTS.register(cls, code_source(cls))
    return cls


def known_envs() -> list[str]:
    return list(ENVIRONMENTS.scope())


def env_class(name: str) -> type[Env]:
    """The environment class `name` (or a spec, `module:Class` or `path/to/file.py:Class`) names."""
    return ENVIRONMENTS.find(name)


def describe_params_error(name: str, exc: ValidationError) -> str:
    err = next((e for e in exc.errors() if e["type"] == "extra_forbidden"), exc.errors()[0])
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        known = ", ".join(["seed", *env_class(name).Params.model_fields])
        return f"environment {name!r}: unknown param {where!r}; known params: {known}; remove it or fix its spelling"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not where:
        return f"environment {name!r}: {msg}; fix the params"
    return f"environment {name!r}: {where}: {msg}; fix the value"


def make_env(name: str, seed: int = 0, **params: Any) -> Env:
    """A seeded environment by test name. `env_name` picks a sub-test of a test set (e.g. keydoor
    `6x6`), `config` a data folder where the test reads data. Errors are one-line `DefinitionError`s."""
    cls = env_class(name)
    try:
        return cls(seed=seed, **params)
    except ValidationError as exc:
        raise DefinitionError(describe_params_error(name, exc)) from None


class TestSpec(BaseModel):
    """A test to run: its name and params (no seed: trials draw theirs)."""

    model_config = ConfigDict(frozen=True)
    __test__ = False

    name: str
    params: dict[str, Any] = {}

    @property
    def label(self) -> str:
        """A readable unique name, e.g. `keydoor(env_name=6x6)`."""
        if not self.params:
            return self.name
        inner = ",".join(f"{k}={_show(v)}" for k, v in sorted(self.params.items()))
        return f"{self.name}({inner})"


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ""))


def _value(text: str) -> Any:
    """A param value from the command line: JSON when it parses (numbers, lists, true), else the text."""
    try:
        return jsonsafe.loads(text)
    except ValueError:
        return text


def parse_test_spec(spec: str) -> TestSpec:
    """`NAME[,KEY=VALUE...]`: values are JSON when they parse (`horizon=20`, `probabilities=[0.2,0.8]`),
    else text (`env_name=6x6`). Commas inside [...] or {...} do not split. Checks the name and params."""
    parts: list[str] = []
    depth, current = 0, ""
    for ch in spec:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    name = parts[0].strip()
    params: dict[str, Any] = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise DefinitionError(f"test {spec!r}: {part!r} is not KEY=VALUE; write e.g. {name},env_name=...")
        params[key.strip()] = _value(value.strip())
    if "seed" in params:
        raise DefinitionError(f"test {spec!r}: seed is drawn per trial from the run's seed; give --seed instead")
    make_env(name, **params)  # checks the name and the params now, with one clear error
    return TestSpec(name=name, params=params)
