"""The syllabus rules: the seed's examples pass, each rule has a syllabus that breaks it."""

from __future__ import annotations

from typing import Any

import pytest

from ltm_harness._protocols.l2m.syllabus import SyllabusType, parse_syllabus
from ltm_harness._protocols.l2m.validate import Violation, validate


def P(label: str) -> dict[str, Any]:
    return {"$phase": label}


def R(task: str, count: int = 2, **params: Any) -> dict[str, Any]:
    return {"$repeat": {"$episode": task, **params}, "count": count}


OFF = {"$info": {"disable_updates": True}}
ON: dict[str, Any] = {"$info": {}}

# The user's document's examples, reduced to small counts.
SEED = {
    SyllabusType.CL: [P("1.train"), R("Pong", w=0.15), P("1.test"), OFF, R("Pong", w=0.20), R("Pong", w=0.15), ON,
                      P("2.train"), R("Pong", w=0.20), R("Pong", w=0.25),
                      P("2.test"), OFF, R("Pong", w=0.15), R("Pong", w=0.20), R("Pong", w=0.25), ON],
    SyllabusType.ANT_A: [P("1.train"), R("Pong"), P("1.test"), OFF, R("Freeway"), ON, P("2.train"), R("Breakout"),
                         P("2.test"), OFF, R("Pong"), R("Freeway"), ON],
    SyllabusType.ANT_B: [P("1.train"), R("Pong"), P("1.test"), OFF, R("Breakout"), ON, P("2.train"), R("Breakout"),
                         P("2.test"), OFF, R("Pong"), ON],
    SyllabusType.ANT_C: [P("1.train"), R("Pong", w=0.15), R("Pong", w=0.2), P("1.test"), OFF, R("Breakout", w=0.15),
                         R("Breakout", w=0.2), ON, P("2.train"), R("Breakout", w=0.15), R("Breakout", w=0.2),
                         P("2.test"), OFF, R("Pong", w=0.15), R("Pong", w=0.2), ON],
}


def check(instructions: list[dict[str, Any]], kind: SyllabusType | None = None) -> list[Violation]:
    return validate(parse_syllabus(instructions, "t.json"), kind, tasks=None)  # the structure: tasks are made up


@pytest.mark.parametrize("kind", list(SEED))
def test_the_documents_examples_are_valid_for_their_type(kind: SyllabusType) -> None:
    assert check(SEED[kind], kind) == []


def test_general_rules_alone_accept_every_example() -> None:
    for instructions in SEED.values():
        assert check(instructions) == []


def only(violations: list[Violation]) -> Violation:
    assert len(violations) == 1, [str(v) for v in violations]
    return violations[0]


def test_first_block_must_be_train() -> None:
    v = only(check([P("1.test"), R("a")]))
    assert (v.rule, v.instruction) == ("first-block-train", 0)
    assert "must start with a train block" in v.message


def test_phase_numbers_start_at_one() -> None:
    v = only(check([P("2.train"), R("a")]))
    assert (v.rule, v.instruction) == ("phase-numbering", 0)
    assert "start at 1" in v.message and "'1.train'" in v.message


def test_phase_numbers_must_not_decrease() -> None:
    v = only(check([P("1.train"), R("a"), P("2.train"), R("a"), P("1.test"), R("a")]))
    assert (v.rule, v.instruction) == ("phase-numbering", 4)
    assert "must increase" in v.message


def test_phase_numbers_must_not_skip() -> None:
    v = only(check([P("1.train"), R("a"), P("3.train"), R("a")]))
    assert (v.rule, v.instruction) == ("phase-numbering", 2)
    assert "increase by one" in v.message and "'2.train'" in v.message


def test_a_phase_label_appears_once() -> None:
    v = only(check([P("1.train"), R("a"), P("1.train"), R("a")]))
    assert (v.rule, v.instruction) == ("phase-numbering", 2)
    assert "appears again (first at instruction 0)" in v.message


def test_a_phase_trains_before_it_tests() -> None:
    v = only(check([P("1.train"), R("a"), P("2.test"), R("a"), P("2.train"), R("a")]))
    assert (v.rule, v.instruction) == ("phase-numbering", 4)
    assert "trains before it tests" in v.message


def test_episodes_need_a_phase_first() -> None:
    v = only(check([R("a"), P("1.train"), R("a")]))
    assert (v.rule, v.instruction) == ("episodes-before-phase", 0)


def test_every_phase_has_episodes() -> None:
    violations = check([P("1.train"), R("a"), P("1.test"), OFF, ON, P("2.train")])
    assert [(v.rule, v.instruction) for v in violations] == [("empty-phase", 2), ("empty-phase", 5)]


def test_disable_updates_left_on_into_a_train_phase() -> None:
    v = only(check([P("1.train"), R("a"), P("1.test"), OFF, R("a"), P("2.train"), R("a")]))
    assert (v.rule, v.instruction) == ("updates-left-disabled", 5)
    assert "instruction 3" in v.message and '{"$info": {}}' in v.message


def test_continual_learning_has_one_task() -> None:
    v = only(check([P("1.train"), R("a", w=1), R("b", w=1), P("1.test"), R("a", w=2)], SyllabusType.CL))
    assert (v.rule, v.instruction) == ("cl-single-task", 2)
    assert "has 2: a, b" in v.message


@pytest.mark.parametrize("kind", [SyllabusType.ANT_A, SyllabusType.ANT_B, SyllabusType.ANT_C])
def test_adapting_to_new_tasks_needs_test_phases(kind: SyllabusType) -> None:
    v = only(check([P("1.train"), R("a"), P("2.train"), R("b")], kind))
    assert (v.rule, v.instruction) == ("ant-test-phases", None)
    assert f"({kind.value}) must include test phases" in v.message


@pytest.mark.parametrize("kind", [SyllabusType.ANT_A, SyllabusType.ANT_B, SyllabusType.ANT_C])
def test_adapting_to_new_tasks_needs_several_tasks(kind: SyllabusType) -> None:
    v = only(check([P("1.train"), R("a"), P("1.test"), R("a")], kind))
    assert v.rule == "ant-several-tasks"


@pytest.mark.parametrize("kind", [SyllabusType.ANT_A, SyllabusType.ANT_B])
def test_subtypes_a_and_b_forbid_parametric_variation(kind: SyllabusType) -> None:
    v = only(check([P("1.train"), R("a", size=5), R("b"), P("1.test"), R("a", size=6), R("b")], kind))
    assert (v.rule, v.instruction) == ("ant-no-variation", 4)
    assert "task 'a' runs with 2 parameter sets" in v.message and '{"size": 6}' in v.message


def test_subtype_c_allows_parametric_variation() -> None:
    assert check([P("1.train"), R("a", size=5), R("b"), P("1.test"), R("a", size=6), R("b")], SyllabusType.ANT_C) == []


def test_every_broken_rule_is_reported_once_in_file_order() -> None:
    violations = check([R("a", k=1), P("1.test"), R("a", k=1), R("a", k=2), P("3.train")], SyllabusType.ANT_A)
    assert [v.rule for v in violations] == [
        "episodes-before-phase", "first-block-train", "ant-no-variation", "phase-numbering", "empty-phase",
        "ant-several-tasks"]
    assert str(violations[0]).startswith("instruction 0: episodes come before")
    assert str(violations[-1]).endswith("[ant-several-tasks]")
