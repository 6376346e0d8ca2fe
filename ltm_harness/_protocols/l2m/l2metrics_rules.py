"""l2metrics compatibility, its metric rules: recovery, maintenance, transfer and the comparison with single-task
experts, each computed over the regimes of one log as l2metrics 3.1.0 does, and kept at the labels (positions in
its block table) where it keeps them (the rules are described in `l2metrics.py`)."""

from __future__ import annotations

import math
from itertools import permutations
from statistics import fmean

from pydantic import BaseModel, Field

from ltm_harness._protocols.l2m import curves
from ltm_harness._protocols.l2m.l2metrics_regimes import _Block, _Regime, _Row, block_saturation, ls_slope, recovery


class Unreproducible(ValueError):
    """A log on which l2metrics 3.1.0 itself stops with an error, so there is no number to reproduce."""


def _recovery(blocks: list[_Block], by_num: dict[int, _Regime],
              tp: dict[int, float]) -> tuple[dict[int, int], dict[int, float]]:
    """Recovery time per train row of the block table (after a task's first) and performance recovery per task, at
    the labels where l2metrics keeps them.

    As l2metrics: each pair of consecutive train rows (prev, cur) of a task compares the curve of the regime
    numbered `cur` with the terminal performance kept at `prev`; performance recovery is computed only when the
    log has two or more recovery times, and kept at the task's highest regime number."""
    recovery_time: dict[int, int] = {}
    tasks = list(dict.fromkeys(b.task for b in blocks))
    for task in tasks:
        trains = [b.label for b in blocks if b.task == task and b.block_type == "train" and b.block_subtype == "wake"]
        for prev, cur in zip(trains, trains[1:]):
            if cur not in by_num:
                raise Unreproducible(f"its block table has a train row at position {cur} but there are only {len(by_num)} "
                                     "regimes (regimes that change parameters have several rows), and it reads that "
                                     "position as a regime number and fails (KeyError)")
            recovery_time[cur] = recovery(by_num[cur].points(), tp.get(prev, math.nan))
    perf_recovery: dict[int, float] = {}
    if len(recovery_time) > 1:
        for task in tasks:
            times = [float(recovery_time[b.label]) for b in blocks if b.task == task and b.label in recovery_time]
            if len(times) > 1:
                perf_recovery[max(b.regime for b in blocks if b.task == task)] = -curves.theil_sen_slope(times)
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


Pairs = dict[str, dict[str, list[float]]]  # {trained task: {tested task: values in label order}}


def _transfer(blocks: list[_Block], counted: list[_Regime], tp: dict[int, float],
              kinds: list[str]) -> dict[tuple[str, str], Pairs]:
    """Transfer values per (direction, kind). A value is kept at the label of the second test's regime number: a
    later pair writing to the same test replaces an earlier one, and the value is filed under the task of the block
    row at that label, as in l2metrics. A test's terminal performance is the one kept at the first row of its
    regime."""
    first_row: dict[int, int] = {}
    for b in blocks:
        first_row.setdefault(b.regime, b.label)

    def tp_of(regime: int) -> float:
        return tp.get(first_row[regime], math.nan)

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
                        tp1, tp2 = tp_of(t1), tp_of(t2)
                        if "ratio" in kinds and tp1 != 0:
                            by_test[(direction, "ratio")][t2] = (task, tp2 / tp1)
                        if "contrast" in kinds and tp1 + tp2 != 0:
                            by_test[(direction, "contrast")][t2] = (task, (tp2 - tp1) / (tp1 + tp2))
    out: dict[tuple[str, str], Pairs] = {}
    for key, found in by_test.items():
        table: Pairs = {}
        for b in blocks:
            if b.label in found:
                trained, value = found[b.label]
                table.setdefault(trained, {}).setdefault(b.task, []).append(value)
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
             averaging: str) -> tuple[dict[int, list[float]], dict[int, _Efficiency]]:
    """Relative performance values and sample efficiency of each task against its expert runs, kept (as l2metrics
    keeps them) at the label of the task's last trained regime number."""
    rel_perf: dict[int, list[float]] = {}
    se: dict[int, _Efficiency] = {}
    for task in tasks:
        runs = experts.get(task)
        trained = [r for r in regimes if r.task == task and r.block_type == "train" and r.block_subtype == "wake"]
        data = [x for r in trained for x in r.rows]
        if not runs or not data:
            continue
        label = trained[-1].num
        ste_curves = [[x.value for x in run if x.block_type == "train"] for run in runs]
        shortest = min(len(c) for c in ste_curves)
        averaged = [fmean(c[i] for c in ste_curves) for i in range(shortest)]
        if averaging == "time":
            m = min(len(data), len(averaged))
            rel_perf[label] = [math.fsum(x.value for x in data[:m]) / math.fsum(averaged[:m])]
        else:
            rel_perf[label] = [math.fsum(x.value for x in data[:min(len(data), len(c))]) /
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
        se[label] = entry
    return rel_perf, se
