"""The l2logger 1.1 layout: exact bytes written, the info files, reading back, and bad logs."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._protocols.l2m.logger import (
    STANDARD_COLUMNS,
    L2Logger,
    LogRecord,
    ScenarioInfo,
    read_scenario,
    worker_slug,
)

T0 = datetime(2024, 1, 1, 9, 0, 10, tzinfo=timezone.utc)
HEADER = "\t".join([*STANDARD_COLUMNS, "reward", "score"]) + "\n"


def record(exp: int, block: int = 0, kind: str = "train", reward: float | None = 1.0, **extra: object) -> LogRecord:
    fields: dict[str, object] = {
        "block_num": block, "exp_num": exp, "worker_id": "w", "block_type": kind, "task_name": "bandit",
        "task_params": {"arms": 3}, "timestamp": T0, "metrics": {"reward": reward, "score": 0.5}}
    fields.update(extra)
    return LogRecord.model_validate(fields)


def test_writes_the_l2logger_layout_byte_for_byte(tmp_path: Path) -> None:
    scenario = tmp_path / "scen"
    info = ScenarioInfo(scenario_type="CL", syllabus="cl", agent="retrieval", seed=3, ranges={"score": {"bandit": [0, 5]}})
    with L2Logger(scenario, "w", ["reward", "score"], info) as logger:
        logger.log(record(0))
        logger.log(record(1, block=1, kind="test", reward=None, exp_status="incomplete"))
    assert json.loads((scenario / "logger_info.json").read_text()) == {
        "metrics_columns": ["reward", "score"], "log_format_version": "1.1"}
    assert json.loads((scenario / "scenario_info.json").read_text()) == {
        "author": "ltm-harness", "scenario_type": "CL", "syllabus": "cl", "agent": "retrieval", "seed": 3,
        "ranges": {"score": {"bandit": [0.0, 5.0]}}}
    assert (scenario / "w" / "data-log.tsv").read_text() == (
        HEADER
        + '0\t0\tw\ttrain\twake\tbandit\t"{""arms"": 3}"\tcomplete\t20240101T090010.000000\t1\t0.5\n'
        + '1\t1\tw\ttest\twake\tbandit\t"{""arms"": 3}"\tincomplete\t20240101T090010.000000\t\t0.5\n')


def test_reads_back_what_it_wrote(tmp_path: Path) -> None:
    with L2Logger(tmp_path, "w", ["reward", "score"]) as logger:
        logger.log(record(0, reward=0.25))
        logger.log(record(1, block=1, kind="test", reward=None))
    log = read_scenario(tmp_path)
    assert log.metrics_columns == ["reward", "score"]
    assert [r.model_dump() for r in log.records] == [
        record(0, reward=0.25).model_dump() | {"timestamp": T0.replace(tzinfo=None)},
        record(1, block=1, kind="test", reward=None).model_dump() | {"timestamp": T0.replace(tzinfo=None)}]
    assert log.tasks() == ["bandit"]


def test_the_data_log_is_written_whole_when_closed(tmp_path: Path) -> None:
    logger = L2Logger(tmp_path, "w", ["reward", "score"])
    logger.log(record(0))
    logger.log(record(1))
    assert not (tmp_path / "w" / "data-log.tsv").exists()  # never a partial log on disk
    logger.close()
    assert (tmp_path / "w" / "data-log.tsv").read_text().count("\n") == 3
    with pytest.raises(ZeroDivisionError):  # a failure inside the block writes nothing
        with L2Logger(tmp_path / "other", "w", ["reward", "score"]) as failing:
            failing.log(record(0))
            1 / 0
    assert not (tmp_path / "other").exists()


def test_numbers_never_go_down_and_columns_must_match(tmp_path: Path) -> None:
    with L2Logger(tmp_path, "w", ["reward", "score"]) as logger:
        logger.log(record(3, block=1))
        with pytest.raises(ValueError, match="must not decrease"):
            logger.log(record(2, block=1))
        with pytest.raises(ValueError, match="must not decrease"):
            logger.log(record(4, block=0))
        with pytest.raises(ValueError, match="differ from the columns"):
            logger.log(record(5, block=1).model_copy(update={"metrics": {"reward": 1.0}}))
        with pytest.raises(ValueError, match="worker 'v'"):
            logger.log(record(5, block=1).model_copy(update={"worker_id": "v"}))


def test_worker_ids_follow_l2loggers_pattern(tmp_path: Path) -> None:
    assert worker_slug("openai:gpt-4o-mini@8k") == "openai-gpt-4o-mini-8k"
    assert worker_slug("http://127.0.0.1:8080/chat") == "http-127.0.0.1-8080-chat"
    with pytest.raises(LTMError, match="may hold only letters"):
        L2Logger(tmp_path, "a b", ["reward"])
    with pytest.raises(LTMError, match="metrics_columns"):
        L2Logger(tmp_path, "w", ["exp_num"])


def test_reads_l2logger_1_0_per_block_folders_and_merges_workers(tmp_path: Path) -> None:
    (tmp_path / "logger_info.json").write_text(json.dumps({"metrics_columns": ["reward"], "log_format_version": "1.0"}))
    header = "\t".join(STANDARD_COLUMNS) + "\treward\n"
    for worker, block, kind, exps in (("w1", 0, "train", (0, 2)), ("w2", 0, "train", (1,)), ("w1", 1, "test", (3,))):
        folder = tmp_path / worker / f"{block}-{kind}"
        folder.mkdir(parents=True)
        rows = "".join(f"{block}\t{e}\t{worker}\t{kind}\twake\tt\t{{}}\tcomplete\t20201020T230415.363982\t{e}\n"
                       for e in exps)
        (folder / "data-log.tsv").write_text(header + rows)
    log = read_scenario(tmp_path)
    assert [(r.exp_num, r.worker_id, r.metrics["reward"]) for r in log.records] == [
        (0, "w1", 0.0), (1, "w2", 1.0), (2, "w1", 2.0), (3, "w1", 3.0)]
    assert log.records[0].timestamp == datetime(2020, 10, 20, 23, 4, 15, 363982)


GOOD_ROW = ["0", "0", "w", "train", "wake", "t", "{}", "complete", "20240101T090000.000000", "1"]


@pytest.mark.parametrize("header, row, message", [
    (["block_num", "exp_num", "reward"], None, "lacks the column\\(s\\) worker_id"),
    (None, GOOD_ROW[:-1], ":2: 9 fields, but the header has 10"),
    (None, GOOD_ROW[:-1] + ["high"], ":2: reward value 'high' is not a number"),
    (None, GOOD_ROW[:6] + ["{arms: 3}"] + GOOD_ROW[7:], ":2: task_params is not JSON"),
    (None, GOOD_ROW[:8] + ["2024-01-01 09:00"] + GOOD_ROW[9:], ":2: timestamp '2024-01-01 09:00' does not match"),
    (None, GOOD_ROW[:3] + ["eval"] + GOOD_ROW[4:], ":2: block_type: Input should be 'train' or 'test'"),
    (None, ["-1"] + GOOD_ROW[1:], ":2: block_num: Input should be greater than or equal to 0"),
    (None, GOOD_ROW[:6] + ['["-s", 5]'] + GOOD_ROW[7:], ":2: task_params: Input should be a valid dictionary"),
])
def test_bad_data_logs_name_the_file_and_line(tmp_path: Path, header: list[str] | None, row: list[str] | None,
                                              message: str) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    lines = ["\t".join(header or [*STANDARD_COLUMNS, "reward"])]
    if row is not None:
        lines.append("\t".join(row))
    (folder / "data-log.tsv").write_text("\n".join(lines) + "\n")
    with pytest.raises(LTMError, match=message) as info:
        read_scenario(tmp_path)
    assert "data-log.tsv" in str(info.value)


def test_missing_logs_and_bad_info_files(tmp_path: Path) -> None:
    with pytest.raises(LTMError, match="no such log folder"):
        read_scenario(tmp_path / "nope")
    with pytest.raises(LTMError, match="no data-log.tsv below this folder"):
        read_scenario(tmp_path)
    (tmp_path / "logger_info.json").write_text("{")
    with pytest.raises(LTMError, match="logger_info.json: not valid JSON"):
        read_scenario(tmp_path)
    (tmp_path / "logger_info.json").write_text(json.dumps({"metrics_columns": ["accuracy"]}))
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "data-log.tsv").write_text("\t".join([*STANDARD_COLUMNS, "reward"]) + "\n")
    with pytest.raises(LTMError, match="metric column\\(s\\) accuracy named in logger_info.json are not in the header"):
        read_scenario(tmp_path)
