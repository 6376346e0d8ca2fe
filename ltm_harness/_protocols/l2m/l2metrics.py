"""l2metrics compatibility: the lifelong-learning metrics computed the way l2metrics 3.1.0 computes them.

The harness's own metrics (`metrics.py`, docs/l2m.md) follow the L2M meanings with rules of their own. This module
reproduces the numbers of the reference implementation instead, so that a log scored here and by l2metrics gives
the same values (tested on l2metrics' own example logs, tests/data/l2metrics-examples/). What it does differently
from the harness's rules, each as l2metrics does it:

- Rows: only `complete` experiences with a value of the performance column count; task names are lower-cased; a
  *regime* changes with block_num, block_type, block_subtype or task_name (not with task_params).
- Smoothing comes first: every train regime (and every regime of an expert's log) is smoothed with a flat window
  of min(floor(0.2 n), 100) over the signal padded by reflection at both ends; a window below 3 leaves it as is.
- Normalisation comes after smoothing: per task, lo/hi are the smallest/largest smoothed value of the task in the
  log and in its experts' train rows; p = 1 + 100 (x - lo) / (hi - lo), 1 when hi == lo. Every metric uses p.
- Saturation smooths the (already smoothed) curve once more; experiences to saturation and recovery times count
  from 0. Terminal performance: the mean of the last 10% (rows from int(0.9 n)) of a train regime, of all of a
  test regime.
- Recovery time: for each train regime of a task after its first, the first index where the curve reaches the
  terminal performance of the task's previous train regime (n + 1 when never). Performance recovery: minus the
  Theil-Sen slope of a task's recovery times (computed only when the log has two or more recovery times).
- Performance maintenance, MRLEP: the reference of a test is the first test of the task after its last training;
  each later test of the task gives test - reference. MRTLP: the same tests, minus the terminal performance of the
  task's last train regime before the test. A task's value is the mean.
- Transfer: for tasks A != B, each train regime of A between two consecutive tests of B gives tp2 / tp1 (ratio)
  and (tp2 - tp1) / (tp1 + tp2) (contrast), forward when A is trained before B first is, backward when after; the
  lifetime value takes only the first value of each (A, B) pair.
- Average train/eval performance: the mean over a task's regimes of each regime's mean p.
- Against single-task experts (`ste_averaging_method` "metrics": each expert run gives its own value and the
  task's value is their mean; "time": the runs' curves are averaged first, cut to the shortest): relative
  performance sum(x[:m]) / sum(y[:m]); sample efficiency (sat / sat_ste) * (e_ste / e) from the saturations of
  the task's concatenated train rows and of the expert's, 0 when the task's least-squares slope is negative or
  its saturation is below 0.2 x the expert's; a task (or expert run) whose saturation comes at index 0 is left out.
- Lifetime values: the mean (or median) over the tasks that have one.

The result has the shape of l2metrics' `<run>_metrics.json` (`L2MetricsResult.to_json_data()`), plus the
per-regime table of its `<run>_regime.tsv` (`regimes`).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from itertools import permutations
from pathlib import Path
from statistics import fmean, median
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from ltm_harness._errors import ConfigError, RunFolderError
from ltm_harness._protocols.l2m import curves
from ltm_harness._protocols.l2m.logger import LogRecord, ScenarioLog, read_scenario
from ltm_harness._protocols.l2m.metrics import scenario_dirs

NAME = "l2metrics"  # the value of --compat
VERSION = "3.1.0"  # the l2metrics version reproduced
TERM_WINDOW_RATIO = 0.1
SCALE = 100
OFFSET = 1


class L2MetricsSettings(BaseModel):
    """The settings of l2metrics that change numbers, with its defaults. Read from l2metrics' own settings file
    (`<run>_settings.json`) too: its other keys are accepted when they hold the only value reproduced here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    perf_measure: str = "reward"
    maintenance_method: Literal["mrlep", "mrtlp", "both"] = "mrlep"
    transfer_method: Literal["ratio", "contrast", "both"] = "ratio"
    ste_averaging_method: Literal["metrics", "time"] = "metrics"
    aggregation_method: Literal["mean", "median"] = "mean"
    window_length: int | None = Field(default=None, ge=1)


#: settings of l2metrics that are accepted only with the value this module reproduces
_FIXED: dict[str, Any] = {"variant_mode": "aware", "normalization_method": "task", "smoothing_method": "flat",
                          "clamp_outliers": False, "data_range": None, "do_smooth_eval_data": False,
                          "unit": "exp_num", "noise": [0, 0]}
#: keys of its settings files that do not change numbers (paths, plotting, saving)
_IGNORED = {"log_dir", "output_dir", "output", "do_plot", "do_save", "do_save_settings", "show_eval_lines",
            "plot_types", "load_settings", "recursive", "ste_store_mode", "data_range_file"}


def load_settings(path: Path) -> L2MetricsSettings:
    """l2metrics settings from a JSON file (its `--load-settings` file or the `_settings.json` it saves)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the settings file ({exc.strerror}); give an l2metrics settings JSON") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); give an l2metrics settings JSON") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: an l2metrics settings file is a JSON object of settings")
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _IGNORED:
            continue
        if key in _FIXED:
            if value != _FIXED[key] and not (key == "data_range" and value in (None, {})):
                raise ConfigError(f"{path}: {key} {value!r} is not reproduced; only {_FIXED[key]!r} is "
                                  "(remove the setting or set it so)")
            continue
        kept[key] = value
    try:
        return L2MetricsSettings.model_validate(kept)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: {field}: {err['msg']} (got {err.get('input')!r})") from None


# -- numeric building blocks ---------------------------------------------------------------------------------


def reflect_smooth(x: list[float], window_len: int | None = None) -> list[float]:
    """Flat moving average over the signal padded by reflection at both ends, as long as the input.

    The window is `window_len` when the signal is at least that long, else min(floor(0.2 n), 100); a window below 3
    leaves the values as they are."""
    n = len(x)
    w = window_len if window_len is not None and n >= window_len else min(int(n * 0.2), 100)
    if w < 3:
        return list(x)
    s = x[w - 1:0:-1] + x + x[-2:-w - 1:-1]
    weight = 1.0 / w
    y = [math.fsum(v * weight for v in s[k:k + w]) for k in range(len(s) - w + 1)]
    start = int(math.floor(w / 2 - 1))
    end = -int(math.ceil(w / 2))
    return y[start:end]


def _per_experience(rows: list[tuple[int, float]]) -> list[float]:
    """The values, or their mean per experience when an experience has several rows."""
    exps = [e for e, _ in rows]
    if len(set(exps)) == len(exps):
        return [v for _, v in rows]
    groups: dict[int, list[float]] = {}
    for e, v in rows:
        groups.setdefault(e, []).append(v)
    return [fmean(groups[e]) for e in sorted(groups)]


def block_saturation(rows: list[tuple[int, float]]) -> tuple[float, int] | None:
    """(saturation, experiences to saturation counted from 0) of the curve smoothed once more; None when empty."""
    smoothed = reflect_smooth(_per_experience(rows))
    if not smoothed:
        return None
    top = max(smoothed)
    return top, smoothed.index(top)


def terminal(rows: list[tuple[int, float]], block_type: str) -> tuple[float, int]:
    """(terminal performance, experiences to terminal performance) of a regime's rows."""
    data = _per_experience(rows)
    ratio = 1.0 if block_type == "test" else TERM_WINDOW_RATIO
    value = fmean(data[int((1 - ratio) * len(data)):])
    return value, int((1 - (ratio / 2)) * len(data))


def recovery(rows: list[tuple[int, float]], level: float) -> int:
    """The first index (from 0) where the regime's curve reaches `level`; the number of rows + 1 when never."""
    for i, value in enumerate(_per_experience(rows)):
        if value >= level:
            return i
    return len(rows) + 1


def ls_slope(xs: list[float], ys: list[float]) -> float:
    """The slope of the least-squares line through the points."""
    mx, my = fmean(xs), fmean(ys)
    den = math.fsum((x - mx) ** 2 for x in xs)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


# -- rows and regimes -----------------------------------------------------------------------------------------


class _Row:
    __slots__ = ("exp_num", "block_num", "block_type", "block_subtype", "task", "params", "timestamp", "value",
                 "regime")

    def __init__(self, r: LogRecord, value: float) -> None:
        self.exp_num = r.exp_num
        self.block_num = r.block_num
        self.block_type = r.block_type
        self.block_subtype = r.block_subtype
        self.task = r.task_name.lower()
        self.params = r.task_params
        self.timestamp = r.timestamp
        self.value = value
        self.regime = 0

    def copy(self) -> "_Row":
        twin = object.__new__(_Row)
        for name in _Row.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin


def _rows(records: list[LogRecord], measure: str) -> list[_Row]:
    """Complete experiences with a value, numbered into regimes and ordered by (regime, exp_num)."""
    rows = [_Row(r, v) for r in records if r.exp_status == "complete"
            and (v := r.metrics.get(measure)) is not None and not math.isnan(v)]
    regime = 0
    for prev, row in zip([None, *rows], rows):
        if prev is not None and (prev.block_num, prev.block_type, prev.block_subtype, prev.task) != \
                (row.block_num, row.block_type, row.block_subtype, row.task):
            regime += 1
        row.regime = regime
    rows.sort(key=lambda r: (r.regime, r.exp_num))
    return rows


class _Regime:
    def __init__(self, num: int, rows: list[_Row]) -> None:
        first = rows[0]
        self.num = num
        self.block_num = first.block_num
        self.block_type = first.block_type
        self.block_subtype = first.block_subtype
        self.task = first.task
        self.params = first.params
        self.rows = rows

    def points(self) -> list[tuple[int, float]]:
        return [(r.exp_num, r.value) for r in self.rows]


def _regimes(rows: list[_Row]) -> list[_Regime]:
    groups: dict[int, list[_Row]] = {}
    for r in rows:
        groups.setdefault(r.regime, []).append(r)
    return [_Regime(num, group) for num, group in sorted(groups.items())]


# -- the result -----------------------------------------------------------------------------------------------


class RegimeRow(BaseModel):
    """One line of l2metrics' `<run>_regime.tsv`."""

    block_num: int
    block_type: str
    block_subtype: str
    task_name: str
    regime_num: int
    task_params: dict[str, JsonValue]
    saturation: float | None
    exp_to_sat: int | None
    term_perf: float | None
    exp_to_term_perf: int | None
    avg_perf: float | None


class L2MetricsResult(BaseModel):
    """The metrics in the shape of l2metrics' `<run>_metrics.json` (`metrics`), the settings used and the regime
    table."""

    settings: L2MetricsSettings
    metrics: dict[str, JsonValue]
    regimes: list[RegimeRow]

    def to_json_data(self) -> dict[str, JsonValue]:
        """What l2metrics writes to `<run>_metrics.json`."""
        return self.metrics


def _nan_to_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _aggregate(values: list[float], method: str) -> float | None:
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return None
    return fmean(vals) if method == "mean" else float(median(vals))


def _clumps(values: list[float | None]) -> list[list[float]]:
    """Maximal runs of consecutive values that are not None."""
    out: list[list[float]] = []
    current: list[float] = []
    for v in values:
        if v is None:
            if current:
                out.append(current)
            current = []
        else:
            current.append(v)
    if current:
        out.append(current)
    return out


def load_ste_runs(path: Path, perf_measure: str) -> dict[str, list[list[_Row]]]:
    """The expert runs per (lower-cased) task from the scenario logs under `path`, each training one task."""
    out: dict[str, list[list[_Row]]] = {}
    for folder in scenario_dirs(path):
        log = read_scenario(folder)
        if perf_measure not in log.metrics_columns:
            raise RunFolderError(f"{folder}: single-task-expert log has no {perf_measure!r} column")
        complete = [r for r in log.records if r.exp_status == "complete"]
        trained = list(dict.fromkeys(r.task_name.lower() for r in complete if r.block_type == "train"))
        if len(trained) != 1:
            raise RunFolderError(f"{folder}: a single-task-expert log trains exactly one task, but this one trains "
                                 f"{len(trained)} ({', '.join(trained) or 'none'}); give one log folder per task")
        out.setdefault(trained[0], []).append(_rows(complete, perf_measure))
    return out


def _recovery(regimes: list[_Regime], tp: dict[int, float]) -> tuple[dict[int, int], dict[str, float]]:
    """Recovery time per train regime (after a task's first) and performance recovery per task."""
    recovery_time: dict[int, int] = {}
    for task in dict.fromkeys(r.task for r in regimes):
        trains = [r for r in regimes if r.task == task and r.block_type == "train" and r.block_subtype == "wake"]
        for prev, cur in zip(trains, trains[1:]):
            recovery_time[cur.num] = recovery(cur.points(), tp[prev.num])
    perf_recovery: dict[str, float] = {}
    if len(recovery_time) > 1:
        for task in dict.fromkeys(r.task for r in regimes):
            times = [float(recovery_time[r.num]) for r in regimes if r.task == task and r.num in recovery_time]
            if len(times) > 1:
                perf_recovery[task] = -curves.theil_sen_slope(times)
    return recovery_time, perf_recovery


def _maintenance(counted: list[_Regime], tp: dict[int, float], method: str) -> dict[str, dict[int, float]]:
    """{"mrlep"/"mrtlp": {test regime: maintenance value}} for the chosen method(s)."""
    methods = {"mrlep": ["mrlep"], "mrtlp": ["mrtlp"], "both": ["mrlep", "mrtlp"]}[method]
    out: dict[str, dict[int, float]] = {m: {} for m in methods}
    for task in dict.fromkeys(r.task for r in counted):
        trains = [r.num for r in counted if r.task == task and r.block_type == "train"]
        tests = [r.num for r in counted if r.task == task and r.block_type == "test"]
        refs = [next(t for t in tests if t > x) for x in trains if any(t > x for t in tests)]
        for test in tests:
            if any(test > ref for ref in refs) and test not in refs:
                if "mrtlp" in out:
                    out["mrtlp"][test] = tp[test] - tp[[x for x in trains if x < test][-1]]
                if "mrlep" in out:
                    out["mrlep"][test] = tp[test] - tp[[x for x in refs if x < test][-1]]
    return out


Pairs = dict[str, dict[str, list[float]]]  # {trained task: {tested task: values in regime order}}


def _transfer(regimes: list[_Regime], counted: list[_Regime], tp: dict[int, float],
              kinds: list[str]) -> dict[tuple[str, str], Pairs]:
    """Transfer values per (direction, kind). A value is keyed by the second test: a later pair writing to the
    same test replaces an earlier one, as in l2metrics."""
    by_test: dict[tuple[str, str], dict[int, tuple[str, float]]] = {
        (d, k): {} for d in ("forward", "backward") for k in kinds}
    for task, other in permutations(list(dict.fromkeys(r.task for r in counted)), 2):
        trains = [r.num for r in counted if r.task == task and r.block_type == "train"]
        other_tests = [r.num for r in counted if r.task == other and r.block_type == "test"]
        other_trains = [r.num for r in counted if r.task == other and r.block_type == "train"]
        if not trains:
            continue
        first_other = min(other_trains) if other_trains else None
        valid = {"forward": [x for x in trains if first_other is None or x < first_other],
                 "backward": [x for x in trains if first_other is not None and x > first_other]}
        for direction, train_regs in valid.items():
            for x in train_regs:
                for t1, t2 in zip(other_tests, other_tests[1:]):
                    if t1 < x < t2:
                        tp1, tp2 = tp[t1], tp[t2]
                        if "ratio" in kinds and tp1 != 0:
                            by_test[(direction, "ratio")][t2] = (task, tp2 / tp1)
                        if "contrast" in kinds and tp1 + tp2 != 0:
                            by_test[(direction, "contrast")][t2] = (task, (tp2 - tp1) / (tp1 + tp2))
    out: dict[tuple[str, str], Pairs] = {}
    for key, found in by_test.items():
        table: Pairs = {}
        for regime in regimes:
            if regime.num in found:
                trained, value = found[regime.num]
                table.setdefault(trained, {}).setdefault(regime.task, []).append(value)
        out[key] = table
    return out


class _Efficiency(BaseModel):
    task_saturation: float
    task_exp_to_sat: int
    ste_saturation: list[float] = Field(default_factory=list)
    ste_exp_to_sat: list[int] = Field(default_factory=list)
    se_saturation: list[float] = Field(default_factory=list)
    se_exp_to_sat: list[float] = Field(default_factory=list)
    se: list[float] = Field(default_factory=list)


def _experts(regimes: list[_Regime], tasks: list[str], experts: dict[str, list[list[_Row]]],
             averaging: str) -> tuple[dict[str, list[float]], dict[str, _Efficiency]]:
    """Relative performance values and sample efficiency per task against its expert runs."""
    rel_perf: dict[str, list[float]] = {}
    se: dict[str, _Efficiency] = {}
    for task in tasks:
        runs = experts.get(task)
        trained = [r for r in regimes if r.task == task and r.block_type == "train" and r.block_subtype == "wake"]
        data = [x for r in trained for x in r.rows]
        if not runs or not data:
            continue
        ste_curves = [[x.value for x in run if x.block_type == "train"] for run in runs]
        shortest = min(len(c) for c in ste_curves)
        averaged = [fmean(c[i] for c in ste_curves) for i in range(shortest)]
        if averaging == "time":
            m = min(len(data), len(averaged))
            rel_perf[task] = [math.fsum(x.value for x in data[:m]) / math.fsum(averaged[:m])]
        else:
            rel_perf[task] = [math.fsum(x.value for x in data[:min(len(data), len(c))]) /
                              math.fsum(c[:min(len(data), len(c))]) for c in ste_curves]
        slope = ls_slope([float(x.exp_num) for x in data], [x.value for x in data])
        task_sat = block_saturation([(x.exp_num, x.value) for x in data])
        if task_sat is None or task_sat[1] == 0:
            continue
        entry = _Efficiency(task_saturation=task_sat[0], task_exp_to_sat=task_sat[1])
        if averaging == "time":
            expert_sats = [block_saturation(list(enumerate(averaged)))]
        else:
            expert_sats = [block_saturation([(x.exp_num, x.value) for x in run if x.block_type == "train"])
                           for run in runs]
        for expert in expert_sats:
            if expert is None or expert[1] == 0:
                continue
            ste_sat, ste_exp = expert
            entry.ste_saturation.append(ste_sat)
            entry.ste_exp_to_sat.append(ste_exp)
            entry.se_saturation.append(entry.task_saturation / ste_sat)
            entry.se_exp_to_sat.append(ste_exp / entry.task_exp_to_sat)
            violates = entry.task_saturation < ste_sat * 0.2 or slope < 0
            entry.se.append(0 if violates else (entry.task_saturation / ste_sat) * (ste_exp / entry.task_exp_to_sat))
        if averaging == "time" and not entry.se:
            continue
        se[task] = entry
    return rel_perf, se


def compute_l2metrics(log: ScenarioLog, settings: L2MetricsSettings | None = None,
                      ste: dict[str, list[list[_Row]]] | None = None) -> L2MetricsResult:
    """The metrics of one scenario log as l2metrics 3.1.0 computes them; `ste` from `load_ste_runs`."""
    settings = settings or L2MetricsSettings()
    measure = settings.perf_measure
    if measure not in log.metrics_columns:
        raise RunFolderError(f"{log.scenario_dir}: no metric column {measure!r} (columns: "
                             f"{', '.join(log.metrics_columns) or 'none'}); choose one with --perf-measure")
    rows = _rows(log.records, measure)
    if not rows:
        raise RunFolderError(f"{log.scenario_dir}: the log has no complete experience with a {measure} value")
    regimes = _regimes(rows)
    order = sorted(regimes, key=lambda r: (r.block_type != "train", r.block_num))
    tasks = list(dict.fromkeys(r.task for r in order))
    # copies: the values are smoothed and normalised in place, and the same expert runs may serve several logs
    experts = {t: [[r.copy() for r in run] for run in (ste or {}).get(t, [])] for t in tasks}
    experts = {t: runs for t, runs in experts.items() if runs}

    # smoothing, then normalisation (the range is taken from the smoothed values)
    for regime in regimes:
        if regime.block_type == "train":
            for row, value in zip(regime.rows, reflect_smooth([r.value for r in regime.rows], settings.window_length)):
                row.value = value
    for runs in experts.values():
        for run in runs:
            for regime in _regimes(run):
                for row, value in zip(regime.rows, reflect_smooth([r.value for r in regime.rows],
                                                                  settings.window_length)):
                    row.value = value
    data_range: dict[str, tuple[float, float]] = {}
    for task in tasks:
        values = [r.value for r in rows if r.task == task]
        values += [r.value for run in experts.get(task, []) for r in run if r.block_type == "train"]
        data_range[task] = (min(values), max(values))

    def normalise(row: _Row) -> None:
        lo, hi = data_range[row.task]
        row.value = float(OFFSET) if lo == hi else (row.value - lo) / (hi - lo) * SCALE + OFFSET

    for row in rows:
        normalise(row)
    for task, runs in experts.items():
        for run in runs:
            for row in run:
                if row.task in data_range:
                    normalise(row)

    by_num = {r.num: r for r in regimes}
    sleep = any(r.block_subtype == "sleep" for r in regimes)
    counted = [r for r in regimes if not (sleep and r.block_type == "test" and r.block_subtype == "wake")]

    # per regime: saturation, terminal performance, average performance
    sat: dict[int, tuple[float, int] | None] = {r.num: block_saturation(r.points()) for r in regimes}
    term: dict[int, tuple[float, int]] = {r.num: terminal(r.points(), r.block_type) for r in regimes}
    tp = {num: value for num, (value, _) in term.items()}
    avg: dict[int, float] = {r.num: fmean(x.value for x in r.rows) for r in counted}

    recovery_time, perf_recovery = _recovery(regimes, tp)
    maintenance = _maintenance(counted, tp, settings.maintenance_method)
    kinds = {"ratio": ["ratio"], "contrast": ["contrast"], "both": ["ratio", "contrast"]}[settings.transfer_method]
    pairs = _transfer(regimes, counted, tp, kinds)
    rel_perf, se = _experts(regimes, tasks, experts, settings.ste_averaging_method)

    # per task
    names = ["perf_recovery", "avg_train_perf", "avg_eval_perf"]
    names += [f"perf_maintenance_{m}" for m in ("mrlep", "mrtlp") if m in maintenance]
    names += [f"{d}_transfer_{k}" for k in ("ratio", "contrast") if k in kinds for d in ("forward", "backward")]
    names += ["ste_rel_perf", "sample_efficiency"]
    task_metrics: dict[str, dict[str, Any]] = {}
    for task in tasks:
        mine = [r for r in regimes if r.task == task]
        t: dict[str, Any] = {name: None for name in names}
        t["perf_recovery"] = perf_recovery.get(task)
        train_avgs = [avg[r.num] for r in mine if r.num in avg and r.block_type == "train"]
        eval_avgs = [avg[r.num] for r in mine if r.num in avg and r.block_type == "test"]
        t["avg_train_perf"] = fmean(train_avgs) if train_avgs else None
        t["avg_eval_perf"] = fmean(eval_avgs) if eval_avgs else None
        for method, by_regime in maintenance.items():
            mv = [by_regime[r.num] for r in mine if r.num in by_regime]
            t[f"perf_maintenance_{method}"] = fmean(mv) if mv else None
        for (direction, kind), table in pairs.items():
            t[f"{direction}_transfer_{kind}"] = table.get(task, {})
        rp = rel_perf.get(task)
        t["ste_rel_perf"] = fmean(rp) if rp else None
        eff = se.get(task)
        t["sample_efficiency"] = fmean(eff.se) if eff and eff.se else None
        t["recovery_times"] = [float(recovery_time[r.num]) for r in mine if r.num in recovery_time]
        t["avg_train_perf_vals"] = train_avgs
        t["avg_eval_perf_vals"] = eval_avgs
        for method, by_regime in maintenance.items():
            t[f"maintenance_val_{method}"] = _clumps([by_regime.get(r.num) for r in mine])
        t["ste_rel_perf_vals"] = rp if rp is not None else []
        t["ste_saturation_vals"] = eff.ste_saturation if eff else []
        t["ste_exp_to_sat_vals"] = eff.ste_exp_to_sat if eff else []
        t["se_saturation_vals"] = eff.se_saturation if eff else []
        t["se_exp_to_sat_vals"] = eff.se_exp_to_sat if eff else []
        t["sample_efficiency_vals"] = eff.se if eff else []
        t["se_task_saturation"] = eff.task_saturation if eff else None
        t["se_task_exp_to_sat"] = float(eff.task_exp_to_sat) if eff else None
        values_of_task = [r.value for r in rows if r.task == task]
        t["min"], t["max"] = min(values_of_task), max(values_of_task)
        t["num_lx"] = sum(1 for r in rows if r.task == task and r.block_type == "train")
        t["num_ex"] = sum(1 for r in rows if r.task == task and r.block_type == "test")
        task_metrics[task] = t

    # lifetime
    lifetime: dict[str, Any] = {}
    for name in names:
        if name.endswith(("_ratio", "_contrast")) and "transfer" in name:
            direction, _, kind = name.split("_")
            firsts = [vals[0] for tested in pairs[(direction, kind)].values() for vals in tested.values()]
            aggregated = _aggregate(firsts, settings.aggregation_method)
        else:
            aggregated = _aggregate([v for v in (task_metrics[t][name] for t in tasks) if v is not None],
                               settings.aggregation_method)
        lifetime[name] = aggregated

    stamps = [r.timestamp for r in rows]
    info = log.scenario_info
    metrics: dict[str, Any] = {
        **lifetime,
        "run_id": Path(log.scenario_dir).name,
        "complexity": str(info.get("complexity", "")),
        "difficulty": str(info.get("difficulty", "")),
        "scenario_type": str(info.get("scenario_type", "")),
        "metrics_column": measure,
        "min": min(r.value for r in rows),
        "max": max(r.value for r in rows),
        "num_lx": sum(1 for r in rows if r.block_type == "train"),
        "num_ex": sum(1 for r in rows if r.block_type == "test"),
        "runtime": (max(stamps) - min(stamps)).total_seconds(),
        "normalization_data_range": {t: {"min": lo, "max": hi} for t, (lo, hi) in data_range.items()},
        "task_metrics": task_metrics,
    }
    regime_rows = [RegimeRow(
        block_num=r.block_num, block_type=r.block_type, block_subtype=r.block_subtype, task_name=r.task,
        regime_num=r.num, task_params=dict(r.params),
        saturation=None if sat[r.num] is None else sat[r.num][0],  # type: ignore[index]
        exp_to_sat=None if sat[r.num] is None else sat[r.num][1],  # type: ignore[index]
        term_perf=tp[r.num], exp_to_term_perf=term[r.num][1], avg_perf=avg.get(r.num)) for r in regimes]
    return L2MetricsResult(settings=settings, metrics=_json(metrics), regimes=regime_rows)


def _json(value: Any) -> Any:
    if isinstance(value, float):
        return _nan_to_none(value)
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value
