"""l2metrics compatibility: the lifelong-learning metrics computed the way l2metrics 3.1.0 computes them.

The harness's own metrics (`metrics.py`, docs/l2m.md) follow the L2M meanings with rules of their own. This module
reproduces the numbers of the reference implementation instead, so that a log scored here and by l2metrics gives
the same values (tested on l2metrics' own example logs, tests/data/l2metrics-examples/). What it does differently
from the harness's rules, each as l2metrics does it:

- Rows: only `complete` experiences with a value of the performance column count; task names are lower-cased; a
  *regime* changes with block_num, block_type, block_subtype or task_name (not with task_params).
- The block table: a row per regime and parameter set (so more rows than regimes when a regime changes
  parameters). l2metrics keeps each per-regime value at the row whose position is the regime's number, and reads
  a task's values from the task's rows: a task's lists, the regime table (its last rows empty) and, in multi-task
  logs, which task a value is filed under all follow from that, and are reproduced (`_blocks`). A log on which
  l2metrics itself fails (it looks up a regime numbered like a row position past the last regime, or finds two
  expert values for one task) is refused in one line.
- Smoothing comes first: every train regime (and every regime of an expert's log) is smoothed with a flat window
  of min(floor(0.2 n), 100) over the signal padded by reflection at both ends; a window below 3 leaves it as is.
- Normalisation comes after smoothing: per task, lo/hi are the smallest/largest smoothed value of the task in the
  log and in its experts' train rows; p = 1 + 100 (x - lo) / (hi - lo), 1 when hi == lo. Every metric uses p.
- Saturation smooths the (already smoothed) curve once more; experiences to saturation and recovery times count
  from 0. Terminal performance: the mean of the last 10% (rows from int(0.9 n)) of a train regime, of all of a
  test regime.
- Recovery time: for each train regime of a task after its first, the first index where the curve reaches the
  terminal performance of the task's previous train regime (n + 1 when never). Performance recovery: minus the
  Theil-Sen slope of a task's recovery times. Both only when the log has two or more recovery times: with fewer,
  every task's `recovery_times` is empty.
- Performance maintenance, MRLEP: the reference of a test is the first test of the task after its last training;
  each later test of the task gives test - reference. MRTLP: the same tests, minus the terminal performance of the
  task's last train regime before the test. A task's value is the mean.
- Transfer: for tasks A != B, each train regime of A between two consecutive tests of B gives tp2 / tp1 (ratio)
  and (tp2 - tp1) / (tp1 + tp2) (contrast), forward when A is trained before B first is, backward when after; the
  lifetime value takes only the first value of each (A, B) pair.
- Average train/eval performance: the mean over a task's regimes of each regime's mean p.
- Against single-task experts, newest run first (`ste_averaging_method` "metrics": each expert run gives its own
  value and the task's value is their mean; "time": the runs' curves are averaged first, cut to the shortest): relative
  performance sum(x[:m]) / sum(y[:m]); sample efficiency (sat / sat_ste) * (e_ste / e) from the saturations of
  the task's concatenated train rows and of the expert's, 0 when the task's least-squares slope is negative or
  its saturation is below 0.2 x the expert's; a task (or expert run) whose saturation comes at index 0 is left out.
- Lifetime values: the mean (or median) over the tasks that have one.

The result has the shape of l2metrics' `<run>_metrics.json` (`L2MetricsResult.to_json_data()`; NaN written as
null), plus the rows of its `<run>_regime.tsv` (`regimes`). The rows, regimes and per-curve numbers are in
`l2metrics_regimes.py`, the recovery, maintenance, transfer and expert rules in `l2metrics_rules.py`.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from statistics import fmean, median
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from ltm_harness._guard.files import read_text
from ltm_harness._errors import ConfigError, RunFolderError
from ltm_harness._guard import jsonsafe
from ltm_harness._protocols.l2m.l2metrics_regimes import (_blocks, _regimes, _Row, _rows, block_saturation,
                                                          reflect_smooth, terminal)
from ltm_harness._protocols.l2m.l2metrics_rules import Unreproducible, _experts, _maintenance, _recovery, _transfer
from ltm_harness._protocols.l2m.logger import ScenarioLog

NAME = "l2metrics"  # the value of --compat
VERSION = "3.1.0"  # the l2metrics version reproduced
SCALE = 100
OFFSET = 1
_T = TypeVar("_T")


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
        raw = jsonsafe.loads(read_text(path))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the settings file ({exc.strerror}); give an l2metrics settings JSON") from None
    except (json.JSONDecodeError, jsonsafe.TooDeep, UnicodeDecodeError) as exc:
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


# -- the result -----------------------------------------------------------------------------------------------


class RegimeRow(BaseModel):
    """One line of l2metrics' `<run>_regime.tsv`: a regime and one of its parameter sets, with the numbers l2metrics
    puts on that line (those of the regime numbered like the line's position; none past the last regime)."""

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


def compute_l2metrics(log: ScenarioLog, settings: L2MetricsSettings | None = None,
                      ste: dict[str, list[list[_Row]]] | None = None) -> L2MetricsResult:
    """The metrics of one scenario log as l2metrics 3.1.0 computes them; `ste` from `load_ste_runs`."""
    try:
        return _compute(log, settings or L2MetricsSettings(), ste)
    except Unreproducible as exc:
        raise RunFolderError(f"{log.scenario_dir}: l2metrics 3.1.0 computes nothing on this log: {exc}") from None


def _compute(log: ScenarioLog, settings: L2MetricsSettings, ste: dict[str, list[list[_Row]]] | None) -> L2MetricsResult:
    measure = settings.perf_measure
    if measure not in log.metrics_columns:
        raise RunFolderError(f"{log.scenario_dir}: no metric column {measure!r} (columns: "
                             f"{', '.join(log.metrics_columns) or 'none'}); choose one with --perf-measure")
    rows = _rows(log.records, measure)
    if not rows:
        raise RunFolderError(f"{log.scenario_dir}: the log has no complete experience with a {measure} value")
    regimes = _regimes(rows)
    blocks = _blocks(regimes)
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

    kinds = {"ratio": ["ratio"], "contrast": ["contrast"], "both": ["ratio", "contrast"]}[settings.transfer_method]
    recovery_time, perf_recovery = _recovery(blocks, by_num, tp)
    maintenance = _maintenance(counted, tp, settings.maintenance_method)
    pairs = _transfer(blocks, counted, tp, kinds)
    rel_perf, se = _experts(regimes, tasks, experts, settings.ste_averaging_method)

    # per task
    names = ["perf_recovery", "avg_train_perf", "avg_eval_perf"]
    names += [f"perf_maintenance_{m}" for m in ("mrlep", "mrtlp") if m in maintenance]
    names += [f"{d}_transfer_{k}" for k in ("ratio", "contrast") if k in kinds for d in ("forward", "backward")]
    names += ["ste_rel_perf", "sample_efficiency"]
    task_metrics: dict[str, dict[str, Any]] = {}
    for task in tasks:
        mine = [b.label for b in blocks if b.task == task]  # the task's rows of the block table
        t: dict[str, Any] = {name: None for name in names}
        t["perf_recovery"] = next((perf_recovery[x] for x in mine if x in perf_recovery), None)
        train_avgs = [avg[x] for x in mine if x in avg and by_num[x].block_type == "train"]
        eval_avgs = [avg[x] for x in mine if x in avg and by_num[x].block_type == "test"]
        t["avg_train_perf"] = fmean(train_avgs) if train_avgs else None
        t["avg_eval_perf"] = fmean(eval_avgs) if eval_avgs else None
        for method, by_regime in maintenance.items():
            mv = [by_regime[x] for x in mine if x in by_regime]
            t[f"perf_maintenance_{method}"] = fmean(mv) if mv else None
        for (direction, kind), table in pairs.items():
            t[f"{direction}_transfer_{kind}"] = table.get(task, {})
        rp = _one(task, "relative performance", [rel_perf[x] for x in mine if x in rel_perf])
        t["ste_rel_perf"] = fmean(rp) if rp else None
        eff = _one(task, "sample efficiency", [se[x] for x in mine if x in se])
        t["sample_efficiency"] = fmean(eff.se) if eff and eff.se else None
        # l2metrics lists recovery times only when the log has two or more (else it computes no performance recovery)
        t["recovery_times"] = [float(recovery_time[x]) for x in mine if x in recovery_time] \
            if len(recovery_time) > 1 else []
        t["avg_train_perf_vals"] = train_avgs
        t["avg_eval_perf_vals"] = eval_avgs
        for method, by_regime in maintenance.items():
            t[f"maintenance_val_{method}"] = _clumps([by_regime.get(x) for x in mine])
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
    # the block table, each row with the numbers of the regime whose number is its position (as l2metrics fills it)
    regime_rows = []
    for b in blocks:
        at = sat.get(b.label)
        regime_rows.append(RegimeRow(
            block_num=b.block_num, block_type=b.block_type, block_subtype=b.block_subtype, task_name=b.task,
            regime_num=b.regime, task_params=dict(b.params), saturation=None if at is None else at[0],
            exp_to_sat=None if at is None else at[1], term_perf=tp.get(b.label),
            exp_to_term_perf=term[b.label][1] if b.label in term else None, avg_perf=avg.get(b.label)))
    return L2MetricsResult(settings=settings, metrics=_json(metrics), regimes=regime_rows)


def _one(task: str, what: str, found: list[_T]) -> _T | None:
    """The value of a task kept at one of its rows; l2metrics stops when it finds several."""
    if len(found) > 1:
        raise Unreproducible(f"it finds {len(found)} {what} values among the rows of task {task} (\"Unexpected "
                             "size\"), as regimes that change parameters give its block table more rows than regimes")
    return found[0] if found else None


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
