"""Lifelong-learning metrics of l2logger logs, by the harness's rules or as l2metrics 3.1.0 computes them.

    from ltm_harness.l2m import l2metrics_metrics, scenario_metrics
    own = scenario_metrics("results/l2m/cl-bandit-oracle")                 # docs/l2m.md, rules 1-11
    ref = l2metrics_metrics("logs/multi_task", settings="multi_task_settings.json", ste="ste_logs")
    print(ref.to_json_data()["perf_maintenance_mrlep"])

A log folder is a scenario folder written by `syllabus run` or by l2logger (log format 1.0 or 1.1); expert (STE)
folders hold one scenario per run, each training one task. `syllabus metrics LOGDIR [--compat l2metrics]` is the
same on the command line.
"""

from __future__ import annotations

from pathlib import Path

from ltm_harness._protocols.l2m.l2metrics import (L2MetricsResult, L2MetricsSettings, compute_l2metrics,
                                                  load_settings as load_l2metrics_settings)
from ltm_harness._protocols.l2m.l2metrics_regimes import load_ste_runs
from ltm_harness._protocols.l2m.logger import ScenarioLog, read_scenario
from ltm_harness._protocols.l2m.metrics import compute_metrics, load_ste
from ltm_harness._protocols.l2m.metrics_report import MetricsReport


def scenario_metrics(logdir: str | Path, *, perf_measure: str = "reward",
                     ste: str | Path | None = None) -> MetricsReport:
    """The harness's metrics of one scenario folder (`ste`: a folder of single-task-expert logs)."""
    experts = load_ste(Path(ste), perf_measure) if ste is not None else None
    return compute_metrics(read_scenario(Path(logdir)), perf_measure, experts)


def l2metrics_metrics(logdir: str | Path, *, settings: L2MetricsSettings | str | Path | None = None,
                      ste: str | Path | None = None) -> L2MetricsResult:
    """The metrics of one scenario folder as l2metrics 3.1.0 computes them. `settings`: an `L2MetricsSettings`
    or the path of an l2metrics settings JSON (default: l2metrics' defaults); `ste`: a folder of expert logs."""
    if settings is None:
        chosen = L2MetricsSettings()
    elif isinstance(settings, L2MetricsSettings):
        chosen = settings
    else:
        chosen = load_l2metrics_settings(Path(settings))
    experts = load_ste_runs(Path(ste), chosen.perf_measure) if ste is not None else None
    return compute_l2metrics(read_scenario(Path(logdir)), chosen, experts)


__all__ = ["scenario_metrics", "l2metrics_metrics", "read_scenario", "compute_metrics", "compute_l2metrics",
           "load_l2metrics_settings", "ScenarioLog", "MetricsReport", "L2MetricsResult", "L2MetricsSettings"]
