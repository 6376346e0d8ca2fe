"""Logs in the l2logger 1.1 layout, and a reader for them (and for l2logger's own logs).

Layout written for one run (one scenario, one worker)::

    SCENARIO_DIR/
        logger_info.json      {"metrics_columns": ["reward"], "log_format_version": "1.1"}
        scenario_info.json    what was run: author, scenario_type, syllabus, agent, seed, ...
        WORKER_ID/
            data-log.tsv      one row per experience (episode), header first

data-log.tsv is tab-separated with the columns block_num, exp_num, worker_id, block_type (train|test),
block_subtype (wake|sleep), task_name, task_params (JSON), exp_status (complete|incomplete),
timestamp (%Y%m%dT%H%M%S.%f), then the metric columns (e.g. reward). Fields are quoted CSV-style
(a field holding a quote, tab or newline is wrapped in double quotes, inner quotes doubled), which is how
task_params JSON appears in l2logger's own files. The reader accepts any folder below the scenario that
holds a data-log.tsv (so also the older per-block folders of l2logger 1.0). Logs of format 1.0 have no
block_subtype column: the reader fills it with `wake`, as l2logger's own reader does.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from ltm_harness._guard import jsonsafe
from ltm_harness._guard.files import read_text
from ltm_harness._guard.limits import clip, clip_text
from ltm_harness._errors import RunFolderError
from ltm_harness._store.files import write_text
from ltm_harness._store.layout import DATA_LOG, LOGGER_INFO, SCENARIO_INFO

LOG_FORMAT_VERSION = "1.1"
STANDARD_COLUMNS = ("block_num", "exp_num", "worker_id", "block_type", "block_subtype", "task_name",
                    "task_params", "exp_status", "timestamp")
#: the columns a log of format 1.0 may lack, with the value l2logger's reader gives them
OPTIONAL_COLUMNS = {"block_subtype": "wake"}
TIMESTAMP_FORMAT = "%Y%m%dT%H%M%S.%f"
WORKER_ID = re.compile(r"^[0-9a-zA-Z_\-.]+$")


def worker_slug(name: str) -> str:
    """A worker id l2logger accepts (letters, digits, _ - .) made from an agent spec."""
    return re.sub(r"[^0-9A-Za-z_.-]+", "-", name).strip("-") or "worker-default"


class LogRecord(BaseModel):
    """One row of data-log.tsv: one experience."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    block_num: int = Field(ge=0)
    exp_num: int = Field(ge=0)
    worker_id: str
    block_type: Literal["train", "test"]
    block_subtype: Literal["wake", "sleep"] = "wake"
    task_name: str = Field(min_length=1)
    task_params: dict[str, JsonValue] = Field(default_factory=dict)
    exp_status: Literal["complete", "incomplete"] = "complete"
    timestamp: datetime
    metrics: dict[str, float | None] = Field(default_factory=dict)

    @field_validator("worker_id")
    @classmethod
    def _worker(cls, v: str) -> str:
        if not WORKER_ID.match(v):
            raise ValueError("may hold only letters, digits, underscores, hyphens and periods")
        return v


class LoggerInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    metrics_columns: list[str] = Field(min_length=1)
    log_format_version: str = LOG_FORMAT_VERSION


class ScenarioInfo(BaseModel):
    """Metadata of a run. l2logger leaves its content to the user; these are the fields we write."""

    model_config = ConfigDict(extra="allow")

    author: str = "ltm-harness"
    scenario_type: str = "custom"
    syllabus: str | None = None
    agent: str | None = None
    seed: int | None = None
    #: known ranges of metric columns per task, {column: {task: [low, high]}}; metrics normalise with them
    ranges: dict[str, dict[str, list[float]]] = Field(default_factory=dict)


def _number(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class L2Logger:
    """Writes one worker's data-log.tsv (plus the scenario's info files) when closed, whole or not at all, so a
    data log on disk is always a complete one. (A syllabus run's crash-safe record is its event log: a killed run
    is resumed from it and writes its data log at the end.)"""

    def __init__(self, scenario_dir: Path, worker_id: str, metrics_columns: list[str],
                 scenario_info: ScenarioInfo | None = None) -> None:
        if not WORKER_ID.match(worker_id):
            raise RunFolderError(f"worker id {worker_id!r} may hold only letters, digits, underscores, hyphens and periods")
        if not metrics_columns or set(metrics_columns) & set(STANDARD_COLUMNS):
            raise RunFolderError("metrics_columns must name at least one column, none of them a standard column")
        self.scenario_dir = scenario_dir
        self.worker_id = worker_id
        self.metrics_columns = list(metrics_columns)
        self.path = scenario_dir / worker_id / DATA_LOG
        self.scenario_info = scenario_info or ScenarioInfo()
        self._last: tuple[int, int] | None = None
        self._rows = io.StringIO(newline="")
        self._writer = csv.writer(self._rows, delimiter="\t", quotechar='"', lineterminator="\n")
        self._writer.writerow([*STANDARD_COLUMNS, *self.metrics_columns])
        self._open = True

    def log(self, record: LogRecord) -> None:
        """Add one experience. Block and experience numbers never go down; the worker id is this logger's."""
        if not self._open:
            raise RuntimeError("the logger is closed")
        if record.worker_id != self.worker_id:
            raise ValueError(f"record of worker {record.worker_id!r} given to the logger of {self.worker_id!r}")
        if set(record.metrics) != set(self.metrics_columns):
            raise ValueError(f"record metrics {sorted(record.metrics)} differ from the columns {self.metrics_columns}")
        if self._last is not None and (record.block_num < self._last[0] or record.exp_num < self._last[1]):
            raise ValueError(f"block_num and exp_num must not decrease (got {record.block_num}, {record.exp_num} "
                             f"after {self._last[0]}, {self._last[1]})")
        self._last = (record.block_num, record.exp_num)
        self._writer.writerow([
            record.block_num, record.exp_num, record.worker_id, record.block_type, record.block_subtype,
            record.task_name, json.dumps(record.task_params), record.exp_status,
            record.timestamp.strftime(TIMESTAMP_FORMAT), *(_number(record.metrics[c]) for c in self.metrics_columns),
        ])

    def close(self) -> None:
        """Write the info files and the data log (each whole)."""
        if not self._open:
            return
        self._open = False
        info = LoggerInfo(metrics_columns=self.metrics_columns, log_format_version=LOG_FORMAT_VERSION)
        write_text(self.scenario_dir / LOGGER_INFO, json.dumps(info.model_dump(), indent=2) + "\n")
        write_text(self.scenario_dir / SCENARIO_INFO, json.dumps(self.scenario_info.model_dump(), indent=2) + "\n")
        write_text(self.path, self._rows.getvalue())

    def __enter__(self) -> "L2Logger":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()


# -- reading ---------------------------------------------------------------------------------------------


class ScenarioLog(BaseModel):
    """A scenario's records (all workers, ordered by exp_num) with its info files."""

    scenario_dir: str
    metrics_columns: list[str]
    scenario_info: dict[str, Any] = Field(default_factory=dict)
    records: list[LogRecord]

    def tasks(self) -> list[str]:
        return list(dict.fromkeys(r.task_name for r in self.records))


def _read_json(path: Path) -> Any:
    try:
        return jsonsafe.loads(read_text(path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunFolderError(f"{path}: not valid JSON ({clip_text(str(exc), 200)}); fix or delete the file") from None


def _parse_row(path: Path, line: int, header: list[str], row: list[str], metrics: list[str]) -> LogRecord:
    if len(row) != len(header):
        raise RunFolderError(f"{path}:{line}: {len(row)} fields, but the header has {len(header)}; "
                        "each row needs one value per column")
    values = dict(zip(header, row))
    try:
        params = jsonsafe.loads(values["task_params"]) if values["task_params"].strip() else {}
    except ValueError:
        raise RunFolderError(f"{path}:{line}: task_params is not JSON ({values['task_params'][:60]!r})") from None
    try:
        stamp = datetime.strptime(values["timestamp"], TIMESTAMP_FORMAT)
    except ValueError:
        raise RunFolderError(f"{path}:{line}: timestamp {values['timestamp']!r} does not match {TIMESTAMP_FORMAT}") from None
    parsed: dict[str, float | None] = {}
    for column in metrics:
        text = values[column].strip()
        try:
            number = float(text) if text else None
        except ValueError:
            raise RunFolderError(f"{path}:{line}: {column} value {text!r} is not a number") from None
        parsed[column] = None if number is not None and math.isnan(number) else number
    try:
        return LogRecord.model_validate({
            "block_num": values["block_num"], "exp_num": values["exp_num"], "worker_id": values["worker_id"],
            "block_type": values["block_type"], "block_subtype": values.get("block_subtype") or OPTIONAL_COLUMNS["block_subtype"],
            "task_name": values["task_name"], "task_params": params, "exp_status": values["exp_status"] or "complete",
            "timestamp": stamp, "metrics": parsed,
        })
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise RunFolderError(f"{path}:{line}: {field}: {str(err['msg']).removeprefix('Value error, ')} "
                        f"(got {clip(err.get('input'))})") from None


def read_data_log(path: Path, metrics_columns: list[str] | None = None) -> tuple[list[str], list[LogRecord]]:
    """The metric columns and records of one data-log.tsv."""
    try:
        text = read_text(path)
    except UnicodeDecodeError:
        raise RunFolderError(f"{path}: not a UTF-8 text file; give an l2logger data log (tab-separated text)") from None
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror or exc}); give an l2logger data log") from None
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar='"'))
    if not rows:
        raise RunFolderError(f"{path}: empty file; a data log starts with its header line")
    header = rows[0]
    missing = [c for c in STANDARD_COLUMNS if c not in header and c not in OPTIONAL_COLUMNS]
    if missing:
        raise RunFolderError(f"{path}: the header lacks the column(s) {', '.join(missing)}; is this an l2logger data log?")
    extra = [c for c in header if c not in STANDARD_COLUMNS]
    metrics = metrics_columns if metrics_columns is not None else extra
    unknown = [c for c in metrics if c not in header]
    if unknown:
        raise RunFolderError(f"{path}: metric column(s) {', '.join(unknown)} named in {LOGGER_INFO} are not in the header")
    records = [_parse_row(path, i + 1, header, row, metrics) for i, row in enumerate(rows[1:], start=1) if row]
    return metrics, records


def read_scenario(scenario_dir: Path) -> ScenarioLog:
    """All data logs of a scenario folder, merged and ordered by exp_num."""
    if not scenario_dir.is_dir():
        raise RunFolderError(f"{scenario_dir}: no such log folder; give the folder `syllabus run` wrote its logs to (its --out)")
    info_path = scenario_dir / LOGGER_INFO
    declared: list[str] | None = None
    if info_path.is_file():
        try:
            declared = LoggerInfo.model_validate(_read_json(info_path)).metrics_columns
        except ValidationError:
            raise RunFolderError(f"{info_path}: needs a non-empty \"metrics_columns\" list") from None
    scenario_info: dict[str, Any] = {}
    if (scenario_dir / SCENARIO_INFO).is_file():
        raw = _read_json(scenario_dir / SCENARIO_INFO)
        scenario_info = raw if isinstance(raw, dict) else {}
    logs = sorted(scenario_dir.rglob(DATA_LOG))
    if not logs:
        raise RunFolderError(f"{scenario_dir}: no {DATA_LOG} below this folder; give a scenario folder written by "
                        "`syllabus run` or by l2logger")
    columns: list[str] | None = declared
    records: list[LogRecord] = []
    for path in logs:
        found, recs = read_data_log(path, declared)
        if columns is None:
            columns = found
        records.extend(recs)
    records.sort(key=lambda r: (r.exp_num, r.block_num))
    return ScenarioLog(scenario_dir=str(scenario_dir), metrics_columns=columns or [], scenario_info=scenario_info,
                       records=records)
