"""`report`, `compare`, and the report at the end of `run`, through the command line."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from ltm_harness._cli.main import main


def test_report_by_run_name_writes_the_page_and_says_where(small_run: Path, tmp_path: Path, capsys):
    assert main(["report", "small", "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out
    assert f"report in {small_run / 'report.html'}" in out and "report.tests.csv/.json" in out
    assert (small_run / "report.html").is_file() and (small_run / "report.tests.csv").is_file()


def test_report_to_another_file(small_run: Path, tmp_path: Path):
    target = tmp_path / "out" / "mine.html"
    assert main(["report", str(small_run), "-o", str(target)]) == 0
    assert target.is_file() and (tmp_path / "out" / "mine.agents.csv").is_file()
    assert not (small_run / "report.html").exists()


def test_report_errors_are_one_line(small_run: Path, tmp_path: Path, capsys):
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["report", str(small_run), "-o", str(tmp_path / "x.txt")]) == 2
    assert "must end in .html" in capsys.readouterr().err


def test_compare_labels_the_same_agent_by_its_run(small_run: Path, tmp_path: Path, capsys):
    other = tmp_path / "results" / "other"
    shutil.copytree(small_run, other)
    summary = other / "summary.json"
    summary.write_text(summary.read_text().replace('"run_name": "small"', '"run_name": "other"'))
    assert main(["compare", "small", "other", "--results", str(tmp_path / "results")]) == 0
    page = tmp_path / "results" / "compare_small_other.html"
    assert f"report in {page}" in capsys.readouterr().out
    with page.with_name("compare_small_other.agents.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    # each run's agents in its order, except that an agent with a protocol mark (retrieval left tests unscored) comes
    # after every agent without one
    assert [(r["run"], r["agent"], r["label"], r["marks"]) for r in rows] == [
        ("small", "oracle", "oracle · small", ""), ("small", "null", "null · small", ""),
        ("other", "oracle", "oracle · other", ""), ("other", "null", "null · other", ""),
        ("small", "retrieval", "retrieval · small", "[unscored]"), ("other", "retrieval", "retrieval · other", "[unscored]")]
    assert "oracle · other" in page.read_text()


def test_compare_refuses_a_run_given_twice(small_run: Path, capsys):
    assert main(["compare", str(small_run), str(small_run) + "/"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_run_ends_with_the_report_path_and_no_report_skips_it(tmp_path: Path, capsys):
    args = ["run", "--results", str(tmp_path), "--examples", "1", "--span", "1000", "-a", "oracle", "-a", "null"]
    assert main(args + ["--run-name", "with"]) == 0
    out = capsys.readouterr().out
    page = tmp_path / "with" / "report.html"
    assert f"report in {page}" in out.replace("\n", "") and page.is_file()
    assert main(args + ["--run-name", "without", "--no-report"]) == 0
    assert "report in" not in capsys.readouterr().out
    assert (tmp_path / "without" / "summary.json").is_file() and not (tmp_path / "without" / "report.html").exists()
