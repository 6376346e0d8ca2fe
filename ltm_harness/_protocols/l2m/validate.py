"""Syllabus validation: the L2M structure rules, one violation (with one clear message) per broken rule.

Rules for every syllabus (the phase annotations the metrics rely on):

- `episodes-before-phase`: every episode comes after a `$phase` annotation.
- `first-block-train`: the first block is a train block.
- `phase-numbering`: phase numbers start at 1 and increase by one (`N.train` then optionally `N.test`,
  then `N+1.train` ...); a label never repeats and `N.train` never follows `N.test`.
- `empty-phase`: every phase annotation is followed by at least one episode.
- `updates-left-disabled`: `{"$info": {"disable_updates": true}}` is closed with `{"$info": {}}` before
  the next train phase starts (otherwise that training would give no feedback).
- `task`: every task is a known environment (built-in, registered, installed, or `file.py:Class`) and its params
  are ones the environment takes (checked by making it, as the run does). Params that are legal but likely a
  mistake (a bandit whose arms all pay alike: it teaches nothing) give a *warning* of this rule, which neither
  fails `syllabus validate` nor stops a run.

Rules by type:

- CL (Continual Learning): `cl-single-task`, exactly one task (parameters may vary).
- ANT_A, ANT_B, ANT_C (Adapting to New Tasks): `ant-test-phases`, at least one test phase with
  episodes; `ant-several-tasks`, at least two distinct tasks.
- ANT_A and ANT_B: `ant-no-variation`, each task is always run with the same parameters.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from ltm_harness._errors import LTMError
from ltm_harness._protocols.l2m.syllabus import InfoInstruction, PhaseInstruction, Syllabus, SyllabusType
from ltm_harness._protocols.l2m.tasks import TaskFactory, env_task_factory


class Violation(BaseModel):
    """One broken rule: its id, where (instruction index, when it has one place) and what to do."""

    model_config = ConfigDict(frozen=True)

    rule: str
    message: str
    instruction: int | None = None
    warning: bool = False  # legal but likely a mistake: shown, never refused

    def __str__(self) -> str:
        where = f"instruction {self.instruction}: " if self.instruction is not None else ""
        return f"{'warning: ' if self.warning else ''}{where}{self.message} [{self.rule}]"


def _general(syllabus: Syllabus) -> list[Violation]:
    out: list[Violation] = []
    seen: dict[str, int] = {}
    prev: PhaseInstruction | None = None
    open_phase: tuple[int, PhaseInstruction] | None = None  # the phase annotation still waiting for an episode
    disabled_at: int | None = None
    for index, ins in enumerate(syllabus.instructions):
        if isinstance(ins, InfoInstruction):
            disabled_at = index if ins.info.disable_updates else None
            continue
        if not isinstance(ins, PhaseInstruction):
            if prev is None:
                if not any(v.rule == "episodes-before-phase" for v in out):
                    out.append(Violation(rule="episodes-before-phase", instruction=index,
                                         message="episodes come before the first $phase annotation; start the "
                                                 "syllabus with {\"$phase\": \"1.train\"}"))
            open_phase = None
            continue
        if open_phase is not None:
            out.append(_empty(*open_phase))
        open_phase = (index, ins)
        if prev is None:
            if ins.block_type != "train":
                out.append(Violation(rule="first-block-train", instruction=index,
                                     message=f"the first block is {ins.phase!r}, but a syllabus must start with a "
                                             "train block; put {\"$phase\": \"1.train\"} and its episodes first"))
            if ins.number != 1:
                out.append(Violation(rule="phase-numbering", instruction=index,
                                     message=f"phase numbers start at 1, but the first annotation is {ins.phase!r}; "
                                             f"renumber it {'1.' + ins.block_type!r}"))
        elif ins.phase in seen:
            out.append(Violation(rule="phase-numbering", instruction=index,
                                 message=f"phase {ins.phase!r} appears again (first at instruction {seen[ins.phase]}); "
                                         "give each train or test phase its own number"))
        elif ins.number < prev.number:
            out.append(Violation(rule="phase-numbering", instruction=index,
                                 message=f"phase numbers must increase, but {ins.phase!r} comes after "
                                         f"{prev.phase!r}; renumber the phases in order"))
        elif ins.number > prev.number + 1:
            out.append(Violation(rule="phase-numbering", instruction=index,
                                 message=f"phase numbers must increase by one, but {ins.phase!r} follows "
                                         f"{prev.phase!r}; number it {str(prev.number + 1) + '.' + ins.block_type!r}"))
        elif ins.number == prev.number and prev.block_type == "test" and ins.block_type == "train":
            out.append(Violation(rule="phase-numbering", instruction=index,
                                 message=f"{ins.phase!r} follows {prev.phase!r}, but a phase trains before it tests; "
                                         f"number it {str(ins.number + 1) + '.train'!r}"))
        if ins.block_type == "train" and disabled_at is not None:
            out.append(Violation(rule="updates-left-disabled", instruction=index,
                                 message=f"train phase {ins.phase!r} starts while disable_updates (instruction "
                                         f"{disabled_at}) is still on; close it with {{\"$info\": {{}}}} first"))
        seen.setdefault(ins.phase, index)
        prev = ins
    if open_phase is not None:
        out.append(_empty(*open_phase))
    return out


def _empty(index: int, phase: PhaseInstruction) -> Violation:
    return Violation(rule="empty-phase", instruction=index,
                     message=f"phase {phase.phase!r} has no episodes; add a $repeat after it or remove it")


def _episodes(syllabus: Syllabus) -> list[tuple[int, str, str, str | None]]:
    """(instruction index, task, canonical params, block type or None before any phase) per episode instruction."""
    out: list[tuple[int, str, str, str | None]] = []
    block: str | None = None
    for index, ins in enumerate(syllabus.instructions):
        if isinstance(ins, PhaseInstruction):
            block = ins.block_type
        elif not isinstance(ins, InfoInstruction):
            out.append((index, ins.episode.task, ins.episode.params_json(), block))
    return out


def _by_type(syllabus: Syllabus, kind: SyllabusType) -> list[Violation]:
    out: list[Violation] = []
    episodes = _episodes(syllabus)
    tasks = list(dict.fromkeys(task for _, task, _, _ in episodes))
    label = kind.value
    if kind is SyllabusType.CL:
        if len(tasks) > 1:
            second = next(i for i, task, _, _ in episodes if task != tasks[0])
            out.append(Violation(rule="cl-single-task", instruction=second,
                                 message=f"a Continual Learning (CL) syllabus exercises a single task, but this one "
                                         f"has {len(tasks)}: {', '.join(tasks)}; vary the parameters of one task, or "
                                         "validate it as an ANT type"))
        return out
    if not any(block == "test" for _, _, _, block in episodes):
        out.append(Violation(rule="ant-test-phases",
                             message=f"an Adapting to New Tasks syllabus ({label}) must include test phases, but "
                                     "this one has none with episodes; add {\"$phase\": \"N.test\"} blocks after "
                                     "the training phases"))
    if len(tasks) < 2:
        out.append(Violation(rule="ant-several-tasks",
                             message=f"an Adapting to New Tasks syllabus ({label}) exercises several distinct "
                                     f"tasks, but this one has {len(tasks)} ({', '.join(tasks) or 'none'}); add "
                                     "another task, or validate it as CL"))
    if kind in (SyllabusType.ANT_A, SyllabusType.ANT_B):
        for task in tasks:
            variants = list(dict.fromkeys(p for _, t, p, _ in episodes if t == task))
            if len(variants) > 1:
                where = next(i for i, t, p, _ in episodes if t == task and p != variants[0])
                out.append(Violation(rule="ant-no-variation", instruction=where,
                                     message=f"{label} allows no parametric variation, but task {task!r} runs with "
                                             f"{len(variants)} parameter sets ({'; '.join(variants)}); use one "
                                             "parameter set per task, or validate it as ANT_C"))
    return out


def _tasks(syllabus: Syllabus, factory: TaskFactory) -> list[Violation]:
    out: list[Violation] = []
    checked: set[tuple[str, str]] = set()
    for index, task, params, _ in _episodes(syllabus):
        if (task, params) in checked:
            continue
        checked.add((task, params))
        try:
            made = factory(task, json.loads(params), 0)
        except LTMError as exc:
            out.append(Violation(rule="task", instruction=index, message=str(exc)))
            continue
        env = getattr(made, "env", None)
        header = getattr(env, "header", None)
        for warning in getattr(header, "warnings", ()):
            out.append(Violation(rule="task", instruction=index, message=f"task {task!r}: {warning}", warning=True))
    return out


def validate(syllabus: Syllabus, kind: SyllabusType | None = None,
             tasks: TaskFactory | None = env_task_factory) -> list[Violation]:
    """Every rule the syllabus breaks (general rules, and those of `kind` when given), in file order, and the warnings
    (`warning` set); `tasks` makes each task variant once to check its name and params (None: the structure only)."""
    found = (_general(syllabus) + (_by_type(syllabus, kind) if kind is not None else [])
             + (_tasks(syllabus, tasks) if tasks is not None else []))
    return sorted(found, key=lambda v: (v.instruction is None, v.instruction or 0))
