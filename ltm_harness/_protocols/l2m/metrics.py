"""Lifelong-learning metrics from an l2logger-format log (L2M meaning; formulas in docs/l2m.md).

Terms. The log is cut into *regimes*: maximal runs of consecutive rows with the same block_num,
block_type, task_name and task_params. An experience's performance is the mean of the chosen metric
column (default `reward`) over its rows; empty cells are skipped. A *variant* is a (task, params) pair.

1. Normalisation. Per task, with lo/hi the smallest/largest performance of that task in the log, in
   its single-task-expert (STE) logs and in the range scenario_info.json declares for the column (the
   runner declares the tasks' score ranges): p = 1 + 100 (x - lo) / (hi - lo); p = 1 when hi == lo.
   Every metric below uses p.
2. Learning curve of a train regime with n experiences: the centred moving average s of p with window
   w = min(floor(0.2 n), 100) (no smoothing when w < 2); see `curves.smooth`. Test regimes are not
   smoothed: their curve is p itself.
3. Saturation (train regimes): sat = max(s); experiences to saturation = 1 + the first index i with
   s_i = sat.
4. Terminal performance: train regime, the mean of the last k = max(1, ceil(0.1 n)) values of s;
   test regime, the mean of all its p.
5. Recovery time, for every train regime R of a task after that task's first train regime: with tp_prev
   the terminal performance of the task's previous train regime, recovery = 1 + the first index i with
   s_i >= tp_prev in R, or n + 1 (and recovered = false) when R never gets there.
6. Performance recovery of a task: -(Theil-Sen slope of its recovery times in order), i.e. minus the
   median of (r_j - r_i) / (j - i) over i < j; needs two recovery times. Positive: recovering faster.
7. Performance maintenance: for every test regime T of variant v whose most recent train regime of v
   before it, L, is separated from T by training on some other variant: m(T) = tp(T) - tp(L). A task's
   value is the mean of m over its test regimes; negative means forgetting.
8. Transfer, for tasks A != B: for two consecutive test regimes T1, T2 of the same variant of B with a
   train regime of A between them and no train regime of B between them: tp1 = tp(T1), tp2 = tp(T2),
   ratio = tp2 / tp1, contrast = (tp2 - tp1) / (tp1 + tp2). It is *forward* transfer from A to B when B
   was never trained before T1, else *backward* transfer. A pair's value is the mean over its
   (T1, T2) entries.
9. Average train / eval performance of a task: the mean of p over all its train / test experiences.
10. Relative performance (needs STE logs): x = p of the task's train experiences in log order, y = the
   STE's train p (several STE runs: each cut to the shortest, averaged per index); m = min(|x|, |y|);
   RP = sum(x[:m]) / sum(y[:m]).
11. Sample efficiency (needs STE logs): saturation and experiences to saturation of the smoothed x
   (sat, e) and of the smoothed y (sat_ste, e_ste) with the window rule of 2;
   SE = (sat / sat_ste) * (e_ste / e), reported with both factors.

Lifetime values are means over the tasks (for transfer: over the ordered task pairs) that have one.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, Field, JsonValue, TypeAdapter, ValidationError

from ltm_harness._guard.files import read_text
from ltm_harness._errors import RunFolderError, option_name
from ltm_harness._protocols.l2m import curves
from ltm_harness._protocols.l2m.logger import LogRecord, ScenarioLog, read_scenario
from ltm_harness._protocols.l2m.metrics_report import (LifetimeMetrics, MetricsReport, PairTransfer, RegimeMetrics,
                                                       TaskMetrics, TransferEntry)
from ltm_harness._store.files import write_model
from ltm_harness._store.layout import LOGGER_INFO, METRICS as METRICS_FILE, SCENARIO_INFO

_RANGES = TypeAdapter(dict[str, dict[str, tuple[float, float]]])


class _Regime:
    def __init__(self, num: int, first: LogRecord) -> None:
        self.num = num
        self.block_num = first.block_num
        self.block_type = first.block_type
        self.task = first.task_name
        self.params = dict(first.task_params)
        self.variant = (first.task_name, json.dumps(first.task_params, sort_keys=True))
        self.first_exp = first.exp_num
        self.raw: list[float] = []  # performance per experience
        self.p: list[float] = []  # normalised
        self.curve: list[float] = []
        self.tp = 0.0


def _key(r: LogRecord) -> tuple[int, str, str, str]:
    return r.block_num, r.block_type, r.task_name, json.dumps(r.task_params, sort_keys=True)


def per_experience(records: list[LogRecord], measure: str) -> list[tuple[int, float]]:
    """(exp_num, mean of `measure` over the experience's rows) in order; experiences with no value are left out."""
    sums: dict[int, list[float]] = {}
    for r in records:
        value = r.metrics.get(measure)
        if value is not None:
            sums.setdefault(r.exp_num, []).append(value)
    return [(exp, fmean(vals)) for exp, vals in sums.items()]


def _regimes(records: list[LogRecord], measure: str) -> list[_Regime]:
    groups: list[list[LogRecord]] = []
    for r in records:
        if groups and _key(groups[-1][-1]) == _key(r):
            groups[-1].append(r)
        else:
            groups.append([r])
    out: list[_Regime] = []
    for rows in groups:
        values = per_experience(rows, measure)
        if not values:
            continue
        regime = _Regime(len(out), rows[0])
        regime.raw = [v for _, v in values]
        out.append(regime)
    return out


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _ste_curve(runs: list[list[float]]) -> list[float]:
    shortest = min(len(r) for r in runs)
    return [fmean(r[i] for r in runs) for i in range(shortest)]


def _declared_ranges(log: ScenarioLog, measure: str) -> dict[str, tuple[float, float]]:
    """Known ranges of `measure` per task from scenario_info.json ("ranges": {column: {task: [low, high]}})."""
    try:
        parsed = _RANGES.validate_python(log.scenario_info.get("ranges", {}))
    except ValidationError:
        raise RunFolderError(f"{Path(log.scenario_dir) / SCENARIO_INFO}: \"ranges\" must map a metric column to "
                        "{task: [low, high]}; fix or remove it") from None
    return {task: (min(pair), max(pair)) for task, pair in parsed.get(measure, {}).items()}


def compute_metrics(log: ScenarioLog, perf_measure: str = "reward",
                    ste: dict[str, list[list[float]]] | None = None) -> MetricsReport:
    """The metrics of one scenario log; `ste` maps a task to its STE runs (raw train performance per experience)."""
    if perf_measure not in log.metrics_columns:
        raise RunFolderError(f"{log.scenario_dir}: no metric column {perf_measure!r} (columns: "
                        f"{', '.join(log.metrics_columns) or 'none'}); choose one with {option_name('perf_measure')}")
    regimes = _regimes(log.records, perf_measure)
    if not regimes:
        raise RunFolderError(f"{log.scenario_dir}: the log has no {perf_measure} values to compute metrics from")
    ste = {task: runs for task, runs in (ste or {}).items() if runs and min(len(r) for r in runs) > 0}
    notes: list[str] = []
    tasks = list(dict.fromkeys(r.task for r in regimes))

    # 1. normalisation
    declared = _declared_ranges(log, perf_measure)
    ranges: dict[str, tuple[float, float]] = {}
    for task in tasks:
        values = [v for r in regimes if r.task == task for v in r.raw]
        values += [v for run in ste.get(task, []) for v in run]
        values += list(declared.get(task, ()))
        ranges[task] = (min(values), max(values))
        if ranges[task][0] == ranges[task][1]:
            notes.append(f"task {task!r}: every {perf_measure} is {ranges[task][0]:g}, so there is no range to "
                         "normalise on; its performance is set to 1 and its averages carry no information")
    for r in regimes:
        lo, hi = ranges[r.task]
        r.p = [curves.normalise(v, lo, hi) for v in r.raw]
        r.curve = curves.smooth(r.p) if r.block_type == "train" else list(r.p)
        r.tp = curves.terminal(r.curve) if r.block_type == "train" else fmean(r.p)

    rows = {r.num: RegimeMetrics(
        regime_num=r.num, block_num=r.block_num, block_type=r.block_type, task_name=r.task, task_params=r.params,
        first_exp=r.first_exp, experiences=len(r.raw), raw_mean=fmean(r.raw), perf_mean=fmean(r.p),
        terminal_perf=r.tp) for r in regimes}
    for r in regimes:
        if r.block_type == "train":
            sat, exp = curves.saturation(r.curve)
            rows[r.num].saturation, rows[r.num].exp_to_saturation = sat, exp

    task_rows = {t: TaskMetrics(task_name=t, range_low=ranges[t][0], range_high=ranges[t][1]) for t in tasks}

    # 5-6. recovery
    for task in tasks:
        trains = [r for r in regimes if r.task == task and r.block_type == "train"]
        times: list[int] = []
        for prev, cur in zip(trains, trains[1:]):
            reached = curves.first_reaching(cur.curve, prev.tp)
            time = reached if reached is not None else len(cur.curve) + 1
            rows[cur.num].recovered = reached is not None
            rows[cur.num].recovery_time = time
            times.append(time)
        task_rows[task].recovery_times = times
        if len(times) >= 2:
            task_rows[task].perf_recovery = -curves.theil_sen_slope([float(t) for t in times])
    if not any(t.perf_recovery is not None for t in task_rows.values()):
        notes.append("performance recovery needs two recovery times for a task (three train regimes of it); "
                     "no task has them")

    # 7. maintenance
    for t in regimes:
        if t.block_type != "test":
            continue
        before = [r for r in regimes if r.num < t.num and r.block_type == "train"]
        own = [r for r in before if r.variant == t.variant]
        if not own:
            continue
        ref = own[-1]
        if any(r.num > ref.num and r.variant != t.variant for r in before):
            rows[t.num].maintenance = t.tp - ref.tp
            rows[t.num].maintenance_reference = ref.num
    for task in tasks:
        kept = [rows[r.num].maintenance for r in regimes if r.task == task]
        task_rows[task].perf_maintenance = _mean([v for v in kept if v is not None])
    if not any(t.perf_maintenance is not None for t in task_rows.values()):
        notes.append("performance maintenance needs a test of a trained variant after training on something else; "
                     "the log has none")

    # 8. transfer
    entries: list[TransferEntry] = []
    for b in tasks:
        variants = list(dict.fromkeys(r.variant for r in regimes if r.task == b))
        for variant in variants:
            tests = [r for r in regimes if r.variant == variant and r.block_type == "test"]
            for t1, t2 in zip(tests, tests[1:]):
                between = [r for r in regimes if t1.num < r.num < t2.num and r.block_type == "train"]
                if any(r.task == b for r in between):
                    continue
                trained_before = any(r.task == b and r.block_type == "train" and r.num < t1.num for r in regimes)
                for a in dict.fromkeys(r.task for r in between):
                    entries.append(TransferEntry(
                        kind="backward" if trained_before else "forward", from_task=a, to_task=b,
                        to_params=t1.params, test_before=t1.num, test_after=t2.num, tp_before=t1.tp,
                        tp_after=t2.tp, ratio=curves.ratio(t1.tp, t2.tp), contrast=curves.contrast(t1.tp, t2.tp)))
    pairs: list[PairTransfer] = []
    for kind, a, b in dict.fromkeys((e.kind, e.from_task, e.to_task) for e in entries):
        mine = [e for e in entries if (e.kind, e.from_task, e.to_task) == (kind, a, b)]
        pairs.append(PairTransfer(kind=kind, from_task=a, to_task=b, ratio=fmean(e.ratio for e in mine),
                                  contrast=fmean(e.contrast for e in mine), entries=len(mine)))
    if not pairs:
        notes.append("transfer needs a task tested before and after another task's training (with no training "
                     "of its own in between); the log has no such pair")

    # 9. averages
    for task in tasks:
        task_rows[task].avg_train_perf = _mean([v for r in regimes if r.task == task and r.block_type == "train"
                                                for v in r.p])
        task_rows[task].avg_eval_perf = _mean([v for r in regimes if r.task == task and r.block_type == "test"
                                               for v in r.p])

    # 10-11. against single-task experts
    if not ste:
        notes.append("no single-task-expert logs given: relative performance and sample efficiency are not computed")
    for task in tasks:
        runs = ste.get(task)
        x = [v for r in regimes if r.task == task and r.block_type == "train" for v in r.p]
        if not runs or not x:
            if ste and x:
                notes.append(f"no single-task-expert log for task {task!r}")
            continue
        lo, hi = ranges[task]
        y = [curves.normalise(v, lo, hi) for v in _ste_curve(runs)]
        m = min(len(x), len(y))
        row = task_rows[task]
        row.ste_runs = len(runs)
        row.ste_rel_perf = sum(x[:m]) / sum(y[:m])
        sat, e = curves.saturation(curves.smooth(x))
        sat_ste, e_ste = curves.saturation(curves.smooth(y))
        row.se_saturation = sat / sat_ste
        row.se_exp_to_saturation = e_ste / e
        row.sample_efficiency = row.se_saturation * row.se_exp_to_saturation

    def lifetime(values: list[float | None] | list[float]) -> float | None:
        return _mean([v for v in values if v is not None])

    trs = list(task_rows.values())
    forward = [p for p in pairs if p.kind == "forward"]
    backward = [p for p in pairs if p.kind == "backward"]
    life = LifetimeMetrics(
        perf_recovery=lifetime([t.perf_recovery for t in trs]),
        perf_maintenance=lifetime([t.perf_maintenance for t in trs]),
        forward_transfer_ratio=lifetime([p.ratio for p in forward]),
        forward_transfer_contrast=lifetime([p.contrast for p in forward]),
        backward_transfer_ratio=lifetime([p.ratio for p in backward]),
        backward_transfer_contrast=lifetime([p.contrast for p in backward]),
        avg_train_perf=lifetime([t.avg_train_perf for t in trs]),
        avg_eval_perf=lifetime([t.avg_eval_perf for t in trs]),
        ste_rel_perf=lifetime([t.ste_rel_perf for t in trs]),
        sample_efficiency=lifetime([t.sample_efficiency for t in trs]),
    )
    return MetricsReport(scenario=log.scenario_dir, perf_measure=perf_measure, lifetime=life, tasks=trs,
                         regimes=[rows[r.num] for r in regimes], transfer=pairs, transfer_entries=entries, notes=notes)


# -- single-task experts and files -------------------------------------------------------------------------


def scenario_dirs(path: Path) -> list[Path]:
    """The scenario folders at or below `path`: folders holding logger_info.json (or `path` itself)."""
    if not path.is_dir():
        raise RunFolderError(f"{path}: no such log folder; give the folder `syllabus run` wrote its logs to (its --out)")
    if (path / LOGGER_INFO).is_file():
        return [path]
    found = sorted({p.parent for p in path.rglob(LOGGER_INFO)})
    return found or [path]


def load_ste(path: Path, perf_measure: str = "reward") -> dict[str, list[list[float]]]:
    """STE runs per task from the scenario logs under `path`; each must train exactly one task."""
    out: dict[str, list[list[float]]] = {}
    for folder in scenario_dirs(path):
        log = read_scenario(folder)
        if perf_measure not in log.metrics_columns:
            raise RunFolderError(f"{folder}: single-task-expert log has no {perf_measure!r} column")
        train = [r for r in log.records if r.block_type == "train"]
        trained = list(dict.fromkeys(r.task_name for r in train))
        if len(trained) != 1:
            raise RunFolderError(f"{folder}: a single-task-expert log trains exactly one task, but this one trains "
                            f"{len(trained)} ({', '.join(trained) or 'none'}); give one log folder per task")
        values = [v for _, v in per_experience(train, perf_measure)]
        if values:
            out.setdefault(trained[0], []).append(values)
    return out


def write_metrics(report: MetricsReport, path: Path) -> None:
    write_model(path, report)


def read_metrics(path: Path) -> MetricsReport:
    try:
        return MetricsReport.model_validate_json(read_text(path))
    except (OSError, ValueError) as exc:
        raise RunFolderError(f"{path}: not a metrics file written by `syllabus metrics` ({exc})") from None
