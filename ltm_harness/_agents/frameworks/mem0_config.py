"""A mem0 agent's config file (`-a mem0:CONFIG.yml`), checked before mem0 is opened.

The harness's own parts (`chat`, `search`, `observe`) are pydantic models that forbid unknown keys. The `mem0:`
part is mem0's own config, checked against the installed mem0 (not a copy of its fields): its top-level keys
against `MemoryConfig`'s fields, the `llm` and `embedder` settings against the config class mem0 builds for their
provider (`LlmFactory.provider_to_class`, `BaseEmbedderConfig`), then the whole against `MemoryConfig` itself. mem0
ignores an unknown top-level key in silence and fails on an unknown provider setting only once it is opened, so
both are found here: one line naming the key and the nearest valid one (`difflib`), or its current name when it is
one mem0 renamed (`custom_fact_extraction_prompt`, the older docs' name, is now `custom_instructions`).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import inspect
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ltm_harness._errors import AgentError, LTMError
from ltm_harness._store.files import first_error

DEFAULT_MODEL = "gpt-4o-mini"
STORE_SETTINGS = {"collection_name", "embedding_model_dims", "on_disk"}
# keys of older mem0 releases (and their docs) and what they are called now
RENAMED = {"custom_fact_extraction_prompt": "custom_instructions", "custom_prompt": "custom_instructions"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatSettings(_Strict):
    """The chat model that answers (unset: the run config's `openai:` settings, else the defaults)."""

    model: str = DEFAULT_MODEL
    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)


class SearchSettings(_Strict):
    top_k: int = Field(default=10, ge=1, le=1000, description="memories handed to the chat model at most")
    threshold: float = Field(default=0.1, ge=0, le=1, description="the least similarity of a memory handed over")


class Mem0Settings(_Strict):
    """A mem0 agent's config file."""

    chat: ChatSettings = Field(default_factory=ChatSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    observe: Literal["infer", "raw"] = "infer"
    mem0: dict[str, Any] = Field(default_factory=dict)


def nearest(key: str, valid: Iterable[str]) -> str:
    """`; did you mean X?` for the valid key nearest `key` (difflib), or the valid keys when none is near."""
    names = sorted(valid)
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else f"; valid keys: {', '.join(names)}"


def _unknown(section: str, given: dict[str, Any], valid: Iterable[str], whose: str) -> str | None:
    """The line for the first key of `given` not in `valid` (None: all known)."""
    valid = set(valid)
    for key in given:
        if key not in valid:
            name = f"{section}.{key}" if section else str(key)
            if key in RENAMED and RENAMED[key] in valid:
                return f"{name} is the older name of {RENAMED[key]} ({whose}); rename it"
            return f"{name} is not a setting of {whose}{nearest(str(key), valid)}"
    return None


def _mem0_version() -> str:
    try:
        return "mem0 " + importlib.metadata.version("mem0ai")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - the extra installs it
        return "mem0"


def _provider_settings(part: str, provider: str) -> set[str] | None:
    """The settings mem0 takes in `part.config` for `provider` (None: not known here; MemoryConfig checks it)."""
    if part == "llm":
        from mem0.utils.factory import LlmFactory

        entry = LlmFactory.provider_to_class.get(provider)
        config_class: Any = entry[1] if entry else None
    else:
        from mem0.configs.embeddings.base import BaseEmbedderConfig

        config_class = BaseEmbedderConfig
    if config_class is None:
        return None
    params = inspect.signature(config_class).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL}


def check_mem0_section(mem0: dict[str, Any]) -> str | None:
    """What is wrong with the `mem0:` section (a line after `mem0.`), or None."""
    from mem0.configs.base import MemoryConfig

    whose = _mem0_version()
    said = _unknown("", mem0, MemoryConfig.model_fields, f"{whose}'s MemoryConfig")
    if said:
        return said
    for part in ("llm", "embedder"):
        section = mem0.get(part)
        if section is None:
            continue
        if not isinstance(section, dict):
            return f"{part} must be a mapping (provider: ..., config: {{...}})"
        said = _unknown(part, section, ("provider", "config"), f"{whose}'s {part} section")
        if said:
            return said
        provider = section.get("provider", "openai")
        settings = section.get("config") or {}
        if not isinstance(settings, dict):
            return f"{part}.config must be a mapping"
        valid = _provider_settings(part, str(provider))
        if valid is not None:
            said = _unknown(f"{part}.config", settings, valid, f"{whose}'s {provider} {part}")
            if said:
                return said
    try:
        MemoryConfig(**{k: v for k, v in mem0.items() if k != "vector_store"})
    except (ValidationError, ValueError, TypeError) as exc:
        return first_error(exc) if isinstance(exc, ValidationError) else str(exc)
    return None


def read_settings(spec: str, path: str | None) -> Mem0Settings:
    """The settings of `-a mem0[:CONFIG.yml]`; a bad file is one line naming it and the field."""
    if path is None:
        return Mem0Settings()
    from ltm_harness._guard.yamlsafe import read_yaml_mapping

    def bad(said: str) -> AgentError:
        return AgentError(f"agent {spec!r}: {path}: {said}; fix the file")

    try:
        raw = read_yaml_mapping(Path(path), "mem0 agent config", "a mem0 agent config (see examples/agents/mem0.yml)")
    except LTMError as exc:
        raise AgentError(f"agent {spec!r}: {exc}") from None
    said = _unknown("", raw, Mem0Settings.model_fields, "a mem0 agent config")
    for part, model in (("chat", ChatSettings), ("search", SearchSettings)):
        if said is None and isinstance(raw.get(part), dict):
            said = _unknown(part, raw[part], model.model_fields, "a mem0 agent config")
    if said:
        raise bad(said)
    try:
        settings = Mem0Settings.model_validate(raw)
    except ValidationError as exc:
        raise bad(first_error(exc)) from None
    store = settings.mem0.get("vector_store") or {}
    if not isinstance(store, dict) or store.get("provider", "qdrant") != "qdrant" \
            or not set((store.get("config") or {})) <= STORE_SETTINGS:
        raise AgentError(f"agent {spec!r}: {path}: mem0.vector_store: the adapter keeps mem0's store in the run "
                         f"folder (local Qdrant); give only its {', '.join(sorted(STORE_SETTINGS))}")
    if "history_db_path" in settings.mem0:
        raise AgentError(f"agent {spec!r}: {path}: mem0.history_db_path: the adapter keeps mem0's history DB in the "
                         "run folder; remove the setting")
    said = check_mem0_section(settings.mem0)
    if said:
        raise bad(f"mem0.{said}")
    return settings
