"""`--compat l2metrics` has l2metrics' shape too, on logs of the harness's own syllabi that l2metrics 3.1.0 scored
(tests/data/l2metrics-variants/, its README and make_reference.py): a regime table with a row per regime and
parameter set, each row holding the numbers of the regime whose number is its position (so the last rows are
empty); no recovery times when the log has fewer than two; expert runs newest first; and the logs on which
l2metrics itself fails refused in one line."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._errors import RunFolderError
from ltm_harness._protocols.l2m.l2metrics import L2MetricsResult, L2MetricsSettings, compute_l2metrics
from ltm_harness._protocols.l2m.l2metrics_regimes import load_ste_runs
from ltm_harness._protocols.l2m.logger import read_scenario

DATA = Path(__file__).resolve().parents[1] / "data" / "l2metrics-variants"
SETTINGS = L2MetricsSettings(perf_measure="reward", maintenance_method="both", transfer_method="both")
EXPERTS = {"cl-bandit": "bandit"}  # the log scored against expert runs, and their folder under ste/
REGIME_COLUMNS = ("saturation", "exp_to_sat", "term_perf", "exp_to_term_perf", "avg_perf")


def _ours(name: str, experts: str | None = None) -> L2MetricsResult:
    ste = load_ste_runs(DATA / "ste" / experts, "reward") if experts else None
    return compute_l2metrics(read_scenario(DATA / "logs" / name), SETTINGS, ste)


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its path; an empty list or object is a leaf of its own."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}").items()} or {path: {}}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()} or {path: []}
    return {path: value}


def _same(ref: Any, ours: Any) -> bool:
    if isinstance(ref, float) and math.isnan(ref):
        return ours is None  # l2metrics writes NaN (not JSON); the harness writes null
    if isinstance(ref, (int, float)) and not isinstance(ref, bool) and isinstance(ours, (int, float)):
        return abs(ref - ours) <= 1e-10 * max(1.0, abs(ref))
    return bool(ref == ours)


@pytest.mark.parametrize("name", ["cl-bandit", "cl-two", "antc"])
def test_every_number_and_every_list_has_the_shape_l2metrics_writes(name: str) -> None:
    reference = _leaves(json.loads((DATA / "reference" / f"{name}_metrics.json").read_text()))
    ours = _leaves(_ours(name, EXPERTS.get(name)).to_json_data())
    assert set(ours) == set(reference)  # the same keys, list lengths and empty lists
    wrong = {path: (ref, ours[path]) for path, ref in reference.items() if path != ".runtime" and not _same(ref, ours[path])}
    assert not wrong


@pytest.mark.parametrize("name", ["cl-bandit", "cl-two", "antc"])
def test_the_regime_table_has_a_row_per_regime_and_parameter_set(name: str) -> None:
    with (DATA / "reference" / f"{name}_regime.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    ours = _ours(name, EXPERTS.get(name)).regimes
    assert len(ours) == len(rows)
    for ref, row in zip(rows, ours):
        assert (int(ref["block_num"]), ref["block_type"], ref["task_name"], int(ref["regime_num"])) == \
               (row.block_num, row.block_type, row.task_name, row.regime_num)
        params = json.dumps(row.task_params)
        assert ref["task_params"] == (params[:25] + "..." if len(params) > 25 else params)
        for column in REGIME_COLUMNS:
            value = getattr(row, column)
            assert (ref[column] == "" and value is None) or _same(float(ref[column]), value), (row.regime_num, column)


def test_cl_bandit_shows_the_three_shapes_that_differed() -> None:
    result = _ours("cl-bandit", "bandit")
    # six regimes, eight rows: the test blocks of phases 2 and 3 play two parameter sets each; the numbers of regime
    # k sit on row k, so the two last rows are empty
    assert len({r.regime_num for r in result.regimes}) == 6 and len(result.regimes) == 8
    assert [r.regime_num for r in result.regimes] == [0, 1, 2, 3, 3, 4, 5, 5]
    assert all(r.term_perf is None for r in result.regimes[6:]) and result.regimes[5].term_perf is not None
    # the expert runs newest first, as l2metrics stores them: bandit-run2 (stored last) before bandit-run1
    runs = load_ste_runs(DATA / "ste" / "bandit", "reward")["bandit"]
    run2 = read_scenario(DATA / "ste" / "bandit" / "bandit-run2").records
    assert [r.value for r in runs[0]] == [float(x.metrics["reward"]) for x in run2 if x.exp_status == "complete"]
    values = result.to_json_data()["task_metrics"]["bandit"]["ste_rel_perf_vals"]  # type: ignore[index, call-overload]
    assert len(set(values)) == 2  # the order shows: the two runs give different values


def test_fewer_than_two_recoveries_leave_the_recovery_times_empty() -> None:
    data = _ours("cl-two").to_json_data()  # two train phases: one recovery in the whole log
    assert data["task_metrics"]["bandit"]["recovery_times"] == []  # type: ignore[index, call-overload]
    assert data["perf_recovery"] is None


@pytest.mark.parametrize("name, experts, message", [
    ("crash", None, r"logs/crash: l2metrics 3\.1\.0 computes nothing on this log: its block table has a train row at "
                    r"position 9 but there are only 7 regimes .* fails \(KeyError\)"),
    ("antc", "antc", r"logs/antc: l2metrics 3\.1\.0 computes nothing on this log: it finds 2 relative performance "
                     r"values among the rows of task bandit \(\"Unexpected size\"\)"),
])
def test_logs_on_which_l2metrics_fails_are_refused_in_one_line(name: str, experts: str | None, message: str) -> None:
    errors = (DATA / "reference" / "errors.txt").read_text()
    assert f"{name}{' with experts' if experts else ''}: " in errors  # l2metrics 3.1.0 fails on it as well
    with pytest.raises(RunFolderError, match=message) as caught:
        _ours(name, experts)
    assert "\n" not in str(caught.value)
