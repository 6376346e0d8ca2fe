"""Reading replies as actions and answers: the documented rules, and failures that never crash."""

from __future__ import annotations

import pytest

from ltm_harness.envs import InvalidAction, Space, parse_action, parse_answers

MOVES = Space(description="a move", choices=("up", "down", "left", "right"))
ARMS = Space(description="an arm", low=1, high=5)


@pytest.mark.parametrize("reply,expected", [
    ('{"action": "left"}', "left"),
    ('I think so. {"action": "LEFT"} because of the wall', "left"),
    ('{"move": "up"} {"action": "down"}', "down"),  # the first object *with* an action
    ('```json\n{"action": "right"}\n```', "right"),
    ("Action: up", "up"),
    ("action = Down", "down"),
    ("left", "left"),
    ("Left.", "left"),
    ("I will go right now.", "right"),
    ("Going up would hit a wall... Action: left", "left"),  # the action line settles a mention
    ('{"action": "up"} then maybe left', "up"),  # JSON settles it
])
def test_actions_by_name(reply, expected):
    assert parse_action(reply, MOVES) == expected


@pytest.mark.parametrize("reply,reason", [
    ("", "no allowed action"),
    ("I don't know.", "no allowed action"),
    ("upward", "no allowed action"),  # whole words only
    ("left or right?", "several actions: left, right"),
    ('{"action": "jump"}', "'jump' is not an allowed action"),
    ('{"action": 3}', "3 is not an allowed action"),
    ("action: jump", "'jump' is not an allowed action"),
    ('Reply with one of: up, down, left or right (or as JSON: {"action": <your choice>}).', "several actions"),
])
def test_unreadable_actions_are_invalid_with_the_reply(reply, reason):
    out = parse_action(reply, MOVES)
    assert isinstance(out, InvalidAction) and reason in out.reason and out.reply == reply


@pytest.mark.parametrize("reply,expected", [
    ("3", 3),
    ("I pull arm 2.", 2),
    ('{"action": 4}', 4),
    ('{"action": "5"}', 5),
    ('{"action": 2.0}', 2),
    ("action: 1", 1),
    ("2nd arm, so: 4", 4),  # "2nd" is not a number
    ("arm 3 (I pulled it 99 times)", 3),  # numbers outside the range do not count
])
def test_actions_by_number(reply, expected):
    assert parse_action(reply, ARMS) == expected


@pytest.mark.parametrize("reply", ["", "none", "arm 2 or arm 3", '{"action": 6}', '{"action": true}', "arm 1.5",
                                   '{"action": <your number>}'])
def test_unreadable_numbers(reply):
    assert isinstance(parse_action(reply, ARMS), InvalidAction)


def test_a_non_string_reply_does_not_crash():
    assert isinstance(parse_action(None, MOVES), InvalidAction)  # type: ignore[arg-type]


@pytest.mark.parametrize("reply,expected", [
    ('["apple", "pear", "plum"]', ["apple", "pear", "plum"]),
    ('Here: ["apple", "pear"] and that is all', ["apple", "pear", None]),
    ('["a", "b", "c", "d"]', ["a", "b", "c"]),
    ('{"answers": ["x", 7, null]}', ["x", "7", None]),
    ("1. apple\n2) pear\n3: plum", ["apple", "pear", "plum"]),
    ("2. pear\n1. apple", ["apple", "pear", None]),
    ("[not json]\n1. apple", ["apple", None, None]),
    ("see 1. apple", [None, None, None]),  # numbers start a line
    ("I cannot decode these.", [None, None, None]),
    ("", [None, None, None]),
])
def test_answers(reply, expected):
    assert parse_answers(reply, 3) == expected


def test_numbered_answers_of_a_later_page():
    assert parse_answers("5. apple\n6. pear\n1. wrong", 2, first_number=5) == ["apple", "pear"]
