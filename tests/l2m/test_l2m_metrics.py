"""Every lifelong-learning metric on small logs whose values were worked out by hand.

Raw values are chosen on 0..100 with both ends present per task, so the normalised performance is
p = raw + 1 and the hand computations stay readable. Regimes of fewer than 10 experiences are not
smoothed (window floor(0.2 n) < 2).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._protocols.l2m.logger import L2Logger, LogRecord, ScenarioInfo, ScenarioLog, read_scenario
from ltm_harness._protocols.l2m.metrics import compute_metrics, load_ste, scenario_dirs, write_metrics
from ltm_harness._protocols.l2m.metrics_report import MetricsReport

Rows = list[tuple[int, str, str, dict[str, Any], list[float]]]
T = datetime(2024, 1, 1)


def records(rows: Rows) -> list[LogRecord]:
    out: list[LogRecord] = []
    for block, kind, task, params, values in rows:
        for value in values:
            out.append(LogRecord.model_validate({
                "block_num": block, "exp_num": len(out), "worker_id": "w", "block_type": kind, "task_name": task,
                "task_params": params, "timestamp": T, "metrics": {"reward": value}}))
    return out


def log_of(rows: Rows, info: dict[str, Any] | None = None) -> ScenarioLog:
    return ScenarioLog(scenario_dir="s", metrics_columns=["reward"], scenario_info=info or {}, records=records(rows))


# Two tasks, a and b (ANT-like): a trained twice, b once, both tested after each training block.
ANT: Rows = [
    (0, "train", "a", {}, [0, 20, 40, 60, 100]),   # p 1 21 41 61 101
    (1, "test", "a", {}, [50, 70]),                # tp 61
    (1, "test", "b", {}, [10, 30]),                # tp 21
    (2, "train", "a", {}, [60, 80, 100, 100, 100]),  # p 61 81 101 101 101
    (3, "test", "a", {}, [90]),                    # tp 91
    (3, "test", "b", {}, [40]),                    # tp 41
    (4, "train", "b", {}, [0, 50, 100, 100]),      # p 1 51 101 101
    (5, "test", "a", {}, [30]),                    # tp 31
    (5, "test", "b", {}, [100]),                   # tp 101
]

# One task c with two parameter sets (CL-like), trained four times, tested twice.
CL: Rows = [
    (0, "train", "c", {"v": 1}, [0, 50, 100, 100, 100]),  # p 1 51 101 101 101, tp 101
    (1, "train", "c", {"v": 2}, [0, 20, 40, 60, 80]),     # p 1 21 41 61 81: never reaches 101, tp 81
    (2, "test", "c", {"v": 1}, [70]),                     # tp 71
    (3, "train", "c", {"v": 1}, [40, 90, 100, 100, 100]),  # reaches 81 at the 2nd, tp 101
    (4, "train", "c", {"v": 2}, [100, 100, 100, 100, 100]),  # reaches 101 at the 1st
    (5, "test", "c", {"v": 1}, [100]),                    # tp 101
    (5, "test", "c", {"v": 2}, [50]),                     # tp 51
]


def test_regimes_normalisation_saturation_and_terminal_performance() -> None:
    report = compute_metrics(log_of(ANT))
    first = report.regimes[0]
    assert (first.block_type, first.experiences, first.raw_mean, first.perf_mean) == ("train", 5, 44, 45)
    assert (first.saturation, first.exp_to_saturation, first.terminal_perf) == (101, 5, 101)  # last ceil(0.5) = 1
    second_train = report.regimes[3]
    assert (second_train.saturation, second_train.exp_to_saturation) == (101, 3)
    assert [r.terminal_perf for r in report.regimes if r.block_type == "test"] == [61, 21, 91, 41, 31, 101]
    assert all(r.saturation is None for r in report.regimes if r.block_type == "test")
    a, b = report.tasks
    assert (a.range_low, a.range_high, b.range_low, b.range_high) == (0, 100, 0, 100)


def test_saturation_on_a_smoothed_learning_curve() -> None:
    # n = 10: window 2, s_i = mean(p_i, p_i+1): p 1 41 81 101 61 ... 61 -> s 21 61 91 81 61 ... 61
    report = compute_metrics(log_of([(0, "train", "a", {}, [0, 40, 80, 100, 60, 60, 60, 60, 60, 60])]))
    regime = report.regimes[0]
    assert (regime.saturation, regime.exp_to_saturation, regime.terminal_perf) == (91, 3, 61)
    assert regime.perf_mean == 59  # the unsmoothed mean


def test_several_rows_of_one_experience_are_averaged() -> None:
    rows = records([(0, "train", "a", {}, [0, 100])])
    rows.insert(1, rows[0].model_copy(update={"metrics": {"reward": 50.0}}))  # exp 0 logged twice: 0 and 50
    report = compute_metrics(ScenarioLog(scenario_dir="s", metrics_columns=["reward"], records=rows))
    assert report.regimes[0].raw_mean == (25 + 100) / 2


def test_recovery_time_and_performance_recovery() -> None:
    report = compute_metrics(log_of(CL))
    trains = [r for r in report.regimes if r.block_type == "train"]
    assert [(r.recovery_time, r.recovered) for r in trains] == [(None, None), (6, False), (2, True), (1, True)]
    (c,) = report.tasks
    assert c.recovery_times == [6, 2, 1]
    assert c.perf_recovery == 2.5  # -(median of slopes -4, -2.5, -1)
    assert report.lifetime.perf_recovery == 2.5


def test_performance_recovery_needs_two_recovery_times() -> None:
    report = compute_metrics(log_of(ANT))
    assert [t.recovery_times for t in report.tasks] == [[3], []]  # a: 2nd train reaches tp 101 at its 3rd
    assert report.lifetime.perf_recovery is None
    assert any("performance recovery needs two recovery times" in n for n in report.notes)


def test_performance_maintenance_across_tasks() -> None:
    report = compute_metrics(log_of(ANT))
    # only a's last test follows training on something else (b) after a's own training: 31 - 101
    assert [(r.regime_num, r.maintenance, r.maintenance_reference) for r in report.regimes
            if r.maintenance is not None] == [(7, -70, 3)]
    assert [t.perf_maintenance for t in report.tasks] == [-70, None]
    assert report.lifetime.perf_maintenance == -70


def test_performance_maintenance_across_parameter_sets() -> None:
    report = compute_metrics(log_of(CL))
    # v1 tested after v2 training: 71 - 101 (block 2), 101 - 101 (block 5); v2's test follows its own training
    assert [(r.block_num, r.maintenance) for r in report.regimes if r.maintenance is not None] == [(2, -30), (5, 0)]
    assert report.tasks[0].perf_maintenance == -15


def test_forward_and_backward_transfer() -> None:
    report = compute_metrics(log_of(ANT))
    entries = [(e.kind, e.from_task, e.to_task, e.test_before, e.test_after, e.tp_before, e.tp_after)
               for e in report.transfer_entries]
    # b tested (21), a trained, b tested (41): forward a->b; a tested (91), b trained, a tested (31): backward b->a
    assert entries == [("backward", "b", "a", 4, 7, 91, 31), ("forward", "a", "b", 2, 5, 21, 41)]
    forward = next(p for p in report.transfer if p.kind == "forward")
    backward = next(p for p in report.transfer if p.kind == "backward")
    assert (forward.ratio, forward.contrast) == (41 / 21, 20 / 62)
    assert (backward.ratio, backward.contrast) == (31 / 91, -60 / 122)
    life = report.lifetime
    assert (life.forward_transfer_ratio, life.forward_transfer_contrast) == (41 / 21, 20 / 62)
    assert (life.backward_transfer_ratio, life.backward_transfer_contrast) == (31 / 91, -60 / 122)


def test_transfer_compares_tests_of_the_same_parameter_set() -> None:
    rows: Rows = [(0, "train", "a", {}, [0, 100]), (1, "test", "b", {"k": 1}, [20]), (1, "test", "b", {"k": 2}, [100]),
                  (2, "train", "a", {}, [50]), (3, "test", "b", {"k": 1}, [60]), (3, "test", "b", {"k": 2}, [0])]
    report = compute_metrics(log_of(rows))
    assert [(e.to_params, e.tp_before, e.tp_after) for e in report.transfer_entries] == [
        ({"k": 1}, 21, 61), ({"k": 2}, 101, 1)]
    (pair,) = report.transfer
    assert (pair.kind, pair.entries, pair.ratio) == ("forward", 2, (61 / 21 + 1 / 101) / 2)


def test_no_transfer_within_one_task() -> None:
    report = compute_metrics(log_of(CL))
    assert report.transfer == [] and report.lifetime.forward_transfer_ratio is None
    assert any("transfer needs a task tested before and after" in n for n in report.notes)


def test_average_train_and_eval_performance() -> None:
    report = compute_metrics(log_of(ANT))
    a, b = report.tasks
    assert (a.avg_train_perf, a.avg_eval_perf) == (67, 61)  # mean of 1 21 41 61 101 61 81 101 101 101; of 51 71 91 31
    assert (b.avg_train_perf, b.avg_eval_perf) == (63.5, 46)  # mean of 1 51 101 101; of 11 31 41 101
    assert (report.lifetime.avg_train_perf, report.lifetime.avg_eval_perf) == (65.25, 53.5)


STE_A = [[0.0, 50, 100], [50.0, 50, 100, 100]]  # cut to 3 and averaged: 25 50 100 -> p 26 51 101


def test_relative_performance_and_sample_efficiency_against_experts() -> None:
    report = compute_metrics(log_of(ANT), ste={"a": STE_A})
    a, b = report.tasks
    assert a.ste_runs == 2
    assert a.ste_rel_perf == (1 + 21 + 41) / (26 + 51 + 101)  # the first min(10, 3) train experiences
    # task a's 10 train p smoothed (window 2): 11 31 51 81 81 71 91 101 101 101 -> saturation 101 at the 8th;
    # the expert's 3 are not smoothed: 101 at the 3rd
    assert (a.se_saturation, a.se_exp_to_saturation, a.sample_efficiency) == (1, 3 / 8, 3 / 8)
    assert b.ste_rel_perf is None and b.sample_efficiency is None
    assert (report.lifetime.ste_rel_perf, report.lifetime.sample_efficiency) == (63 / 178, 3 / 8)
    assert "no single-task-expert log for task 'b'" in report.notes


def test_expert_values_widen_the_normalisation_range() -> None:
    report = compute_metrics(log_of([(0, "train", "a", {}, [0, 100])]), ste={"a": [[200.0]]})
    assert report.tasks[0].range_high == 200
    assert [r.perf_mean for r in report.regimes] == [(1 + 51) / 2]
    assert report.tasks[0].ste_rel_perf == 1 / 101  # first experience only: p 1 against the expert's 101


def test_declared_ranges_normalise_a_column_with_no_spread() -> None:
    rows: Rows = [(0, "train", "g", {}, [1, 1]), (1, "test", "g", {}, [1])]
    plain = compute_metrics(log_of(rows))
    assert [r.perf_mean for r in plain.regimes] == [1, 1]
    assert any("every reward is 1" in n for n in plain.notes)
    declared = compute_metrics(log_of(rows, {"ranges": {"reward": {"g": [0, 4]}}}))
    assert [r.perf_mean for r in declared.regimes] == [26, 26]
    with pytest.raises(LTMError, match="\"ranges\" must map a metric column"):
        compute_metrics(log_of(rows, {"ranges": {"reward": {"g": "0-4"}}}))


def test_missing_metric_column_and_empty_values_are_user_errors() -> None:
    with pytest.raises(LTMError, match="no metric column 'score'"):
        compute_metrics(log_of(ANT), perf_measure="score")
    with pytest.raises(LTMError, match="no reward values"):
        compute_metrics(log_of([(0, "train", "a", {}, [])]))


def test_no_nan_reaches_the_json(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    write_metrics(compute_metrics(log_of(CL)), path)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data["lifetime"]["forward_transfer_ratio"] is None
    assert MetricsReport.model_validate(data).lifetime.perf_recovery == 2.5


def write_log(folder: Path, rows: Rows) -> None:
    with L2Logger(folder, "w", ["reward"], ScenarioInfo()) as logger:
        for r in records(rows):
            logger.log(r)


def test_metrics_from_files_equal_metrics_from_records(tmp_path: Path) -> None:
    write_log(tmp_path / "ant", ANT)
    from_file = compute_metrics(read_scenario(tmp_path / "ant"))
    assert from_file.lifetime == compute_metrics(log_of(ANT)).lifetime


def test_expert_logs_are_loaded_per_task(tmp_path: Path) -> None:
    write_log(tmp_path / "ste" / "a1", [(0, "train", "a", {}, STE_A[0])])
    write_log(tmp_path / "ste" / "a2", [(0, "train", "a", {}, STE_A[1]), (1, "test", "a", {}, [7])])
    assert [p.name for p in scenario_dirs(tmp_path / "ste")] == ["a1", "a2"]
    assert load_ste(tmp_path / "ste") == {"a": STE_A}
    write_log(tmp_path / "ste" / "mixed", [(0, "train", "a", {}, [1]), (0, "train", "b", {}, [1])])
    with pytest.raises(LTMError, match="mixed: a single-task-expert log trains exactly one task, but this one trains 2"):
        load_ste(tmp_path / "ste")
