"""l2metrics compatibility, its rows and curves: the experiences of a log grouped into regimes as l2metrics
groups them, its table of blocks (a row per regime and parameter set), the numbers of one curve (smoothing,
saturation, terminal performance, recovery, slope), and the single-task-expert logs read into rows. The rules are
described in `l2metrics.py`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import fmean

from pydantic import JsonValue

from ltm_harness._errors import RunFolderError
from ltm_harness._protocols.l2m.logger import LogRecord, read_scenario
from ltm_harness._protocols.l2m.metrics import scenario_dirs

TERM_WINDOW_RATIO = 0.1


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


class _Block:
    """One row of l2metrics' block table: a regime and one parameter set of its experiences, at position `label`."""

    __slots__ = ("label", "regime", "block_num", "block_type", "block_subtype", "task", "params")

    def __init__(self, label: int, regime: _Regime, params: dict[str, JsonValue]) -> None:
        self.label = label
        self.regime = regime.num
        self.block_num = regime.block_num
        self.block_type = regime.block_type
        self.block_subtype = regime.block_subtype
        self.task = regime.task
        self.params = params


def _blocks(regimes: list[_Regime]) -> list[_Block]:
    """l2metrics' block table: a row per regime and distinct `task_params` of its experiences, ordered by regime and
    then by the parameters' JSON text (its group-by of the log). A regime whose experiences change parameters has
    several rows, so the table has more rows than there are regimes. l2metrics then keeps each per-regime value at
    the row whose position is the regime's number (not at the regime's own rows): the rules reproduce that."""
    keyed: list[tuple[int, str, dict[str, JsonValue]]] = []
    for regime in regimes:
        texts = {json.dumps(r.params): r.params for r in regime.rows}
        keyed += [(regime.num, text, params) for text, params in texts.items()]
    keyed.sort(key=lambda k: (k[0], k[1]))
    by_num = {r.num: r for r in regimes}
    return [_Block(label, by_num[num], params) for label, (num, _, params) in enumerate(keyed)]


def load_ste_runs(path: Path, perf_measure: str) -> dict[str, list[list[_Row]]]:
    """The expert runs per (lower-cased) task from the scenario logs under `path`, each training one task, newest
    first: l2metrics stores each expert run in front of the earlier ones (`-s a`), so its per-run lists start with
    the run stored last. The runs are taken as stored in the order of their folder names (run1, run2, ...)."""
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
        out.setdefault(trained[0], []).insert(0, _rows(complete, perf_measure))
    return out
