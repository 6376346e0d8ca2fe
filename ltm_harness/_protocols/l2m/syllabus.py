"""L2M-style syllabi: the instruction list, loading it from JSON, and expanding it into regimes.

A syllabus file is a JSON list of instructions, or an object `{"instructions": [...]}` that may also
declare its `type` (CL, ANT_A, ANT_B, ANT_C) and a `description`:

    {"$phase": "1.train"}                                   start phase 1's training block
    {"$repeat": {"$episode": "bandit", "arms": 3}, "count": 20}   20 episodes of task bandit(arms=3)
    {"$episode": "bandit", "arms": 3}                       one episode (same as count 1)
    {"$info": {"disable_updates": true}}                    no reward feedback from here ...
    {"$info": {}}                                           ... until here

Expansion follows the l2logger nomenclature: a *block* is one phase annotation's run of episodes
(all of one block type, numbered from 0 in the log), a *regime* is a run of episodes of one task with
one parameter set inside a block, and an *experience* is one episode (numbered from 0 over the whole
syllabus).
"""

from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from ltm_harness._guard import jsonsafe
from ltm_harness._guard.limits import MAX_COUNT, clip
from ltm_harness._guard.files import read_text
from ltm_harness._errors import DefinitionError
from ltm_harness._resources import shipped

SYLLABI_DIR = shipped("syllabi")
PHASE_LABEL = re.compile(r"^([0-9]+)\.(train|test)$")
BlockType = Literal["train", "test"]


class SyllabusType(str, Enum):
    """The L2M syllabus types the validator knows."""

    CL = "CL"  # Continual Learning: one task, parametric variation
    ANT_A = "ANT_A"  # Adapting to New Tasks A: several tasks, no parametric variation (forgetting)
    ANT_B = "ANT_B"  # Adapting to New Tasks B: several tasks, no parametric variation (transfer)
    ANT_C = "ANT_C"  # Adapting to New Tasks C: several tasks with parametric variation


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PhaseInstruction(_Strict):
    """`{"$phase": "N.train"}` or `{"$phase": "N.test"}`: the start of a phase's train or test block."""

    phase: str = Field(alias="$phase")

    @field_validator("phase")
    @classmethod
    def _label(cls, v: str) -> str:
        if not PHASE_LABEL.match(v):
            raise ValueError('must be "N.train" or "N.test" with N a phase number, e.g. "1.train"')
        return v

    @property
    def number(self) -> int:
        return int(self.phase.split(".")[0])

    @property
    def block_type(self) -> BlockType:
        return "train" if self.phase.endswith(".train") else "test"


class EpisodeSpec(_Strict):
    """One episode of a task: `{"$episode": TASK, PARAM: value, ...}`."""

    task: str = Field(alias="$episode", min_length=1)
    params: dict[str, JsonValue] = Field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> "EpisodeSpec":
        params = {k: v for k, v in raw.items() if k != "$episode"}
        for key in params:
            if key.startswith("$"):
                raise ValueError(f"unknown directive {key!r} in an episode (only $episode starts with $)")
        return cls.model_validate({"$episode": raw.get("$episode"), "params": params})

    def params_json(self) -> str:
        """The parameters as canonical JSON (sorted keys): the identity of a parameter set."""
        return json.dumps(self.params, sort_keys=True)


class RepeatInstruction(_Strict):
    """`{"$repeat": {"$episode": TASK, ...}, "count": n}`: n episodes of one task and parameter set."""

    episode: EpisodeSpec = Field(alias="$repeat")
    count: int = Field(ge=1, le=MAX_COUNT, strict=True)


class EpisodeInstruction(_Strict):
    """`{"$episode": TASK, ...}`: a single episode."""

    episode: EpisodeSpec

    @property
    def count(self) -> int:
        return 1


class InfoBody(_Strict):
    disable_updates: bool = Field(default=False, strict=True)


class InfoInstruction(_Strict):
    """`{"$info": {"disable_updates": true}}` turns reward feedback off; `{"$info": {}}` turns it back on."""

    info: InfoBody = Field(alias="$info")


Instruction = Union[PhaseInstruction, RepeatInstruction, EpisodeInstruction, InfoInstruction]
_DIRECTIVES = ("$phase", "$repeat", "$episode", "$info")


class Syllabus(_Strict):
    """A parsed syllabus. `source` names where it came from (for messages)."""

    source: str
    instructions: list[Instruction]
    declared_type: SyllabusType | None = None
    description: str | None = None

    @property
    def name(self) -> str:
        return Path(self.source).stem if self.source else "syllabus"


class Regime(_Strict):
    """A run of episodes of one task and parameter set in one block: the unit the runner plays."""

    regime_num: int  # index of this regime in the expansion
    block_num: int  # index of its phase block (the log's block_num)
    phase: str  # its phase annotation, e.g. "2.test"
    block_type: BlockType
    task: str
    params: dict[str, JsonValue]
    count: int
    updates_disabled: bool  # a test block, or $info disable_updates in force: no reward feedback
    first_exp: int  # the experience number of its first episode
    instruction: int  # index of the instruction it comes from

    @property
    def exp_nums(self) -> range:
        return range(self.first_exp, self.first_exp + self.count)


# -- loading ---------------------------------------------------------------------------------------------


def _instruction_error(source: str, index: int, exc: ValidationError | ValueError, raw: dict[str, Any]) -> DefinitionError:
    if isinstance(exc, ValidationError):
        err = next((e for e in exc.errors() if e["type"] == "extra_forbidden"), exc.errors()[0])
        loc = [str(p) for p in err["loc"] if p not in ("episode",)]
        field = ".".join(loc) or next(k for k in raw if k in _DIRECTIVES)
        if err["type"] == "extra_forbidden":
            return DefinitionError(f"{source}: instruction {index}: unknown field {field!r}; remove it or fix its spelling")
        if err["type"] == "missing":
            return DefinitionError(f"{source}: instruction {index}: field {field!r} is missing; add it")
        message = str(err["msg"]).removeprefix("Value error, ")
        return DefinitionError(f"{source}: instruction {index}: {field}: {message} (got {clip(err.get('input'))}); fix the value")
    return DefinitionError(f"{source}: instruction {index}: {exc}; fix the instruction")


def parse_instruction(source: str, index: int, raw: object) -> Instruction:
    """One instruction from its JSON value, or a DefinitionError naming the file, the index and the field."""
    if not isinstance(raw, dict):
        raise DefinitionError(f"{source}: instruction {index} must be a JSON object such as {{\"$phase\": \"1.train\"}} "
                        f"(got {json.dumps(raw)[:60]}); fix the instruction")
    present = [k for k in _DIRECTIVES if k in raw]
    if "$repeat" in present:
        present = ["$repeat"]  # the episode is nested inside the repeat; a stray top-level $episode is caught below
    if len(present) != 1:
        what = "none" if not present else " and ".join(present)
        raise DefinitionError(f"{source}: instruction {index} must hold exactly one of $phase, $repeat, $episode, $info "
                        f"(found {what}); fix the instruction")
    try:
        if present[0] == "$phase":
            return PhaseInstruction.model_validate(raw)
        if present[0] == "$info":
            body = raw.get("$info")
            if not isinstance(body, dict):
                raise ValueError('$info must be an object, e.g. {"disable_updates": true} or {}')
            return InfoInstruction.model_validate(raw)
        if present[0] == "$episode":
            return EpisodeInstruction(episode=EpisodeSpec.from_json(raw))
        body = raw.get("$repeat")
        if not isinstance(body, dict) or "$episode" not in body:
            raise ValueError('$repeat must be an object naming the task, e.g. {"$episode": "bandit", "arms": 3}')
        extra = [k for k in raw if k not in ("$repeat", "count")]
        if extra:
            raise ValueError(f"unknown field {extra[0]!r} next to $repeat (only \"count\" belongs there)")
        if "count" not in raw:
            raise ValueError('a $repeat needs "count", the number of episodes (at least 1)')
        return RepeatInstruction.model_validate({"$repeat": EpisodeSpec.from_json(body), "count": raw["count"]})
    except (ValidationError, ValueError) as exc:
        raise _instruction_error(source, index, exc, raw) from None


class _SyllabusFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instructions: list[Any]
    type: SyllabusType | None = None
    description: str | None = None


def parse_syllabus(raw: object, source: str) -> Syllabus:
    """A syllabus from its JSON value (a list of instructions, or an object with `instructions`)."""
    declared: SyllabusType | None = None
    description: str | None = None
    if isinstance(raw, dict):
        try:
            wrapper = _SyllabusFile.model_validate(raw)
        except ValidationError as exc:
            err = next((e for e in exc.errors() if e["type"] == "extra_forbidden"), exc.errors()[0])
            field = ".".join(str(p) for p in err["loc"]) or "instructions"
            if err["type"] == "extra_forbidden":
                raise DefinitionError(f"{source}: unknown top-level field {field!r}; a syllabus object has "
                                "instructions, type and description") from None
            if err["type"] == "missing":
                raise DefinitionError(f"{source}: the syllabus object needs an \"instructions\" list; add it") from None
            raise DefinitionError(f"{source}: {field}: {str(err['msg']).removeprefix('Value error, ')} "
                            f"(got {clip(err.get('input'))}); fix the value") from None
        items, declared, description = wrapper.instructions, wrapper.type, wrapper.description
    elif isinstance(raw, list):
        items = raw
    else:
        raise DefinitionError(f"{source}: a syllabus is a JSON list of instructions (or an object with an "
                        "\"instructions\" list); fix the file")
    if not items:
        raise DefinitionError(f"{source}: the syllabus has no instructions; add at least a $phase and a $repeat")
    instructions = [parse_instruction(source, i, item) for i, item in enumerate(items)]
    return Syllabus(source=source, instructions=instructions, declared_type=declared, description=description)


def resolve_syllabus_path(name: str) -> Path:
    """A file path, or the name of a shipped syllabus in syllabi/ (with or without .json)."""
    path = Path(name)
    if path.is_file():
        return path
    for candidate in (SYLLABI_DIR / name, SYLLABI_DIR / f"{name}.json"):
        if candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.stem for p in SYLLABI_DIR.glob("*.json"))) or "none"
    raise DefinitionError(f"syllabus {name!r} not found; give a JSON file path or a shipped syllabus ({shipped})")


def load_syllabus(name: str | Path) -> Syllabus:
    """Load a syllabus JSON file (or a shipped syllabus by name) with a clear error for malformed input."""
    path = resolve_syllabus_path(str(name))
    try:
        raw = jsonsafe.loads(read_text(path))
    except jsonsafe.TooDeep as exc:
        raise DefinitionError(f"{path}: JSON {exc}; fix the file") from None
    except json.JSONDecodeError as exc:
        raise DefinitionError(f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
                        "fix the syntax") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not a UTF-8 text file; give a syllabus JSON file") from None
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read it ({exc.strerror or exc}); check the path and its permissions") from None
    return parse_syllabus(raw, str(path))


# -- expansion -------------------------------------------------------------------------------------------


def expand(syllabus: Syllabus) -> list[Regime]:
    """The regimes the syllabus plays, in order. Needs a $phase before the first episode.

    A test block never gives reward feedback; `$info disable_updates` switches it off in any block until
    `{"$info": {}}` (or the end of the syllabus)."""
    regimes: list[Regime] = []
    phase: PhaseInstruction | None = None
    block_num = -1
    disabled = False
    exp = 0
    for index, ins in enumerate(syllabus.instructions):
        if isinstance(ins, PhaseInstruction):
            phase = ins
            block_num += 1
        elif isinstance(ins, InfoInstruction):
            disabled = ins.info.disable_updates
        else:
            if phase is None:
                raise DefinitionError(f"{syllabus.source}: instruction {index}: episodes come before the first $phase "
                                "annotation; start the syllabus with {\"$phase\": \"1.train\"}")
            regimes.append(Regime(
                regime_num=len(regimes), block_num=block_num, phase=phase.phase, block_type=phase.block_type,
                task=ins.episode.task, params=dict(ins.episode.params), count=ins.count,
                updates_disabled=disabled or phase.block_type == "test", first_exp=exp, instruction=index,
            ))
            exp += ins.count
    return regimes


def single_task_syllabus(syllabus: Syllabus, task: str) -> Syllabus:
    """The single-task-expert syllabus for `task`: its training episodes only, in order, as one train phase."""
    instructions: list[Instruction] = [PhaseInstruction.model_validate({"$phase": "1.train"})]
    for regime in expand(syllabus):
        if regime.task == task and regime.block_type == "train" and not regime.updates_disabled:
            spec = EpisodeSpec.model_validate({"$episode": task, "params": regime.params})
            instructions.append(RepeatInstruction.model_validate({"$repeat": spec, "count": regime.count}))
    if len(instructions) == 1:
        raise DefinitionError(f"{syllabus.source}: task {task!r} is never trained, so it has no single-task expert")
    return Syllabus(source=f"{syllabus.name}-ste-{task}", instructions=instructions)
