"""The lifelong-learning metrics of one scenario, as written to metrics.json (computed by `metrics`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue


class RegimeMetrics(BaseModel):
    regime_num: int
    block_num: int
    block_type: Literal["train", "test"]
    task_name: str
    task_params: dict[str, JsonValue]
    first_exp: int
    experiences: int
    raw_mean: float  # mean of the metric column, not normalised
    perf_mean: float  # mean of the normalised performance p
    saturation: float | None = None
    exp_to_saturation: int | None = None
    terminal_perf: float
    recovery_time: int | None = None
    recovered: bool | None = None
    maintenance: float | None = None  # tp(this test regime) - tp(reference train regime)
    maintenance_reference: int | None = None  # regime_num of that train regime


class TransferEntry(BaseModel):
    kind: Literal["forward", "backward"]
    from_task: str
    to_task: str
    to_params: dict[str, JsonValue]
    test_before: int  # regime_num of T1
    test_after: int  # regime_num of T2
    tp_before: float
    tp_after: float
    ratio: float
    contrast: float


class PairTransfer(BaseModel):
    kind: Literal["forward", "backward"]
    from_task: str
    to_task: str
    ratio: float
    contrast: float
    entries: int


class TaskMetrics(BaseModel):
    task_name: str
    range_low: float  # lo and hi of the normalisation
    range_high: float
    avg_train_perf: float | None = None
    avg_eval_perf: float | None = None
    recovery_times: list[int] = Field(default_factory=list)
    perf_recovery: float | None = None
    perf_maintenance: float | None = None
    ste_runs: int = 0
    ste_rel_perf: float | None = None
    se_saturation: float | None = None
    se_exp_to_saturation: float | None = None
    sample_efficiency: float | None = None


class LifetimeMetrics(BaseModel):
    perf_recovery: float | None = None
    perf_maintenance: float | None = None
    forward_transfer_ratio: float | None = None
    forward_transfer_contrast: float | None = None
    backward_transfer_ratio: float | None = None
    backward_transfer_contrast: float | None = None
    avg_train_perf: float | None = None
    avg_eval_perf: float | None = None
    ste_rel_perf: float | None = None
    sample_efficiency: float | None = None


class MetricsReport(BaseModel):
    """Everything computed from one scenario log; written as metrics.json."""

    scenario: str
    perf_measure: str
    scale: str = "per task, 1..101"
    lifetime: LifetimeMetrics
    tasks: list[TaskMetrics]
    regimes: list[RegimeMetrics]
    transfer: list[PairTransfer]
    transfer_entries: list[TransferEntry]
    notes: list[str] = Field(default_factory=list)  # why a metric could not be computed
