"""Reading JSON out of a reply (`extract_json`) and the word overlap datasets score with: the first JSON value in the
reply, read strictly or with the slips LLMs make, never guessed, and bounded for hostile replies."""

from __future__ import annotations

import json

from ltm_harness._guard.jsonsafe import MAX_SCAN_ATTEMPTS
from ltm_harness._guard.limits import MAX_JSON_DEPTH
from ltm_harness._scoring.rules import MAX_JSON5_CHARS, extract_json, word_overlap


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def test_the_first_value_wins_whichever_bracket_opens_it():
    assert extract_json('Here you go: [1, 2] and {"a": 1} and [3]') == [1, 2]
    assert extract_json('Here you go: {"a": 1} and [3]') == {"a": 1}
    assert extract_json('first {"a": 1} then {"b": 2}') == {"a": 1}


def test_text_in_brackets_that_is_no_json_is_passed_over():
    assert extract_json('{not json} then [1, 2]') == [1, 2]
    assert extract_json('[unclosed {"a": 1}') == {"a": 1}
    assert extract_json('[[1, 2]') == [1, 2]  # the outer list never closes; the inner one is read
    assert extract_json('{[1]}') == [1]  # balanced but not JSON: the next opener, one character on
    assert extract_json('x1 [not json') is None  # nothing readable: no number picked out of the prose


def test_the_slips_llms_make_are_read_and_strings_are_respected():
    assert extract_json("{'a': 'it\\'s ] here', 'b': [1, 2,],}") == {"a": "it's ] here", "b": [1, 2]}
    assert extract_json('{"a": "quote \\" and } inside",} tail') == {"a": 'quote " and } inside'}
    assert extract_json("{X: [1, 2,], Y: 'Z',}") == {"X": [1, 2], "Y": "Z"}
    assert extract_json("{'a': 1,}x") == {"a": 1}  # the value ends at its closing brace
    assert extract_json("{'a': '\\'', 'b': [1],}") == {"a": "'", "b": [1]}  # an escaped quote ends no string


def test_nesting_up_to_the_limit_is_read_deeper_values_are_skipped():
    assert extract_json(nested(40, "1,")) == json.loads(nested(40))  # JSON5, deeper than pyjson5's own default
    assert extract_json(nested(MAX_JSON_DEPTH, "1,")) == json.loads(nested(MAX_JSON_DEPTH))
    assert extract_json(nested(MAX_JSON_DEPTH + 1, "1,")) == json.loads(nested(MAX_JSON_DEPTH))  # the outermost is skipped
    assert extract_json(nested(MAX_JSON_DEPTH + 1)) == json.loads(nested(MAX_JSON_DEPTH))  # strict JSON too
    assert extract_json(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))


def test_a_long_strict_value_is_read_after_prose():
    big = [1] * (MAX_JSON5_CHARS // 2)  # more than MAX_JSON5_CHARS of JSON text: only the strict reader takes it
    assert len(json.dumps(big)) > MAX_JSON5_CHARS
    assert extract_json("Here is the list: " + json.dumps(big)) == big


def test_at_most_a_bounded_number_of_places_is_tried():
    assert extract_json("[x] " * (MAX_SCAN_ATTEMPTS - 1) + "[1]") == [1]
    assert extract_json("[x] " * MAX_SCAN_ATTEMPTS + "[1]") is None


def test_word_overlap():
    assert word_overlap("The capital is Kestrel, by the sea.", "Kestrel by the sea") == 1.0
    assert word_overlap("Kestrel", "Kestrel by the sea") == 0.25
    assert word_overlap("anything at all", "") == 0.0  # an empty expected answer matches nothing
