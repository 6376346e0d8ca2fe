"""Agents by spec, and the agents a run is given.

A spec is a kind with an optional argument (`retrieval`, `recent:2000`, `openai:gpt-4o-mini@8k`), an agent's URL
(`http://127.0.0.1:8080/chat`), or the agent's own code (`my_agent.py:MyAgent`, `my_package.agents:MyAgent`).
Kinds come from the agent registry: the built-in ones, those registered in code (`ltm_harness.register_agent`) and
those installed packages declare (`ltm_harness.agents` entry points). Built-in kinds whose framework is an optional
extra (`langgraph:`, `openai-agents:`: `Builtin.extra`) import it only when used, and say in one line how to install
it when it is missing. `NAME=SPEC` gives the agent a name, used for
its folder, in tables and in reports; otherwise the spec is its name (a URL without any password or query).

From the library an agent may also be given as an object: an `Agent` instance (used for one conversation), an
`Agent` subclass or a function returning an agent (called for each conversation), or `(name, any of these)`.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence, Union

from ltm_harness._guard.limits import exception_line
from ltm_harness._guard.redact import redact
from ltm_harness._agents.base import Agent
from ltm_harness._errors import AgentError, ConfigError, DefinitionError
from ltm_harness._registry.core import Entry, Registry
from ltm_harness._registry.loading import code_source, is_object_spec, load_object
from ltm_harness._store.layout import slug, taken_entry

AgentFactory = Callable[[], Agent]
AgentLike = Union[str, Agent, type[Agent], Callable[[], Agent], tuple[str, Any]]
NAMED = re.compile(r"^([A-Za-z0-9_.-]+)=(.+)$")  # NAME=SPEC


@dataclass(frozen=True)
class AgentKind:
    """How agents of a kind are made: `make(spec, **options)` (options it does not take are not given).

    `options`: the config sections whose settings its agents are given (the run's `openai:` and `http:` sections,
    and `llm`: the run's shared LLM runtime, for prices); None: the section named like the kind."""

    make: Callable[..., Agent]
    description: str
    argument: bool | None = None  # the spec takes an argument (True), takes none (False), or may (None)
    options: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Extra:
    """An optional extra of the package that a kind of agent needs: `pip install "ltm-harness[NAME]"` brings the
    top-level `modules` its adapter imports (a framework and its parts)."""

    name: str
    modules: tuple[str, ...]

    @property
    def install(self) -> str:
        return f'pip install "ltm-harness[{self.name}]"'

    def installed(self) -> bool:
        """Whether its modules can be imported (found without importing them, so `list` stays fast)."""
        import importlib.util

        try:
            return all(importlib.util.find_spec(module) is not None for module in self.modules)
        except (ImportError, ValueError):  # a module set to None in sys.modules, or a broken one
            return False

    def missing(self, exc: ImportError) -> bool:
        """The import failed because one of its modules is not installed (not because of a bug)."""
        name = getattr(exc, "name", None) or ""
        return isinstance(exc, ModuleNotFoundError) and name.split(".")[0] in self.modules


@dataclass(frozen=True)
class Builtin:
    """An agent kind the harness ships: its adapter class `module.cls` in ltm_harness._agents, imported when the kind
    is used (with its framework: an `extra`, when the framework is an optional dependency)."""

    kind: str
    module: str
    cls: str
    argument: bool | None
    description: str
    extra: Extra | None = None
    options: tuple[str, ...] | None = None


LANGCHAIN = Extra("langchain", ("langgraph", "langchain_core"))
OPENAI_AGENTS = Extra("openai-agents", ("agents",))
MEM0 = Extra("mem0", ("mem0", "qdrant_client"))
LETTA = Extra("letta", ("letta_client",))

_BUILTINS = (
    Builtin("oracle", "baselines", "OracleAgent", None,
            "calibration agent handed the expected answers; scores 1.0 (oracle@N: only what it was told in its last N "
            "tokens, so scores step down at N)"),
    Builtin("null", "baselines", "NullAgent", False, 'no memory: always answers "I don\'t know."; scores about 0'),
    Builtin("recent", "baselines", "RecentAgent", True,
            "recent:N remembers only the last N tokens it was told and answers from them"),
    Builtin("retrieval", "baselines", "RetrievalAgent", False,
            "remembers everything it was told and answers with the best BM25 matches"),
    Builtin("openai", "openai_chat", "OpenAIChatAgent", True,
            "openai:MODEL[@max_context] any OpenAI-compatible chat endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)"),
    Builtin("http", "http_agent", "HTTPAgent", True,
            "http://HOST:PORT/PATH an agent behind HTTP (JSON protocol: docs/http-agent.md)"),
    Builtin("langgraph", "frameworks.langgraph", "LangGraphAgent", True,
            "langgraph:FILE.py:NAME or langgraph:MODULE:NAME a LangGraph graph or LangChain Runnable, one thread per "
            "conversation, kept in the run folder (docs/agents/langgraph.md)", LANGCHAIN, ("llm",)),
    Builtin("openai-agents", "frameworks.openai_agents", "OpenAIAgentsAgent", True,
            "openai-agents:FILE.py:NAME or openai-agents:MODULE:NAME an OpenAI Agents SDK Agent, one SQLiteSession "
            "per conversation, kept in the run folder (docs/agents/openai-agents.md)", OPENAI_AGENTS, ("openai",)),
    Builtin("mem0", "frameworks.mem0", "Mem0Agent", None,
            "mem0[:CONFIG.yml] a chat model (an openai: model) with mem0 memory, searched before each reply and added "
            "to after it; its store kept in the run folder (docs/agents/mem0.md)", MEM0, ("openai",)),
    Builtin("letta", "frameworks.letta", "LettaAgent", True,
            "letta:http://HOST:PORT[/AGENT] an agent on a Letta server (a new one, or a copy of AGENT, per "
            "conversation), exported into the run folder after each turn (docs/agents/letta.md)", LETTA,
            ("http", "llm")),
)


def _adapter_class(builtin: Builtin, spec: str) -> Any:
    """The adapter class of a built-in kind, imported now (with its framework)."""
    import importlib

    try:
        module = importlib.import_module(f"ltm_harness._agents.{builtin.module}")
    except ImportError as exc:
        if builtin.extra is not None and builtin.extra.missing(exc):
            raise AgentError(f"agent {spec!r}: the {builtin.kind} adapter needs the {builtin.extra.name} extra "
                             f"({exc.name} is not installed); install it with: {builtin.extra.install}") from None
        raise
    return getattr(module, builtin.cls)


def _builtins() -> Iterator[Entry[AgentKind]]:
    for builtin in _BUILTINS:
        def make(spec: str, builtin: Builtin = builtin, **options: Any) -> Agent:
            return make_with(_adapter_class(builtin, spec), spec, options)

        source = "built-in"
        if builtin.extra is not None:
            extra = builtin.extra
            source += f" (extra {extra.name})" if extra.installed() else f", needs: {extra.install}"
        yield Entry(builtin.kind, AgentKind(make, builtin.description, builtin.argument, builtin.options), source,
                    builtin.description)


def _accept(obj: Any, where: str) -> Iterator[Entry[AgentKind]]:
    """An Agent subclass, or a function making an agent from its spec."""
    if isinstance(obj, AgentKind):
        yield Entry("", obj, where, obj.description)
    elif isinstance(obj, type) and issubclass(obj, Agent):
        description = getattr(obj, "description", "") or (obj.__doc__ or "").strip().split("\n")[0]
        yield Entry("", AgentKind(lambda spec, **options: make_with(obj, spec, options), description), where,
                    description)
    elif callable(obj):
        yield Entry("", AgentKind(lambda spec, **options: make_with(obj, spec, options), ""), where, "")
    else:
        raise DefinitionError(f"{where}: {obj!r} is not an agent (an ltm_harness.Agent subclass, or a function "
                              "returning one)")


AGENTS: Registry[AgentKind] = Registry("agent", "ltm_harness.agents", _accept, builtins=_builtins,
                                       error=AgentError, hint="`python -m ltm_harness list` shows them")


def register_agent(name: str, agent: type[Agent] | Callable[..., Agent], description: str = "") -> None:
    """Make agents of kind `name` known to every run of this process: `-a NAME` or `-a NAME:ARG` then makes one
    with `agent(spec)` (an Agent subclass, or a function of the spec returning an agent)."""
    kind = next(_accept(agent, name)).value
    AGENTS.register(AgentKind(kind.make, description or kind.description, kind.argument),
                    code_source(agent), name=name)


def _takes(fn: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or C callable: give it nothing extra
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(options)
    return {k: v for k, v in options.items() if k in params}


def make_with(make: Callable[..., Any], spec: str, options: dict[str, Any] | None = None) -> Agent:
    """An agent from an Agent subclass or a function returning one: given the spec (or the agent's name) when it
    takes an argument, and the options its signature names. Whatever goes wrong is an AgentError."""
    try:
        params = list(inspect.signature(make).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: give it nothing
        params = []
    takes_spec = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                     and p.name not in (options or {}) for p in params)
    what = getattr(make, "__qualname__", None) or repr(make)
    try:
        made = make(spec, **_takes(make, options or {})) if takes_spec else make(**_takes(make, options or {}))
    except (AgentError, ConfigError, DefinitionError):
        raise
    except Exception as exc:
        raise AgentError(f"agent {spec!r}: making it with {what} failed ({exception_line(exc)}); fix it") from exc
    if not isinstance(made, Agent):
        raise AgentError(f"agent {spec!r}: {what} returned {type(made).__name__}, not an ltm_harness.Agent; return "
                         "an agent")
    return made


def _kind_name(spec: str) -> str:
    if spec.startswith(("http://", "https://")):
        return "http"
    name = spec.split(":", 1)[0]
    return "oracle" if name.startswith("oracle@") else name  # oracle@N: the oracle with a window


def agent_factory(spec: str, tokenizer: str | None = None,
                  options: dict[str, dict[str, Any]] | None = None) -> AgentFactory:
    """Check `spec` now and return a function that makes a fresh agent for it.

    `tokenizer` (the run's encoding) is handed to adapters that count tokens themselves, such as the context
    truncation of chat models, so that one tokenizer serves the whole run. `options` holds keyword settings per
    agent kind (from the config's `openai:` and `http:` sections)."""
    kind_name = _kind_name(spec)
    scope = AGENTS.scope()
    if kind_name in scope:
        kind = scope[kind_name]
        if kind.argument is False and spec != kind_name:
            raise AgentError(f"agent {spec!r}: {kind_name} takes no argument; write just {kind_name!r}")
        kwargs: dict[str, Any] = {}
        for section in kind.options or (kind_name,):
            kwargs.update((options or {}).get(section, {}))
    elif is_object_spec(spec):
        kind = next(_accept(load_object(spec, "agent", beside=True), spec)).value
        kwargs = {}
    else:
        kind = scope.find(spec)  # unknown: the registry's error, listing the known kinds
        kwargs = {}
    if tokenizer:
        kwargs["tokenizer"] = tokenizer
    checked = [kind.make(spec, **kwargs)]  # constructing validates the spec (no network is touched)

    def make() -> Agent:
        return checked.pop() if checked else kind.make(spec, **kwargs)

    return make


def display_spec(spec: str) -> str:
    """The spec as runs show and store it (folder names, events, summaries, reports): an agent URL loses any
    user:password and query, which may hold secrets. Everything else is shown as given."""
    if spec.startswith(("http://", "https://")):
        from ltm_harness._agents.http_agent import shown_url

        return shown_url(spec)
    return redact(spec)  # a key pasted into any other spec is masked too


@dataclass(frozen=True)
class AgentChoice:
    """An agent a run is given: its name (folder, tables, reports) and how to make it once the run's options
    are known (`factory(tokenizer, options)` returns a maker of fresh agents)."""

    name: str
    spec: str | None  # as given on the command line or in the config (None: an object)
    factory: Callable[[str | None, dict[str, dict[str, Any]]], AgentFactory]
    single: bool = False  # an instance: it can hold one conversation only

    @property
    def uses_openai(self) -> bool:
        """Its agents take the config's `openai:` section (so its key is needed)."""
        if self.spec is None:
            return False
        kind = AGENTS.scope().get(_kind_name(self.spec))
        return kind is not None and "openai" in (kind.options or (_kind_name(self.spec),))


def _object_choice(name: str | None, obj: Any) -> AgentChoice:
    if isinstance(obj, Agent):
        used = [obj]

        def one(tokenizer: str | None, options: dict[str, dict[str, Any]]) -> AgentFactory:
            def make() -> Agent:
                if not used:
                    raise ConfigError(f"agent {name or obj.name!r} was given as an instance, which holds one "
                                      "conversation; give its class (or a function making one) for runs with several "
                                      "sessions (isolated tests)")
                return used.pop()

            return make

        return AgentChoice(name or obj.name, None, one, single=True)
    if isinstance(obj, type) and issubclass(obj, Agent) or callable(obj):
        label = name or getattr(obj, "__name__", None) or type(obj).__name__

        def each(tokenizer: str | None, options: dict[str, dict[str, Any]]) -> AgentFactory:
            checked = [make_with(obj, label)]  # made now, so that one that cannot be made stops the run before it starts

            def make() -> Agent:
                return checked.pop() if checked else make_with(obj, label)

            return make

        return AgentChoice(label, None, each)
    raise ConfigError(f"agent {obj!r}: give a spec (such as 'retrieval'), an ltm_harness.Agent, its class, or a "
                      "function returning one")


def agent_choice(item: AgentLike) -> AgentChoice:
    """What a run is given as an agent, made one kind of thing."""
    if isinstance(item, tuple):
        if len(item) != 2 or not isinstance(item[0], str):
            raise ConfigError(f"agent {item!r}: give (name, agent) pairs")
        label, what = item
        return agent_choice(f"{label}={what}") if isinstance(what, str) else _object_choice(_checked_name(label), what)
    if not isinstance(item, str):
        return _object_choice(None, item)
    named = NAMED.match(item)
    name, spec = (_checked_name(named.group(1)), named.group(2)) if named else (None, item)

    def factory(tokenizer: str | None, options: dict[str, dict[str, Any]]) -> AgentFactory:
        return agent_factory(spec, tokenizer, options)

    return AgentChoice(name or display_spec(spec), spec, factory)


def _checked_name(name: str) -> str:
    if not name or slug(name) != name:
        raise ConfigError(f"agent name {name!r}: use letters, digits, '.', '_' and '-' only (it names a folder)")
    return name


def agent_choices(items: Sequence[AgentLike]) -> list[AgentChoice]:
    """The run's agents; refuses none, one given twice, or two that would share a folder."""
    if not items:
        raise ConfigError("no agent given; pass -a AGENT (e.g. -a retrieval) or list `agents` in the config")
    choices = [agent_choice(item) for item in items]
    names = [c.name for c in choices]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"agent {twice[0]!r} is given twice; give each -a once (or name them: -a NAME=SPEC)")
    folders: dict[str, str] = {}
    for choice in choices:
        if (taken := taken_entry(slug(choice.name))) is not None:
            raise ConfigError(f"agent {choice.name!r} would write its outputs to {taken}; name it differently "
                              "(-a NAME=SPEC, or import-answers' --name)")
        other = folders.setdefault(slug(choice.name), choice.name)
        if other != choice.name:
            raise ConfigError(f"agents {other!r} and {choice.name!r} would write to the same folder "
                              f"{slug(choice.name)!r}; name one of them differently (-a NAME=SPEC)")
    return choices


def check_agents(items: Sequence[AgentLike]) -> None:
    """Refuse, before a run starts, agents it cannot make: none, names given twice, unknown kinds, code that does not
    load or is not an agent. (Whether an endpoint answers is only known when the run calls it.)"""
    for choice in agent_choices(items):
        if choice.spec is None:
            continue
        kind_name = _kind_name(choice.spec)
        scope = AGENTS.scope()
        if kind_name in scope:
            continue
        if is_object_spec(choice.spec):
            next(_accept(load_object(choice.spec, "agent", beside=True), choice.spec))
        else:
            scope.find(choice.spec)  # unknown: the registry's error, listing the known kinds

