"""`--compat l2metrics` reproduces l2metrics 3.1.0 on its own example logs, metric by metric.

The logs, the settings and the reference results are l2metrics' own (tests/data/l2metrics-examples/, see its
README): every number of its multi_task_metrics.json and of its per-regime table must come out within a relative
error of 1e-6. The smaller tests pin each rule where the harness's own metrics differ."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._errors import ConfigError
from ltm_harness._protocols.l2m.l2metrics import L2MetricsResult, L2MetricsSettings, compute_l2metrics, load_settings
from ltm_harness._protocols.l2m.l2metrics_regimes import load_ste_runs, reflect_smooth
from ltm_harness._protocols.l2m.logger import read_scenario
from ltm_harness._protocols.l2m.metrics import compute_metrics

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "l2metrics-examples"
LOG = EXAMPLES / "ll_logs" / "multi_task"
REFERENCE = EXAMPLES / "reference-results"
TOLERANCE = 1e-6
HEADLINE = ["perf_recovery", "avg_train_perf", "avg_eval_perf", "perf_maintenance_mrlep", "forward_transfer_ratio",
            "backward_transfer_ratio", "ste_rel_perf", "sample_efficiency"]


@pytest.fixture(scope="module")
def result() -> L2MetricsResult:
    settings = load_settings(REFERENCE / "multi_task_settings.json")
    return compute_l2metrics(read_scenario(LOG), settings, load_ste_runs(EXAMPLES / "ste_logs", settings.perf_measure))


def _numbers(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _numbers(item, f"{path}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _numbers(item, f"{path}[{i}]").items()}
    return {path: value}


def _close(ref: float, ours: float) -> bool:
    return ref == ours or abs(ref - ours) <= TOLERANCE * abs(ref)


def test_the_format_1_0_logs_are_read_as_l2logger_reads_them() -> None:
    log = read_scenario(LOG)
    assert len(log.records) == 1920 and log.metrics_columns == ["performance"]
    assert {r.block_subtype for r in log.records} == {"wake"}  # the column is missing: l2logger fills in wake


@pytest.mark.parametrize("metric", HEADLINE)
def test_each_lifetime_metric_matches_l2metrics(result: L2MetricsResult, metric: str) -> None:
    reference = json.loads((REFERENCE / "multi_task_metrics.json").read_text())[metric]
    ours = result.to_json_data()[metric]
    assert isinstance(ours, float) and _close(reference, ours), (metric, reference, ours)


def test_every_number_of_the_reference_json_is_reproduced(result: L2MetricsResult) -> None:
    reference = _numbers(json.loads((REFERENCE / "multi_task_metrics.json").read_text()))
    ours = _numbers(result.to_json_data())
    assert set(ours) == set(reference)  # the same keys, the same list lengths
    wrong = {}
    for path, ref in reference.items():
        if isinstance(ref, bool) or not isinstance(ref, (int, float)):
            assert ours[path] == ref or path == ".runtime", path
            continue
        if not (isinstance(ours[path], (int, float)) and _close(ref, ours[path])):
            wrong[path] = (ref, ours[path])
    assert not wrong
    assert sum(isinstance(v, float) for v in reference.values()) > 150  # the comparison covers the whole file


def test_the_regime_table_matches_l2metrics(result: L2MetricsResult) -> None:
    with (REFERENCE / "multi_task_regime.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == len(result.regimes) == 48
    for ref, ours in zip(rows, result.regimes):
        assert (int(ref["regime_num"]), ref["block_type"], ref["task_name"]) == \
               (ours.regime_num, ours.block_type, ours.task_name)
        for column in ("saturation", "exp_to_sat", "term_perf", "exp_to_term_perf", "avg_perf"):
            assert _close(float(ref[column]), float(getattr(ours, column))), (ref["regime_num"], column)


def test_the_harness_own_rules_stay_the_default_and_differ_where_documented() -> None:
    log = read_scenario(LOG)
    own = compute_metrics(log, "performance")
    # smoothing after normalisation by a window shrunk at the ends, maintenance against the training of the variant
    assert own.lifetime.perf_maintenance is not None and not _close(3.8626981189, own.lifetime.perf_maintenance)
    assert own.lifetime.avg_train_perf is not None and not _close(83.8150652485, own.lifetime.avg_train_perf)


def test_smoothing_pads_by_reflection_and_skips_windows_below_three() -> None:
    assert reflect_smooth([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0]) == \
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0]  # w = 2: as is
    x = [15.0] + [0.0] * 14  # w = 3: the window is [i - 2, i], the start mirrored as [x2, x1, x0, x1, ...]
    assert reflect_smooth(x) == [5.0, 5.0, 5.0] + [0.0] * 12
    x = [3.0] + [0.0] * 19  # w = 4: the window is [i - 2, i + 1]
    smoothed = reflect_smooth(x)
    assert len(smoothed) == 20 and smoothed[:4] == [0.75, 0.75, 0.75, 0.0]
    assert reflect_smooth(x, window_len=10) != smoothed and reflect_smooth(x, window_len=30) == smoothed


def _log(tmp_path: Path, rows: list[tuple[int, str, str, float]], name: str = "scen") -> Path:
    """A format-1.0 scenario: (block_num, block_type, task, value) per experience."""
    folder = tmp_path / name
    (folder / "w").mkdir(parents=True)
    (folder / "logger_info.json").write_text(json.dumps({"metrics_columns": ["perf"], "log_format_version": "1.0"}))
    (folder / "scenario_info.json").write_text(json.dumps({"scenario_type": "custom"}))
    lines = ["block_num\texp_num\tworker_id\tblock_type\ttask_name\ttask_params\texp_status\ttimestamp\tperf"]
    for exp, (block, kind, task, value) in enumerate(rows):
        lines.append(f"{block}\t{exp}\tw\t{kind}\t{task}\t{{}}\tcomplete\t20240101T000000.{exp:06d}\t{value}")
    (folder / "w" / "data-log.tsv").write_text("\n".join(lines) + "\n")
    return folder


def _ab_log(tmp_path: Path) -> Path:
    """Test A and B, train A, test A and B, train B, test A and B, test A and B again."""
    rows: list[tuple[int, str, str, float]] = []
    tests = [(10.0, 10.0), (50.0, 20.0), (40.0, 60.0), (30.0, 62.0)]
    for block, (a, b) in zip((0, 2, 4, 5), tests):
        rows += [(block, "test", "Task_A", a), (block, "test", "task_b", b)]
        if block == 0:
            rows += [(1, "train", "task_a", 0.0), (1, "train", "task_a", 100.0)]
        if block == 2:
            rows += [(3, "train", "task_b", 0.0), (3, "train", "task_b", 100.0)]
    rows.sort(key=lambda r: r[0])
    return _log(tmp_path, rows)


def test_maintenance_mrlep_and_mrtlp_follow_their_references(tmp_path: Path) -> None:
    result = compute_l2metrics(read_scenario(_ab_log(tmp_path)),
                               L2MetricsSettings(perf_measure="perf", maintenance_method="both"))
    tasks = result.to_json_data()["task_metrics"]
    assert isinstance(tasks, dict)
    a = tasks["task_a"]  # names lower-cased: Task_A and task_a are one task
    assert isinstance(a, dict)
    # on 1..101 over [0, 100]: p = value + 1. A's reference test is block 2 (50): later tests 40, 30
    assert a["maintenance_val_mrlep"] == [[-10.0, -20.0]] and a["perf_maintenance_mrlep"] == -15.0
    # MRTLP: minus A's train terminal performance (the last 10 % of 2 rows: the last one, 101)
    assert a["perf_maintenance_mrtlp"] == pytest.approx(((41 - 101) + (31 - 101)) / 2)


def test_transfer_keeps_every_value_and_the_lifetime_takes_the_first_of_a_pair(tmp_path: Path) -> None:
    result = compute_l2metrics(read_scenario(_ab_log(tmp_path)),
                               L2MetricsSettings(perf_measure="perf", transfer_method="both"))
    data = result.to_json_data()
    tasks = data["task_metrics"]
    assert isinstance(tasks, dict) and isinstance(tasks["task_a"], dict) and isinstance(tasks["task_b"], dict)
    # forward A -> B: B tested at 21 before training A and 11 ... (p = value + 1: 11 then 21)
    assert tasks["task_a"]["forward_transfer_ratio"] == {"task_b": [21 / 11]}
    assert tasks["task_b"]["backward_transfer_ratio"] == {"task_a": [41 / 51]}
    assert data["forward_transfer_contrast"] == pytest.approx((21 - 11) / (21 + 11))


def test_recovery_counts_from_zero_and_an_early_saturation_drops_sample_efficiency(tmp_path: Path) -> None:
    rows = [(0, "train", "t_a", v) for v in (0.0, 5.0, 10.0)] + [(1, "train", "t_b", 3.0)] + \
           [(2, "train", "t_a", v) for v in (0.0, 10.0, 10.0)] + [(3, "train", "t_b", 1.0)] + \
           [(4, "train", "t_a", v) for v in (10.0, 10.0, 10.0)]
    folder = _log(tmp_path, rows)
    ste = _log(tmp_path, [(0, "train", "t_a", v) for v in (10.0, 0.0, 0.0)], name="ste")
    result = compute_l2metrics(read_scenario(folder), L2MetricsSettings(perf_measure="perf"),
                               load_ste_runs(ste, "perf"))
    tasks = result.to_json_data()["task_metrics"]
    assert isinstance(tasks, dict) and isinstance(tasks["t_a"], dict)
    assert tasks["t_a"]["recovery_times"] == [1.0, 0.0]  # reaching 101 at index 1, then at once
    assert tasks["t_a"]["perf_recovery"] == 1.0  # minus the slope of [1, 0]
    # the expert saturates at index 0: its run is left out, so no sample efficiency value
    assert tasks["t_a"]["sample_efficiency_vals"] == [] and tasks["t_a"]["sample_efficiency"] is None
    assert tasks["t_a"]["ste_rel_perf_vals"] == [pytest.approx((1 + 51 + 101) / (101 + 1 + 1))]


def test_a_settings_file_with_a_setting_not_reproduced_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"perf_measure": "x", "smoothing_method": "hanning"}))
    with pytest.raises(ConfigError, match=r"s\.json: smoothing_method 'hanning' is not reproduced"):
        load_settings(path)
    path.write_text(json.dumps({"maintenance_method": "best"}))
    with pytest.raises(ConfigError, match=r"s\.json: maintenance_method: Input should be"):
        load_settings(path)


def test_the_command_line_writes_l2metrics_json(tmp_path: Path) -> None:
    import shutil

    logs = tmp_path / "multi_task"
    shutil.copytree(LOG, logs)
    out = subprocess.run([sys.executable, "-m", "ltm_harness", "syllabus", "metrics", str(logs), "--compat",
                          "l2metrics", "--settings", str(REFERENCE / "multi_task_settings.json"), "--ste",
                          str(EXAMPLES / "ste_logs")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads((logs / "l2metrics.json").read_text())
    reference = json.loads((REFERENCE / "multi_task_metrics.json").read_text())
    assert all(_close(reference[m], data[m]) for m in HEADLINE)
    assert "perf_maintenance_mrlep" in out.stdout and not (logs / "metrics.json").exists()
    refused = subprocess.run([sys.executable, "-m", "ltm_harness", "syllabus", "metrics", str(logs), "--settings",
                              "x.json"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "--settings is read with --compat l2metrics" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not math.isnan(float(data["runtime"]))


def test_the_library_gives_both_rule_sets() -> None:
    from ltm_harness.l2m import l2metrics_metrics, scenario_metrics

    ref = l2metrics_metrics(LOG, settings=REFERENCE / "multi_task_settings.json", ste=EXAMPLES / "ste_logs")
    assert _close(1.08214831, float(ref.to_json_data()["backward_transfer_ratio"]))  # type: ignore[arg-type]
    own = scenario_metrics(LOG, perf_measure="performance", ste=EXAMPLES / "ste_logs")
    assert own.lifetime.backward_transfer_ratio is not None
    assert not _close(1.08214831, own.lifetime.backward_transfer_ratio)
