"""Property-based tests (hypothesis) of what reads outside input: config loading, reply parsing and the JSON readers.

For any input: no exception but the documented one (a user error, or a ValueError where the function says so), no
hang (the reply parsers' work is counted: function calls, Python's and C's, stay within a bound linear in the reply's
length; no wall-clock deadline, which a loaded machine made flaky), and bounded memory (tracemalloc's peak per example stays under a cap far below
what an unbounded expansion would take).
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ltm_harness._envs.header import Space
from ltm_harness._envs.parsing import parse_action, parse_answers
from ltm_harness._errors import ConfigError, DefinitionError, LTMError, RunFolderError
from ltm_harness._guard import jsonsafe, yamlsafe
from ltm_harness._guard.body import BoundedBody, TooLarge
from ltm_harness._guard.limits import clip
from ltm_harness._guard.names import UnsafeName, check_name
from ltm_harness._guard.redact import redact, redact_url
from ltm_harness._guard.text import sanitize
from ltm_harness._scoring.judge_prompt import parse_verdict
from ltm_harness._runner.config import load_config
from ltm_harness._scoring.rules import extract_json
from ltm_harness._store.files import read_run_json, read_user_json

MB = 1024 * 1024
# no deadline (tests/conftest.py's profile): hangs are caught by counting work (bounded_work), never by the clock
# derandomize: CI runs the same examples every time (a new find is a new @example, not a flaky landing)
PROPERTY = settings(max_examples=50, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


@contextmanager
def bounded_memory(limit: int = 64 * MB) -> Iterator[None]:
    """The block's peak allocation (tracemalloc) stays under `limit`."""
    tracemalloc.start()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < limit, f"peak {peak / MB:.1f} MB"


class TooMuchWork(AssertionError):
    pass


@contextmanager
def bounded_work(limit: int) -> Iterator[None]:
    """The block makes at most `limit` function calls (Python's and C's, counted by sys.setprofile): an endless or
    quadratic loop fails here after `limit` calls, on any machine, instead of by a deadline on a loaded one."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1
            if calls > limit:
                raise TooMuchWork(f"more than {limit} calls")

    previous = sys.getprofile()
    sys.setprofile(count)
    try:
        yield
    finally:
        sys.setprofile(previous)


def test_bounded_work_stops_an_endless_loop() -> None:
    with pytest.raises(TooMuchWork):
        with bounded_work(1000):
            while True:
                len("x")


scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40))
json_like = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                         st.dictionaries(st.text(max_size=12), inner, max_size=5)),
                         max_leaves=30)
config_keys = st.sampled_from(["run_name", "seed", "seconds_per_turn", "start_time", "max_message_tokens", "isolated",
                               "agents", "dataset_dirs", "turns", "llm", "http", "judge", "watchdog", "tokenizer"])
dataset_args = st.dictionaries(st.sampled_from(["memory_span", "dataset_examples", "colour_changes", "x"]), scalars,
                               max_size=3)
configs = st.fixed_dictionaries({
    "config": st.dictionaries(config_keys, json_like, max_size=4),
    "datasets": st.fixed_dictionaries({"args": dataset_args,
                                       "datasets": st.lists(st.fixed_dictionaries({"name": st.text(max_size=20)}),
                                                            max_size=3)}),
})


def deep_text(n: int, opener: str = "[", closer: str = "]") -> str:
    return opener * n + closer * n


# -- config loading -----------------------------------------------------------------------------------------------


@PROPERTY
@given(data=configs)
@example(data={"config": {"turns": {"\n": None}}, "datasets": {"args": {}, "datasets": []}})  # found by CI: a key with a line break
def test_any_config_structure_loads_or_is_one_config_error(data: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with bounded_memory():
        try:
            load_config(path)
        except ConfigError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 2000


@PROPERTY
@given(text=st.text(max_size=400), dup=st.booleans(), nest=st.integers(min_value=0, max_value=3000))
def test_any_yaml_text_loads_or_is_one_config_error(text: str, dup: bool, nest: int, tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    body = text + ("\nk: 1\nk: 2\n" if dup else "") + (f"\nz: {deep_text(nest)}\n" if nest else "")
    path.write_bytes(body.encode("utf-8", "replace"))
    with bounded_memory():
        with pytest.raises(ConfigError) as info:
            load_config(path)
    assert len(str(info.value)) < 2000


@PROPERTY
@given(levels=st.integers(min_value=2, max_value=12), width=st.integers(min_value=2, max_value=12))
def test_alias_expansion_is_bounded(levels: int, width: int) -> None:
    text = "a0: &a0 [x, y]\n" + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]\n" for i in range(1, levels))
    with bounded_memory(128 * MB):
        try:
            yamlsafe.load(text)
            assert width ** (levels - 1) * 2 <= 2_000_000  # small enough to expand
        except yamlsafe.YAMLProblem as exc:
            assert "alias" in exc.message


# -- reply parsing ------------------------------------------------------------------------------------------------

replies = st.one_of(st.text(max_size=300), st.builds(lambda n, o: deep_text(n, *o), st.integers(0, 20_000),
                                                     st.sampled_from([("[", "]"), ("{\"a\":", "}")])),
                    st.builds(lambda j: json.dumps(j), json_like),
                    st.builds(lambda s, n: s * n, st.sampled_from(["[", "{", "{\"action\": ", "[[1,", "\"", "1. "]),
                              st.integers(0, 50_000)))


@PROPERTY
@given(reply=replies)
def test_reply_parsing_never_raises_or_hangs(reply: str) -> None:
    # measured: at most ~240,000 calls (500 nested brackets; the JSON finder's tries are capped), then ~5 a character
    with bounded_memory(), bounded_work(20 * len(reply) + 1_000_000):
        extract_json(reply)
        parse_action(reply, Space(description="arm", low=0, high=3))
        parse_action(reply, Space(description="move", choices=("left", "right")))
        answers = parse_answers(reply, 3)
        assert len(answers) == 3
        try:
            parse_verdict(reply)
        except ValueError:
            pass


@PROPERTY
@given(reply=replies)
def test_text_boundary_helpers_are_total(reply: str) -> None:
    cleaned, n = sanitize(reply + "\ud800")
    assert n >= 1 and cleaned.encode("utf-8")
    assert len(clip(reply)) < 200
    redact(reply)
    redact_url(reply)
    try:
        check_name(reply, "name")
    except UnsafeName as exc:
        assert len(str(exc)) < 400


@PROPERTY
@given(chunks=st.lists(st.binary(max_size=2000), max_size=8), encoding=st.sampled_from([None, "gzip", "deflate", "br"]))
def test_bounded_body_never_exceeds_its_limit(chunks: list[bytes], encoding: str | None) -> None:
    try:
        body = BoundedBody(4096, encoding)
        for chunk in chunks:
            body.feed(chunk)
        assert len(body.finish()) <= 4096
    except TooLarge:
        pass


# -- the JSON readers ---------------------------------------------------------------------------------------------

documents = st.one_of(st.builds(json.dumps, json_like), st.text(max_size=300),
                      st.builds(deep_text, st.integers(0, 200_000)),
                      st.builds(lambda n: '{"a": ' * n + "1" + "}" * n, st.integers(0, 5000)))


@PROPERTY
@given(doc=documents)
def test_json_readers_give_data_or_one_error(doc: str, tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(doc.encode("utf-8", "replace"))
    reader_errors: list[tuple[Callable[[Path], Any], type[LTMError]]] = [(read_run_json, RunFolderError),
                                                                         (read_user_json, DefinitionError)]
    with bounded_memory():
        for reader, error in reader_errors:
            try:
                data = reader(path)
            except error as exc:
                assert "\n" not in str(exc) and len(str(exc)) < 1000
            else:
                jsonsafe.check_depth(data)  # what is returned is never deeper than the bound
        try:
            jsonsafe.loads(doc)
        except ValueError:
            pass
