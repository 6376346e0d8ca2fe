"""Imported answers said right (issue 32.3): the unscored questions by cause (the file has no answer to them; the
judge gave no verdict), never lumped as the judge's; the publisher's own numbers per category beside ours; two
imported publishers compared on their own judges' verdicts (their J), shown as theirs."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.console import Console

from ltm_harness._api import import_answers_async
from ltm_harness._cli.tables import print_run
from ltm_harness._interop.locomo.data import CATEGORY_NAMES
from ltm_harness._report import write_report
from ltm_harness._report.labels import unscored_note
from ltm_harness._stats.verdict_pairs import verdict_pair

from .test_import_answers import LOCOMO, SAMPLES


def _mem0(path: Path, wrong: int = 0) -> Path:
    """mem0's evaluation results for categories 1-4 (category 5 never answered, as mem0's runs leave it out); their
    judge says WRONG on the first `wrong` answers."""
    out: dict[str, list[dict]] = {}
    k = 0
    for i, sample in enumerate(SAMPLES):
        out[str(i)] = []
        for q in sample["qa"]:
            if q["category"] == 5:
                continue
            out[str(i)].append({"question": q["question"], "answer": q.get("answer"),
                                "response": f"it was {q.get('answer')}", "category": str(q["category"]),
                                "bleu_score": 0.5, "f1_score": 1.0, "llm_score": 0 if k < wrong else 1})
            k += 1
    path.write_text(json.dumps(out))
    return path


async def test_the_questions_the_file_never_answered_are_said_as_such_and_theirs_are_shown_per_category(tmp_path,
                                                                                                        monkeypatch):
    from ltm_harness._llm.mock_server import MockLLMServer

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await import_answers_async("locomo", _mem0(tmp_path / "mem0.json"), name="mem0", data_file=LOCOMO,
                                         examples=2, results=tmp_path / "results", judge="mock-judge")
    d = out.summary.agents[0].datasets[0]
    assert (d.unscored, d.not_answered) == (3, 3)  # the adversarial (category 5) questions the file leaves out
    note = unscored_note(d, judged=True)
    assert note is not None and "3 not answered in the imported file" in note and "judge" not in note
    console = Console(file=io.StringIO(), width=200)
    print_run(out.summary, console, folder=out.path)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "3 not answered in the imported file" in text and "no usable verdict" not in text
    assert "[unscored, imported" in text  # its marks beside its number
    page = write_report([out.path]).html.read_text()
    assert "no usable verdict" not in page
    assert "Not answered in the file, by category: adversarial 3." in page
    section = page.split('<section id="imported">')[1].split("</section>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td>", section)
    # their F1 and their judge beside ours, overall then per category in LoCoMo's order
    at = rows.index("their F1 vs the reference rules (our score)")
    categories = [r.strip(" ·") for r in rows[at + 1:] if r.startswith("  · ")][:4]
    order = list(CATEGORY_NAMES.values())  # LoCoMo's own: categories 1 to 5
    assert len(categories) > 1 and categories == sorted(categories, key=order.index)


async def test_two_publishers_are_compared_on_their_own_judges_verdicts(tmp_path):
    a = await import_answers_async("locomo", _mem0(tmp_path / "a.json"), name="pub-a", data_file=LOCOMO, examples=2,
                                   results=tmp_path / "results")
    b = await import_answers_async("locomo", _mem0(tmp_path / "b.json", wrong=3), name="pub-b", data_file=LOCOMO,
                                   examples=2, results=tmp_path / "results")
    page = write_report([a.path, b.path]).html.read_text()
    section = page.split("Publishers compared on their own judges' verdicts")[1].split("</table>")[0]
    cells = re.findall(r'<td class="num">([^<]+)</td>', section)
    # 8 questions both judged; A right on all, B wrong on 3 of them: only A 3, only B 0, exact McNemar p = 2/8
    assert cells == ["8", "1.000", "0.625", "3", "0", "0.25"]
    assert "not ours" in page.split("Publishers compared on their own judges' verdicts")[1][:300]


def test_verdict_pairs_are_on_the_questions_both_judged():
    pair = verdict_pair({"q1": True, "q2": True, "q3": False, "q4": True}, {"q1": False, "q2": True, "q3": True})
    assert pair is not None and (pair.questions, pair.only_a, pair.only_b, pair.p) == (3, 1, 1, 1.0)
    assert pair.right_a == 2 / 3 and pair.right_b == 2 / 3
    assert verdict_pair({"q1": True}, {"q2": True}) is None


def test_the_command_prints_their_numbers_per_category_beside_ours(tmp_path, capsys):
    from ltm_harness._cli.main import main

    assert main(["import-answers", "locomo", str(_mem0(tmp_path / "mem0.json")), "--name", "mem0", "--data-file",
                 str(LOCOMO), "--examples", "2", "--results", str(tmp_path / "results"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "the publisher's scores (imported, not ours)" in out
    assert re.search(r"their F1 vs the reference rules \(our score\): theirs 1\.000, ours 0\.\d+, 8 disagree "
                     r"\(8 questions\)", out)
    per_category = re.findall(r"^  · ([a-z-]+): theirs 1\.000", out, re.M)
    assert len(per_category) > 1 and per_category == [c for c in CATEGORY_NAMES.values() if c in per_category]
    assert "3 not answered in the imported file" in out
