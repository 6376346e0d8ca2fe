"""results/index.html: every run of a results folder, rewritten after runs, reports and comparisons; damaged folders
are listed as such, never a crash."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ltm_harness._cli.main import main
from ltm_harness._report import write_index, write_report
from ltm_harness._report.index import index_rows


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-text="[^"]*" data-state="(?!comparison)[^"]*">.*?</tr>', html, re.S)


def test_a_run_from_the_command_line_writes_the_index_and_a_report_updates_it(tmp_path: Path):
    args = ["run", "--results", str(tmp_path), "--examples", "1", "--span", "1000", "-a", "oracle", "-a", "null",
            "--quiet"]
    assert main(args + ["--run-name", "first", "--no-report"]) == 0
    index = tmp_path / "index.html"
    html = index.read_text()
    assert len(_rows(html)) == 1 and 'href="first/"' in html  # no report yet: the folder
    assert main(args + ["--run-name", "second"]) == 0
    html = index.read_text()
    assert len(_rows(html)) == 2 and 'href="second/report.html"' in html
    assert main(["report", "first", "--results", str(tmp_path)]) == 0
    assert 'href="first/report.html"' in index.read_text()
    assert main(["compare", "first", "second", "--results", str(tmp_path)]) == 0
    html = index.read_text()
    assert 'href="compare_first_second.html"' in html and "Comparisons" in html
    row = next(r for r in _rows(html) if ">first</a>" in r)
    assert "oracle" in row and "null" in row and "finished" in row and "UTC" in row
    assert {p.name for p in tmp_path.iterdir() if p.name.startswith(".")} <= {".llm-cache", ".colours.json"}  # no temp file


def test_damaged_and_unfinished_folders_are_listed_never_a_crash(small_run: Path):
    root = small_run.parent
    for name, content in (("bad-json", "{"), ("newer", json.dumps({"format": 99, "run_name": "x"})),
                          ("wrong-shape", "[1, 2]"), ("deep", "[" * 100_000 + "]" * 100_000),
                          ("binary", b"\xff\xfe\x00")):
        (root / name).mkdir()
        path = root / name / "summary.json"
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    (root / "halfway" / "definitions").mkdir(parents=True)
    (root / "not-a-run").mkdir()
    (root / "loose-file.txt").write_text("x")
    (root / "suites" / "suite-1").mkdir(parents=True)
    shutil.copytree(small_run, root / "suites" / "suite-1" / "copy")  # deeper than a suite: not looked at
    (root / "suites" / "suite-1" / "summary.json").write_text((small_run / "summary.json").read_text())
    listed = index_rows(root)
    assert sorted((r.link, r.state, r.kind) for r in listed) == [
        ("bad-json/", "damaged", "run"), ("binary/", "damaged", "run"), ("deep/", "damaged", "run"),
        ("halfway/", "unfinished", "run"), ("newer/", "damaged", "run"), ("small/", "finished", "run"),
        ("suites/suite-1/", "finished", "suite"), ("wrong-shape/", "damaged", "run")]
    rows = {r.link: r for r in listed}
    assert "newer ltm-harness" in rows["newer/"].note and "not valid JSON" in rows["bad-json/"].note
    assert all(r.note for r in listed if r.state != "finished")
    html = write_index(root).read_text()
    assert html.count('data-state="damaged"') == 5 and html.count('data-state="unfinished"') == 1


def test_names_from_folders_are_escaped_and_the_page_loads_nothing(small_run: Path):
    root = small_run.parent
    evil = root / "evil"
    shutil.copytree(small_run, evil)
    summary = json.loads((evil / "summary.json").read_text())
    summary["run_name"] = "<script>alert(1)</script>"
    summary["agents"][0]["agent"] = '<img src=x onerror="alert(2)">'
    (evil / "summary.json").write_text(json.dumps(summary))
    html = write_report([small_run]).html.parent.parent.joinpath("index.html").read_text()
    assert "<script>alert" not in html and "<img" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None and "default-src 'none'" in csp.group(1)
    assert html.count("<script>") == 1 and "http://" not in html and "https://" not in html


def _reads(monkeypatch) -> list[Path]:
    """The summaries the index reads and validates from now on."""
    import ltm_harness._report.index as index_module

    read: list[Path] = []
    real = index_module.read_run_file

    def counting(path, model):
        read.append(path)
        return real(path, model)

    monkeypatch.setattr(index_module, "read_run_file", counting)
    return read


def test_the_index_reads_only_the_summaries_that_changed(small_run: Path, monkeypatch):
    root = small_run.parent
    for name in ("b", "c"):
        shutil.copytree(small_run, root / name)
    first = write_index(root).read_text()
    read = _reads(monkeypatch)
    assert write_index(root).read_text() == first and read == []  # nothing changed: nothing read, the same page
    # another process rewrote one run's summary (a new file put in place, as the harness writes them)
    summary = json.loads((root / "b" / "summary.json").read_text())
    summary["run_name"] = "b-again"
    (root / "b" / "new.json").write_text(json.dumps(summary))
    (root / "b" / "new.json").replace(root / "b" / "summary.json")
    shutil.rmtree(root / "c")  # and a folder was deleted
    shutil.copytree(small_run, root / "d")  # and one came in
    html = write_index(root).read_text()
    assert sorted(p.parent.name for p in read) == ["b", "d"]
    assert ">b-again</a>" in html and 'href="c/' not in html and 'href="d/' in html and len(_rows(html)) == 3
    read.clear()
    assert _rows(write_index(root).read_text()) == _rows(html) and read == []


def test_rows_remembered_by_an_index_from_elsewhere_or_a_damaged_one_are_not_trusted(small_run: Path, monkeypatch):
    root = small_run.parent
    html = write_index(root).read_text()
    # a results folder received from someone else: its index says the run scored 99, with a signature of its files
    # that cannot be this machine's (a file unzipped here has its own inode and change time)
    shutil.copytree(root, root.parent / "received")
    received = root.parent / "received"
    forged = (received / "index.html").read_text().replace('"score":', '"score":99,"x":')
    (received / "index.html").write_text(forged)
    read = _reads(monkeypatch)
    assert _rows(write_index(received).read_text()) == _rows(html) and len(read) == 1
    cut = html[:html.rfind("</script>")]  # the block never closed
    for damaged in (html.replace('"rows":[', '"rows":[{'), cut, html.replace('"format":2', '"format":3'), "x" * 1000):
        (root / "index.html").write_text(damaged)
        read.clear()
        assert _rows(write_index(root).read_text()) == _rows(html) and len(read) == 1


def test_text_from_a_folder_cannot_end_the_remembered_rows(small_run: Path):
    root = small_run.parent
    summary = json.loads((small_run / "summary.json").read_text())
    summary["run_name"] = '</script><script>alert(1)</script><!--'
    (small_run / "summary.json").write_text(json.dumps(summary))
    html = write_index(root).read_text()
    assert "alert(1)</script>" not in html and html.count("<script") == 2  # the page's script and the data block
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in html
    assert _rows(write_index(root).read_text()) == _rows(html)  # read back from the block, the same row


def test_an_index_too_big_or_not_a_file_is_not_read_back(small_run: Path, monkeypatch):
    import os

    import ltm_harness._report.index_rows as index_rows

    root = small_run.parent
    html = write_index(root).read_text()
    read = _reads(monkeypatch)
    monkeypatch.setattr(index_rows, "MAX_INDEX_BYTES", len(html.encode()) - 1)  # one byte over the cap
    assert _rows(write_index(root).read_text()) == _rows(html) and len(read) == 1
    monkeypatch.undo()
    read = _reads(monkeypatch)
    (root / "index.html").unlink()
    os.mkfifo(root / "index.html")  # never blocks on a FIFO: not a regular file, so not read
    rows = index_rows.KnownRows.load(root / "index.html")
    assert rows.get("small", [0]) is None
    (root / "index.html").unlink()
    assert _rows(write_index(root).read_text()) == _rows(html) and len(read) == 1


def test_a_nan_or_a_forged_row_in_the_index_is_dropped_with_a_note_never_shown_or_a_crash(small_run: Path, capsys):
    root = small_run.parent
    assert main(["report", str(small_run)]) == 0
    html = write_index(root).read_text()
    honest = _rows(html)
    for forged in (re.sub(r'"score":[0-9.]+', '"score":NaN', html, count=1),  # crashed report and every later run
                   re.sub(r'"score":[0-9.]+', '"score":0.97', html, count=1)):  # a forged row, shown as fact
        assert forged != html
        (root / "index.html").write_text(forged)
        assert main(["report", str(small_run)]) == 0  # the report (and its index) is written
        assert "Traceback" not in capsys.readouterr().err
        page = (root / "index.html").read_text()
        assert _rows(page) == honest and "0.97" not in page
        assert "were not as ltm-harness wrote them on this machine" in page  # the note: the rows were dropped
        assert "were not as ltm-harness wrote them" not in write_index(root).read_text()  # its own block is trusted


def test_an_edited_summary_is_shown_as_its_results_say_and_said_to_disagree(small_run: Path, capsys):
    root = small_run.parent
    before = write_report([small_run]).html.read_text()
    summary = json.loads((small_run / "summary.json").read_text())
    agent = summary["agents"][0]
    for d in agent["datasets"]:
        d["score"] = 0.97
        for v in (d.get("headline") or {}).get("values", []):
            v["value"] = 0.97
    agent["benchmark_score"] = 0.97 * len(agent["datasets"])
    (small_run / "summary.json").write_text(json.dumps(summary))
    page = write_report([small_run]).html.read_text()
    line = f"agent {agent['agent']}: its summary.json disagrees with its results.json on "
    assert line in page and "shown as results.json gives them" in page
    digits = lambda text: re.sub(r"\d+\.\d{4,}", "", text.replace(line, ""))  # noqa: E731  (times such as 1795852820.9798)
    assert "0.97" not in digits(page)
    index = (root / "index.html").read_text()
    assert line in index and "0.97" not in digits(index)
    # the numbers shown are those of the untouched folder
    cells = lambda text: re.findall(r'<td class="num[^"]*">([0-9.]+)', text)  # noqa: E731
    assert cells(page) == cells(before)


def test_a_run_lists_itself_from_what_it_wrote_and_the_row_is_the_one_a_reader_of_the_folder_makes(
        tmp_path: Path, monkeypatch):
    import ltm_harness._report.index as index_module

    read = _reads(monkeypatch)
    results_read: list[Path] = []
    real_results = index_module.read_results
    monkeypatch.setattr(index_module, "read_results", lambda agent: results_read.append(agent.path) or real_results(agent))
    args = ["run", "--results", str(tmp_path), "--examples", "2", "--span", "1000", "-a", "oracle", "-a", "null",
            "--quiet", "--no-report"]
    assert main(args + ["--run-name", "old"]) == 0
    read.clear(), results_read.clear()
    assert main(args + ["--run-name", "new"]) == 0
    assert read == [] and results_read == []  # its own summary and results are not read back; "old" is remembered
    made = (tmp_path / "index.html").read_text()
    (tmp_path / "index.html").unlink()  # a reader that remembers nothing reads every folder again, and checks it
    assert _rows(write_index(tmp_path).read_text()) == _rows(made)
    assert {p.parent.name for p in read} == {"old", "new"} and len(results_read) == 4
