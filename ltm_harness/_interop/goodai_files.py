"""The GoodAI LTM Benchmark's files as they are: a test definition (`<Dataset Name>/<id>.def.json`) and the run's
`config.yml`, read into models that refuse what they do not know (so a change of the reference's format shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
    """A reference `*.def.json`. Fields this harness has no use for are refused, so a format change shows."""

    model_config = ConfigDict(extra="forbid")
    script: list[str]
    is_question: list[bool]
    waits: list[ReferenceWait] = Field(default_factory=list)
    expected_responses: list[Any] = Field(default_factory=list)
    can_be_interleaved: bool = True
    is_temporal: bool = False
    uses_callback: bool = False

    @field_validator("expected_responses", mode="before")
    @classmethod
    def _one_answer_as_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v  # e.g. Locations: "They are in the same location."


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
