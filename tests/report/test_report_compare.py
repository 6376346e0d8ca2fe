"""`compare` refuses runs of other tests or another judge (or, with --force, marks them), and prints its table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._report import write_report
from ltm_harness._report.compat import judge_settings
from ltm_harness._report.load import load_run


def _copy(run: Path, name: str, **changes: object) -> Path:
    other = run.parent / name
    shutil.copytree(run, other)
    summary = json.loads((other / "summary.json").read_text())
    summary.update(run_name=name, **changes)
    (other / "summary.json").write_text(json.dumps(summary))
    return other


def _other_tests(run: Path) -> Path:
    """The run with other tests: its definitions' fingerprint changed, as a run of other datasets or seed has."""
    other = _copy(run, "other-tests")
    manifest = other / "definitions" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["fingerprint"] = "0" * len(data["fingerprint"])
    manifest.write_text(json.dumps(data))
    return other


def test_runs_of_other_tests_are_refused_in_one_line_and_compared_with_force(small_run: Path, capsys):
    other = _other_tests(small_run)
    assert main(["compare", str(small_run), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: these runs cannot be compared test by test: run other-tests:")
    assert "its tests differ from run small's" in err and "--force" in err
    assert not list(small_run.parent.glob("compare_*.html"))  # nothing written
    assert main(["compare", str(small_run), str(other), "--force"]) == 0
    captured = capsys.readouterr()
    assert "warning: compared anyway (--force): run other-tests: its tests differ" in captured.err
    page = (small_run.parent / "compare_small_other-tests.html").read_text()
    assert page.count('class="badge mark"') == 1 + 3  # the run in the header, and its three agents
    assert "Compared although they differ" in page


def test_a_judged_run_beside_an_unjudged_one_is_refused(small_run: Path, capsys):
    judged = _copy(small_run, "judged", judge="gpt-4o-mini")
    assert judge_settings(load_run(judged)).startswith("judge gpt-4o-mini")
    assert judge_settings(load_run(small_run)) == "no judge"
    assert main(["compare", str(small_run), str(judged)]) == 2
    err = capsys.readouterr().err
    assert "run judged: judge gpt-4o-mini" in err and "run small: no judge" in err
    files = write_report([small_run, judged], force=True)
    assert [d.what for d in files.differences] == ["judge"]
    with pytest.raises(Exception, match="judge"):
        write_report([judged, small_run])  # either way round


def test_the_comparison_table_is_printed_plainly_off_a_terminal(small_run: Path, capsys):
    other = _copy(small_run, "again")
    assert main(["compare", str(small_run), str(other)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("headline numbers per dataset, on the tests scored for every agent")
    assert all(ord(c) < 128 or c in "±·" for c in out)  # plain ASCII lines, no box drawing, no colour codes
    assert "\x1b[" not in out
    at = next(i for i, line in enumerate(lines) if line.startswith("| dataset"))
    header = "\n".join(lines[2:at + 1])  # the agents' names wrap over the header's lines, at word boundaries
    assert "oracle ·" in header
    for dataset in ("colours", "jokes", "kv"):
        assert any(line.startswith(f"| {dataset}") and "1.00" in line and "±" not in line for line in lines)
    assert any(line.startswith("| benchmark") and "3.00/3" in line for line in lines)
    assert out.rstrip().splitlines()[-2].startswith("report in ")
