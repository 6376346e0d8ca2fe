"""Property test (hypothesis) of what a user dataset's `generate_examples` may return, through the command line.

Whatever the user's code returns (any JSON-like value, a list of mixed things, tests with odd values in their fields),
`run` either works (the run finishes; a test that cannot be run is marked errored or unscored, with its reason) or
stops with one error line naming the dataset, exit status 2: never a traceback, never an exception out of `main`.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ltm_harness import DatasetInterface, TestExample
from ltm_harness._cli.main import main as cli

# as in test_properties.py: derandomized, so CI runs the same examples every time (a new find becomes an @example)
PROPERTY = settings(max_examples=120, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

HOOK = "ltm_test_dataset_returns"  # the module the dataset asks for what to return
DATASET = f'''
import {HOOK}
from ltm_harness import DatasetInterface
class Mine(DatasetInterface):
    name = "mine"
    def generate_examples(self, n):
        return {HOOK}.make(self, n)
    def evaluate_correct(self, questions, responses, expected):
        return 1.0, 1.0, []
'''
CONFIG = """\
config: {run_name: x, dataset_dirs: [ds]}
datasets:
  args: {memory_span: 1000, dataset_examples: 1}
  datasets:
    - name: mine
"""

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30))
json_like = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                         max_leaves=20)
FIELDS = sorted(TestExample.model_fields)
# odd values for a test's fields: any JSON-like value, and values of about the right shape (texts, flags, waits,
# line numbers) that may still be wrong (too few, negative, out of range, paths as ids)
field_values = st.one_of(
    json_like,
    st.lists(st.text(max_size=20), max_size=3),
    st.lists(st.booleans(), max_size=3),
    st.lists(st.fixed_dictionaries({"tokens": st.integers(min_value=-5, max_value=10**12)}), max_size=3),
    st.lists(st.lists(st.integers(min_value=-2, max_value=4), max_size=2), max_size=2),
    st.sampled_from(["", "../x", "a/b", ".", "x" * 300, "0"]),
)
# one item of a returned list: a good test (its id is its place in the list), a good test with one field set to an
# odd value afterwards (pydantic does not check assignments), a good test that repeats the first one's id, a
# TestExample built without validation, or any value
items = st.one_of(
    st.just(("good",)),
    st.tuples(st.just("odd"), st.sampled_from(FIELDS), field_values),
    st.just(("same id",)),
    st.tuples(st.just("unchecked"), st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=4)),
    st.tuples(st.just("value"), json_like),
)
# what generate_examples returns, and how many tests were asked for beyond the list's length (mostly none)
returns = st.one_of(st.tuples(st.just("value"), json_like),
                    st.tuples(st.just("list"), st.lists(items, max_size=4)),
                    st.tuples(st.just("list"), st.lists(st.just(("good",)), min_size=1, max_size=3)))
more = st.sampled_from([0, 0, 0, 0, 1, -1])


def good(dataset: DatasetInterface, i: int) -> TestExample:
    return dataset.make_example(i, ["Remember the number 7.", "What number did I tell you?"], [False, True], ["7"],
                                oracle_answers=["7"])


def build(recipe: tuple[Any, ...], dataset: DatasetInterface, i: int = 0) -> Any:
    kind = recipe[0]
    if kind == "value":
        return recipe[1]
    if kind == "list":
        return [build(item, dataset, k) for k, item in enumerate(recipe[1])]
    if kind in ("good", "same id"):
        return good(dataset, i if kind == "good" else 0)
    if kind == "odd":
        made = good(dataset, i)
        setattr(made, recipe[1], recipe[2])
        return made
    return TestExample.model_construct(**recipe[1])


def asked(recipe: tuple[Any, ...], more: int) -> int:
    return max(1, (len(recipe[1]) if recipe[0] == "list" else 1) + more)


@pytest.fixture
def hook() -> Iterator[types.ModuleType]:
    module = types.ModuleType(HOOK)
    sys.modules[HOOK] = module
    yield module
    del sys.modules[HOOK]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "mine.py").write_text(DATASET)
    (tmp_path / "c.yml").write_text(CONFIG)
    return tmp_path


runs = iter(range(10**9))


@PROPERTY
@given(recipe=returns, more=more)
@example(recipe=("list", [("good",)]), more=0)  # works
@example(recipe=("list", [("good",), ("good",)]), more=0)  # works
@example(recipe=("value", None), more=0)
@example(recipe=("list", [("value", {"script": ["Hi."], "is_question": [False]})]), more=0)  # a dict, not a test
@example(recipe=("list", [("odd", "script", [])]), more=0)  # an empty script
@example(recipe=("list", [("odd", "expected_responses", [10**5000])]), more=0)  # an integer JSON cannot read back
@example(recipe=("list", [("good",), ("same id",)]), more=0)  # one id twice
@example(recipe=("list", [("unchecked", {})]), more=0)
@example(recipe=("list", [("odd", "uses_callback", True)]), more=0)  # runs, and errors its test
def test_whatever_generate_examples_returns_the_run_works_or_stops_in_one_line(
        recipe: tuple[Any, ...], more: int, hook: types.ModuleType, folder: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    n = asked(recipe, more)
    hook.make = lambda dataset, n: build(recipe, dataset)
    results = f"results{next(runs)}"  # a new folder each time: no definitions of an earlier example are reused
    capsys.readouterr()
    code = cli(["run", "-c", "c.yml", "-a", "oracle", "--examples", str(n), "--results", results, "--quiet",
                "--no-report"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if code == 2:  # stopped before the run: one line, naming the dataset
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and "mine" in lines[0], err
        assert len(lines[0]) < 1000
        return
    assert code in (0, 3), (code, err)  # finished; 3: with errored tests
    tests = json.loads((folder / results / "x" / "oracle" / "results.json").read_text(encoding="utf-8"))
    assert len(tests) == n
    for test in tests:
        assert test["status"] in ("ok", "unscored", "errored")
        assert test["status"] == "ok" or test["reasons"], test
    assert (code == 3) == any(t["status"] == "errored" for t in tests)
