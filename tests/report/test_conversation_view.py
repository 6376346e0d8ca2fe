"""A benchmark question's view in the report (ltm_harness/_report/conversation_view.py, lazy.py): each question result
of a LoCoMo- or BEAM-shaped run finds its conversation's event log, its evidence lines (from the definitions' needs),
the point an independent question was asked from; the history is written once per conversation beside the page (never
in it, never per question or per agent); a big run's per-test details go to files too; stale files are removed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._report import write_report
from ltm_harness._store.layout import RunFolder, report_parts


def _tests(page: str, key: str = "a0") -> list[dict[str, Any]]:
    block = re.search(rf'<script type="application/json" id="data-{key}">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))["tests"]


def _part(path: Path) -> tuple[str, Any]:
    """The id and payload of a part file (`ltmPart("<id>", <JSON>);`)."""
    text = path.read_text()
    assert text.startswith("ltmPart(") and text.endswith(");\n")
    part_id, _, payload = text[len("ltmPart("):-3].partition(",")
    return json.loads(part_id), json.loads(payload)


@pytest.fixture
def locomo(real_results: Path, tmp_path: Path) -> Path:
    """The LoCoMo-shaped run (oracle, null, retrieval), in a folder of the test's own."""
    folder = tmp_path / "results" / "locomo"
    shutil.copytree(real_results / "locomo", folder)
    return folder


def test_each_locomo_question_has_its_question_evidence_and_the_point_it_was_asked_from(locomo: Path):
    files = write_report([locomo])
    page = files.html.read_text()
    tests = {t["id"]: t for t in _tests(page)}  # oracle
    q0 = tests["locomo/synthetic-1.q0"]
    assert q0["conv"] == [] and len(q0["asked"]) == 1  # "No event log for this test" no more
    asked = q0["asked"][0]
    assert (asked["turn"], asked["back"]) == (6, True) and q0["questions"][0].startswith("What is the name of Ada's cat?")
    assert asked["from"] == {"turn": 5, "time": "2023-06-27T10:37:20Z", "question": False, "line": 5}  # the history's end
    assert asked["marks"] == [0] and asked["ev"] == [[0, 0, "2023-05-08T13:56:00Z", "Ada",
                                                       "Ada: Hi Bruno! I finally adopted a cat last weekend. Her name is Pepper."]]
    # each question its own turn and evidence, even the ones asked after others (all from the same point)
    paintings = tests["locomo/synthetic-1.q2"]["asked"][0]
    assert paintings["turn"] == 8 and paintings["marks"] == [1, 5] and paintings["from"]["turn"] == 5
    assert tests["locomo/synthetic-1.q3"]["asked"][0]["marks"] == []  # the file gives it no evidence
    assert tests["locomo/synthetic-2.q0"]["asked"][0]["marks"] == [0, 2]  # D1:1 and D2:1
    assert {t["hist"] for t in tests.values()} == {tests["locomo/synthetic-1.q0"]["hist"],
                                                   tests["locomo/synthetic-2.q0"]["hist"]}
    # the history is beside the page, once per conversation for all three agents, and never in the page
    parts = sorted(report_parts(files.html).glob("*.js"))
    assert [p.name for p in parts] == sorted(f"{t['hist']}.0.js" for t in (tests["locomo/synthetic-1.q0"],
                                                                           tests["locomo/synthetic-2.q0"]))
    part_id, lines = _part(report_parts(files.html) / f"{q0['hist']}.0.js")
    assert part_id == f"h:{q0['hist']}.0" and [line[0] for line in lines] == [0, 1, 2, 3, 4, 5]
    assert lines[3][:4] == [3, "2023-06-27T10:37:00Z", "Bruno", "Bruno: How was Lisbon?"]
    assert "How was Lisbon?" not in page  # a line no question cites is only in the history file
    outline = json.loads(re.search(r'id="report-lazy">(.*?)</script>', page).group(1))["outlines"][q0["hist"]]
    assert outline["sessions"] == [[0, 3, "2023-05-08T13:56:00Z"], [3, 3, "2023-06-27T10:37:00Z"]]  # by its dates
    assert "script-src 'sha256-" in page and "'self'; style-src" in page  # the page may load its own parts, only


def test_a_goodai_run_keeps_the_tests_own_lines_and_loads_nothing(real_results: Path, tmp_path: Path):
    folder = tmp_path / "default"
    shutil.copytree(real_results / "default", folder)
    files = write_report([folder])
    page = files.html.read_text()
    tests = _tests(page)
    assert tests and all("hist" not in t and t["conv"] for t in tests)  # the interleaved conversation, as before
    assert not report_parts(files.html).exists() and 'id="report-lazy"' not in page and "'self'" not in page


def test_a_beam_chat_s_questions_find_their_evidence(real_results: Path, tmp_path: Path):
    folder = tmp_path / "beam"
    shutil.copytree(real_results / "beam", folder)
    files = write_report([folder])
    tests = _tests(files.html.read_text())
    assert len(tests) == 40 and all(len(t["asked"]) == 1 and t["asked"][0]["back"] is True for t in tests)
    cited = [t for t in tests if t["asked"][0]["marks"]]
    assert len(cited) >= 20  # most BEAM questions cite messages of the chat
    for t in cited:
        _, lines = _part(report_parts(files.html) / f"{t['hist']}.0.js")
        for line, turn, *_ in t["asked"][0]["ev"]:
            assert lines[line][0] == turn  # the quoted line is that line of the history
    assert len(list(report_parts(files.html).glob("*.js"))) == 2  # two chats, whatever the agents


def test_a_big_run_s_tests_go_to_files_and_stale_parts_are_removed(locomo: Path, monkeypatch: pytest.MonkeyPatch):
    first = write_report([locomo])
    before = {p.name for p in report_parts(first.html).glob("*.js")}
    monkeypatch.setattr("ltm_harness._report.page.INLINE_TESTS_BYTES", 0)
    files = write_report([locomo])
    page = files.html.read_text()
    assert 'id="data-a0"' not in page
    lazy = json.loads(re.search(r'id="report-lazy">(.*?)</script>', page).group(1))
    assert sorted(lazy["tests"]) == ["a0", "a1", "a2"]
    part_id, payload = _part(report_parts(files.html) / lazy["tests"]["a1"])
    assert part_id == "tests:a1" and len(payload["tests"]) == 11 and payload["label"] == "null"
    assert before < {p.name for p in report_parts(files.html).glob("*.js")}
    monkeypatch.undo()
    write_report([locomo])
    assert {p.name for p in report_parts(first.html).glob("*.js")} == before  # the tests' files are gone again


def test_clearing_a_run_folder_removes_its_report_parts(locomo: Path):
    files = write_report([locomo])
    assert report_parts(files.html).is_dir()
    RunFolder(locomo).clear()
    assert not report_parts(files.html).exists() and not files.html.exists()


async def test_a_question_asked_in_sequence_was_asked_after_the_one_before(tmp_path: Path):
    from ltm_harness._agents.base import Agent, AgentMessage, Reply
    from ltm_harness._api import run_async
    from ltm_harness.testing import make_config

    from .conftest import LOCOMO_DATA

    class Diary(Agent):
        """Takes history in, and has no way back: its questions are asked in sequence."""

        async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
            return Reply(text="Not mentioned in the conversation.")

        async def observe(self, message: AgentMessage) -> None:
            return None

    cfg = make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO_DATA)}}], span=4000, examples=1)
    out = await run_async(cfg, [("diary", Diary)], results=tmp_path)
    tests = {t["id"]: t for t in _tests(write_report([out.path]).html.read_text())}
    first, second = tests["locomo/synthetic-1.q0"]["asked"][0], tests["locomo/synthetic-1.q1"]["asked"][0]
    assert first["back"] is False and first["from"] == {"turn": 5, "time": "2023-06-27T10:37:20Z", "question": False,
                                                         "line": 5}
    assert second["back"] is False and second["from"]["turn"] == 6 and second["from"]["question"] is True
    assert second["from"]["line"] is None  # a question is not history: said, not linked


async def test_a_longmemeval_haystack_shows_its_answer_turns_as_evidence(tmp_path: Path):
    from ltm_harness._api import run_async
    from ltm_harness.testing import make_config

    data = Path(__file__).resolve().parents[1] / "data" / "longmemeval" / "tiny.json"
    cfg = make_config([{"name": "longmemeval", "args": {"data_file": str(data)}}], span=4000, examples=3)
    out = await run_async(cfg, ["oracle"], results=tmp_path)
    files = write_report([out.path])
    tests = _tests(files.html.read_text())
    assert tests and all(len(t["asked"]) == len(t["questions"]) == 1 for t in tests)  # a haystack per question
    assert all(t["conv"] == [] for t in tests)  # the haystack is not in the page, only beside it
    assert sum(bool(t["asked"][0]["marks"]) for t in tests) >= 2
    for t in tests:  # one question after its haystack: asked after the haystack's last line, shown in the history
        asked = t["asked"][0]
        assert asked["back"] is None and asked["from"]["turn"] == asked["turn"] - 1 and asked["from"]["line"] is not None
    for t in tests:
        _, lines = _part(report_parts(files.html) / f"{t['hist']}.0.js")
        for line, turn, _, _, text in t["asked"][0]["ev"]:
            assert lines[line][0] == turn and lines[line][3].startswith(text.removesuffix(" …"))
