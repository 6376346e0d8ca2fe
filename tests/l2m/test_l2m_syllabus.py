"""Loading syllabus JSON (the seed's examples and malformed input) and expanding it into regimes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._protocols.l2m.syllabus import (
    SYLLABI_DIR,
    EpisodeInstruction,
    InfoInstruction,
    PhaseInstruction,
    RepeatInstruction,
    SyllabusType,
    expand,
    load_syllabus,
    parse_syllabus,
    single_task_syllabus,
)

# The Continual Learning example of the user's document, as written there (an "instructions" object).
SEED_CL = {"instructions": [
    {"$phase": "1.train"},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.15}, "count": 5000},
    {"$phase": "1.test"},
    {"$info": {"disable_updates": True}},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.20}, "count": 100},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.15}, "count": 100},
    {"$info": {}},
    {"$phase": "2.train"},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.20}, "count": 5000},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.25}, "count": 5000},
    {"$phase": "2.test"},
    {"$info": {"disable_updates": True}},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.15}, "count": 100},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.20}, "count": 100},
    {"$repeat": {"$episode": "Pong", "bot/paddle/width": 0.25}, "count": 100},
    {"$info": {}},
]}


def write(tmp_path: Path, value: object, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def test_seed_example_loads_with_every_instruction_kind(tmp_path: Path) -> None:
    syllabus = load_syllabus(write(tmp_path, SEED_CL))
    kinds = [type(i) for i in syllabus.instructions]
    assert kinds[:4] == [PhaseInstruction, RepeatInstruction, PhaseInstruction, InfoInstruction]
    repeat = syllabus.instructions[1]
    assert isinstance(repeat, RepeatInstruction)
    assert (repeat.episode.task, repeat.episode.params, repeat.count) == ("Pong", {"bot/paddle/width": 0.15}, 5000)
    info = syllabus.instructions[3]
    assert isinstance(info, InfoInstruction) and info.info.disable_updates is True
    assert syllabus.declared_type is None
    assert syllabus.name == "s"


def test_a_plain_list_and_a_single_episode_load(tmp_path: Path) -> None:
    syllabus = load_syllabus(write(tmp_path, [{"$phase": "1.train"}, {"$episode": "bandit", "arms": 2}]))
    episode = syllabus.instructions[1]
    assert isinstance(episode, EpisodeInstruction)
    assert (episode.episode.task, episode.episode.params, episode.count) == ("bandit", {"arms": 2}, 1)


def test_object_form_declares_type_and_description(tmp_path: Path) -> None:
    syllabus = load_syllabus(write(tmp_path, {"type": "ANT_B", "description": "d",
                                              "instructions": [{"$phase": "1.train"}]}))
    assert syllabus.declared_type is SyllabusType.ANT_B
    assert syllabus.description == "d"


def test_expansion_numbers_blocks_regimes_and_experiences(tmp_path: Path) -> None:
    regimes = expand(load_syllabus(write(tmp_path, SEED_CL)))
    assert [(r.block_num, r.block_type, r.params["bot/paddle/width"], r.count) for r in regimes] == [
        (0, "train", 0.15, 5000), (1, "test", 0.20, 100), (1, "test", 0.15, 100),
        (2, "train", 0.20, 5000), (2, "train", 0.25, 5000),
        (3, "test", 0.15, 100), (3, "test", 0.20, 100), (3, "test", 0.25, 100)]
    assert [r.first_exp for r in regimes] == [0, 5000, 5100, 5200, 10200, 15200, 15300, 15400]
    assert [r.regime_num for r in regimes] == list(range(8))
    assert [r.updates_disabled for r in regimes] == [False, True, True, False, False, True, True, True]
    assert [r.phase for r in regimes][:3] == ["1.train", "1.test", "1.test"]
    assert regimes[1].exp_nums == range(5000, 5100)
    assert regimes[4].instruction == 9


def test_disable_updates_in_a_train_phase_holds_until_info_is_cleared(tmp_path: Path) -> None:
    regimes = expand(load_syllabus(write(tmp_path, [
        {"$phase": "1.train"}, {"$info": {"disable_updates": True}},
        {"$repeat": {"$episode": "t"}, "count": 1}, {"$info": {}}, {"$repeat": {"$episode": "t"}, "count": 2}])))
    assert [(r.block_type, r.updates_disabled, r.count) for r in regimes] == [("train", True, 1), ("train", False, 2)]


def test_expansion_refuses_episodes_before_any_phase(tmp_path: Path) -> None:
    syllabus = load_syllabus(write(tmp_path, [{"$repeat": {"$episode": "t"}, "count": 1}]))
    with pytest.raises(LTMError, match=r"instruction 0: episodes come before the first \$phase"):
        expand(syllabus)


@pytest.mark.parametrize("value, message", [
    ("[{\"$phase\": \"1.train\"},", "not valid JSON at line 1"),
    ({"phases": []}, "unknown top-level field 'phases'"),
    ({"type": "CL"}, "needs an \"instructions\" list"),
    ({"type": "XL", "instructions": [{"$phase": "1.train"}]}, "type: Input should be"),
    ("3", "a syllabus is a JSON list of instructions"),
    ([], "has no instructions"),
    ([["$phase", "1.train"]], "instruction 0 must be a JSON object"),
    ([{"$phase": "1.train"}, {"count": 3}], "instruction 1 must hold exactly one of .* \\(found none\\)"),
    ([{"$phase": "1.train", "$info": {}}], "instruction 0 must hold exactly one of .*found \\$phase and \\$info"),
    ([{"$phase": "1.learn"}], "instruction 0: \\$phase: must be \"N.train\" or \"N.test\""),
    ([{"$phase": "1.train", "x": 1}], "instruction 0: unknown field 'x'"),
    ([{"$repeat": {"$episode": "t"}, "count": 0}], "instruction 0: count: Input should be greater than or equal to 1"),
    ([{"$repeat": {"$episode": "t"}}], "instruction 0: a \\$repeat needs \"count\""),
    ([{"$repeat": {"$episode": "t"}, "count": 2, "times": 3}], "instruction 0: unknown field 'times' next to \\$repeat"),
    ([{"$repeat": {"arms": 3}, "count": 2}], "instruction 0: \\$repeat must be an object naming the task"),
    ([{"$repeat": {"$episode": 7}, "count": 2}], "instruction 0: \\$episode: Input should be a valid string"),
    ([{"$repeat": {"$episode": "t", "$seed": 1}, "count": 2}], "instruction 0: unknown directive '\\$seed'"),
    ([{"$info": True}], "instruction 0: \\$info must be an object"),
    ([{"$info": {"disable_update": True}}], "instruction 0: unknown field '\\$info.disable_update'"),
    ([{"$info": {"disable_updates": "yes"}}], "instruction 0: \\$info.disable_updates: Input should be a valid boolean"),
])
def test_malformed_syllabi_name_the_file_and_the_place(tmp_path: Path, value: object, message: str) -> None:
    path = write(tmp_path, value)
    with pytest.raises(LTMError, match=message) as info:
        load_syllabus(path)
    assert str(info.value).startswith(str(path))


def test_missing_file_lists_the_shipped_syllabi() -> None:
    with pytest.raises(LTMError, match="syllabus 'no-such' not found; .*cl-bandit"):
        load_syllabus("no-such")


def test_shipped_syllabi_load_by_name() -> None:
    names = sorted(p.stem for p in SYLLABI_DIR.glob("*.json"))
    assert {"cl-bandit", "ant-a-bandit-guess"} <= set(names)
    for name in names:
        assert load_syllabus(name).declared_type is not None


def test_not_utf8_is_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe[")
    with pytest.raises(LTMError, match="not a UTF-8 text file"):
        load_syllabus(path)


def test_single_task_syllabus_keeps_only_that_tasks_training() -> None:
    syllabus = parse_syllabus([
        {"$phase": "1.train"}, {"$repeat": {"$episode": "a", "k": 1}, "count": 3},
        {"$info": {"disable_updates": True}}, {"$repeat": {"$episode": "a", "k": 1}, "count": 9}, {"$info": {}},
        {"$phase": "1.test"}, {"$repeat": {"$episode": "a", "k": 1}, "count": 4},
        {"$phase": "2.train"}, {"$repeat": {"$episode": "b"}, "count": 5}, {"$repeat": {"$episode": "a", "k": 2}, "count": 2},
    ], "x.json")
    expert = expand(single_task_syllabus(syllabus, "a"))
    assert [(r.block_num, r.block_type, r.params, r.count) for r in expert] == [
        (0, "train", {"k": 1}, 3), (0, "train", {"k": 2}, 2)]
    with pytest.raises(LTMError, match="task 'c' is never trained"):
        single_task_syllabus(syllabus, "c")


def test_count_must_be_a_whole_number_not_text(tmp_path: Path) -> None:
    with pytest.raises(LTMError, match="instruction 0: count: Input should be a valid integer"):
        load_syllabus(write(tmp_path, [{"$repeat": {"$episode": "t"}, "count": "3"}]))
