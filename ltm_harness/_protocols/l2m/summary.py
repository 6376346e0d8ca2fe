"""Terminal summary of a metrics report: the regimes, the lifetime metrics, transfer pairs and notes."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from pydantic import JsonValue

from ltm_harness._protocols.l2m.metrics_report import MetricsReport


def _num(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def compact_params(params: dict[str, JsonValue]) -> str:
    """`key=value` pairs, values as compact JSON."""
    return " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in params.items())


def print_report(report: MetricsReport, console: Console) -> None:
    regimes = Table(title=f"regimes: raw = mean {escape(report.perf_measure)}; p = mean performance on 1..101; "
                          "saturation@experience, terminal performance, recovery time, maintenance (on p)",
                    title_justify="left")
    for column in ("#", "block", "type", "task", "params", "n", "raw", "p", "sat@exp", "term.", "recov.", "maint."):
        if column == "params":
            regimes.add_column(column, max_width=28, no_wrap=True, overflow="ellipsis")
        else:
            regimes.add_column(column, justify="left" if column in ("type", "task") else "right")
    for r in report.regimes:
        recovery = "-" if r.recovery_time is None else f"{r.recovery_time}{'' if r.recovered else ' (not)'}"
        sat = "-" if r.saturation is None else f"{r.saturation:.1f}@{r.exp_to_saturation}"
        regimes.add_row(str(r.regime_num), str(r.block_num), r.block_type, escape(r.task_name),
                        escape(compact_params(r.task_params)), str(r.experiences),
                        _num(r.raw_mean), _num(r.perf_mean, 1), sat, _num(r.terminal_perf, 1), recovery,
                        _num(r.maintenance, 1))
    console.print(regimes)
    life = report.lifetime
    lines = [
        ("performance recovery", life.perf_recovery), ("performance maintenance", life.perf_maintenance),
        ("forward transfer ratio", life.forward_transfer_ratio),
        ("forward transfer contrast", life.forward_transfer_contrast),
        ("backward transfer ratio", life.backward_transfer_ratio),
        ("backward transfer contrast", life.backward_transfer_contrast),
        ("average train performance", life.avg_train_perf), ("average eval performance", life.avg_eval_perf),
        ("relative performance (STE)", life.ste_rel_perf), ("sample efficiency (STE)", life.sample_efficiency),
    ]
    lifetime = Table(title="lifetime metrics", title_justify="left")
    lifetime.add_column("metric")
    lifetime.add_column("value", justify="right")
    for name, value in lines:
        lifetime.add_row(name, _num(value, 3))
    console.print(lifetime)
    if report.transfer:
        transfer = Table(title="transfer", title_justify="left")
        for column in ("kind", "from", "to", "ratio", "contrast", "entries"):
            transfer.add_column(column)
        for p in report.transfer:
            transfer.add_row(p.kind, escape(p.from_task), escape(p.to_task), _num(p.ratio, 3), _num(p.contrast, 3),
                             str(p.entries))
        console.print(transfer)
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/dim]")
