"""The GoodAI LTM Benchmark's files as they are: a test definition (`<Dataset Name>/<id>.def.json`) and the run's
`config.yml`, read into models that refuse what they do not know (so a change of the reference's format shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ltm_harness._guard import yamlsafe
from ltm_harness._guard.files import read_text
from ltm_harness._errors import DefinitionError
from ltm_harness._runner.config import describe_validation_error

CONFIG_FILE = "config.yml"  # the reference's own config file, beside its dataset folders


class ReferenceWait(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tokens: int = Field(default=0, ge=0)
    time: float = Field(default=0.0, ge=0)
    percentage_finished: float = Field(default=0.0, ge=0, le=100)


class ReferenceTest(BaseModel):
    """A reference `*.def.json`. Fields this harness has no use for are refused, so a format change shows.

    Three generations are read. Benchmark 3 gives `waits` (tokens, time, percentage of the memory span) after each
    line. Benchmark 1 gives `time_jumps` (seconds) and `token_spacings` (tokens) after each line instead, and names its
    scoring function in `evaluation_fn` (this harness scores by dataset, so that name is not used); they are read
    as the same waits. Benchmark 2 uses `waits` with older contents for some datasets (see the converters)."""

    model_config = ConfigDict(extra="forbid")
    script: list[str]
    is_question: list[bool]
    waits: list[ReferenceWait] = Field(default_factory=list)
    expected_responses: list[Any] = Field(default_factory=list)
    can_be_interleaved: bool = True
    is_temporal: bool = False
    uses_callback: bool = False
    # Benchmark 1
    time_jumps: list[float] | None = None
    token_spacings: list[int] | None = None
    evaluation_fn: str | None = None
    reset_message: str | None = None

    @field_validator("expected_responses", mode="before")
    @classmethod
    def _one_answer_as_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v  # e.g. Locations: "They are in the same location."

    @field_validator("time_jumps", "token_spacings")
    @classmethod
    def _not_negative(cls, v: list[float] | list[int] | None) -> Any:
        if v is not None and any(x < 0 for x in v):
            raise ValueError("must not hold negative values")
        return v

    @model_validator(mode="after")
    def _waits_of_benchmark_1(self) -> "ReferenceTest":
        if self.time_jumps is None and self.token_spacings is None:
            return self
        if self.waits:
            raise ValueError("has both waits (Benchmark 3) and time_jumps/token_spacings (Benchmark 1); keep one")
        jumps, spacings = self.time_jumps or [], self.token_spacings or []
        self.waits = [ReferenceWait(tokens=spacings[i] if i < len(spacings) else 0,
                                    time=jumps[i] if i < len(jumps) else 0.0) for i in range(len(self.script))]
        return self


class ReferenceDatasetEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ReferenceDatasets(BaseModel):
    model_config = ConfigDict(extra="allow")
    args: dict[str, Any] = Field(default_factory=dict)
    datasets: list[ReferenceDatasetEntry] = Field(default_factory=list)


class ReferenceRunSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    run_name: str = ""
    incompatibilities: list[list[str]] = Field(default_factory=list)


class ReferenceConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    config: ReferenceRunSection = Field(default_factory=ReferenceRunSection)
    datasets: ReferenceDatasets = Field(default_factory=ReferenceDatasets)


def read_reference_config(source: Path) -> ReferenceConfig | None:
    path = source / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        raw = yamlsafe.load(read_text(path))
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        raise DefinitionError(f"{path}: not a valid YAML file; fix it or remove it and pass --span") from None
    try:
        return ReferenceConfig.model_validate(raw if isinstance(raw, dict) else {})
    except ValidationError as exc:
        raise DefinitionError(describe_validation_error(str(path), exc)) from None


def read_test(path: Path) -> ReferenceTest:
    try:
        return ReferenceTest.model_validate_json(read_text(path))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise DefinitionError(f"{path}: {where}: {err['msg']}; it is not a test definition of the GoodAI LTM Benchmark, "
                        "fix or remove it") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file; it is not a test definition of the GoodAI LTM Benchmark, "
                        "remove it") from None
