"""`import-answers` on files written here in the published shapes (mem0's LoCoMo evaluation results, a LoCoMo jsonl,
LongMemEval's jsonl and its evaluator's .log), against the small LoCoMo- and LongMemEval-shaped data files of
tests/data: matched, unmatched and duplicated counts, scores by the reference rules, the publisher's scores kept as
theirs, an imported run beside a live one in `compare`, and bad files as one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._api import import_answers_async, run_async
from ltm_harness._authoring.unanswered import NOT_ANSWERED
from ltm_harness._cli.main import main
from ltm_harness._errors import ConfigError
from ltm_harness._interop.answers.run import read_match_report
from ltm_harness._interop.locomo.scoring import score_answer
from ltm_harness._report import write_report
from ltm_harness._store.layout import RunFolder

DATA = Path(__file__).resolve().parents[1] / "data"
LOCOMO = DATA / "locomo" / "synthetic.json"
LME = DATA / "longmemeval" / "tiny.json"
SAMPLES = json.loads(LOCOMO.read_text())
QUESTIONS = json.loads(LME.read_text())
HINT = "Not mentioned in the conversation"


def mem0_file(path: Path, extra: list[dict] | None = None) -> Path:
    """mem0's evaluation results: conversation index -> its answers to categories 1-4, category as a string, with the
    publisher's own token scores and judge verdict (here: a short answer of each kind, their F1 always 1.0)."""
    out: dict[str, list[dict]] = {}
    for i, sample in enumerate(SAMPLES):
        out[str(i)] = [{"question": q["question"], "answer": q.get("answer"), "response": f"it was {q.get('answer')}",
                        "category": str(q["category"]), "bleu_score": 0.5, "f1_score": 1.0, "llm_score": 1}
                       for q in sample["qa"] if q["category"] != 5]
    out["0"] += extra or []
    path.write_text(json.dumps(out, indent=4))
    return path


async def test_mem0_results_are_matched_by_text_and_scored_by_the_reference_rules(tmp_path):
    extra = [{"question": "What is the colour of the moon?", "answer": "grey", "response": "grey", "category": "4"},
             {"question": "  what is the name of  ADA'S cat? ", "answer": "x", "response": "Pepper again",
              "category": "4"}]  # a second answer to a text asked once: one too many
    out = await import_answers_async("locomo", mem0_file(tmp_path / "mem0.json", extra), name="mem0",
                                     data_file=LOCOMO, examples=2, results=tmp_path / "results")
    m = out.match
    # 9 answers to categories 1-4 (one to a question the reader leaves out: it has no gold answer) + 2 extra
    assert (m.file_format, m.answers, m.questions) == ("mem0", 11, 11)
    assert (m.matched, m.unmatched, m.duplicated, m.unanswered) == (8, 2, 1, 3)  # the 3 adversarial: no answer
    assert any("colour of the moon" in line for line in m.unmatched_list)
    assert any("one answer more" in line for line in m.duplicated_list)
    results = {r.example_id: r for r in out.results("mem0")}
    for sample in SAMPLES:
        for index, q in enumerate(sample["qa"]):
            r = results.get(f"{sample['sample_id']}.q{index}")
            if r is None:
                continue
            if q["category"] == 5:
                assert r.status == "unscored" and r.responses == [NOT_ANSWERED] and "no answer" in r.reasons[0]
            else:  # the reference's rule on the imported response, exactly
                assert r.status == "ok" and r.responses == [f"it was {q['answer']}"]
                assert r.score == score_answer(q["category"], f"it was {q['answer']}", str(q["answer"]))
    # the publisher's scores are kept, as theirs
    kept = read_match_report(RunFolder(out.path), "mem0")
    assert kept is not None and len(kept.theirs) == 8 and {t.f1 for t in kept.theirs} == {1.0}
    page = write_report([out.path]).html.read_text()
    assert "their F1 vs the reference rules" in page and "8 matched" not in page  # counts are in bold
    assert "<b>8</b> matched, 2 unmatched, 1 duplicated" in page


async def test_a_locomo_jsonl_by_index_and_by_text_and_a_question_answered_twice_gets_neither(tmp_path):
    lines = [{"sample_id": "synthetic-1", "question_index": 0, "response": "Pepper"},
             {"sample_id": "synthetic-1", "question": "When did Ada run the half marathon?", "response": "June 2023"},
             {"sample_id": "synthetic-1", "question_index": 5, "response": HINT},
             {"sample_id": "synthetic-2", "question_index": 0, "response": "Porto"},
             {"sample_id": "synthetic-2", "question_index": 0, "response": "Lisbon"},  # twice: neither is used
             {"sample_id": "conv-99", "question_index": 0, "response": "?"},
             {"sample_id": "synthetic-2", "question_index": 7, "response": "?"}]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = await import_answers_async("locomo", path, name="mine", data_file=LOCOMO, examples=2,
                                     results=tmp_path / "results")
    m = out.match
    assert (m.file_format, m.answers, m.matched, m.unmatched, m.duplicated, m.unanswered) == \
        ("locomo-jsonl", 7, 3, 2, 2, 8)
    results = {r.example_id: r for r in out.results("mine")}
    assert results["synthetic-1.q0"].score == 1.0 and results["synthetic-1.q1"].score == 1.0
    assert results["synthetic-1.q5"].score == 1.0  # adversarial: says it is not mentioned
    assert results["synthetic-2.q0"].status == "unscored"


def lme_lines(labels: bool) -> list[dict]:
    out = []
    for q in QUESTIONS:
        right = q["question_id"] != "216fdaee"
        line = {"question_id": q["question_id"], "hypothesis": str(q["answer"]) if right else "Paris"}
        if labels:
            line["autoeval_label"] = {"model": "gpt-4o-2024-08-06", "label": True} if q["question_id"] != "e02ea68e" \
                else True  # a bare boolean, as some copies write it
        out.append(line)
    return out


@pytest.mark.parametrize("labels", [False, True])
async def test_longmemeval_jsonl_and_log_keep_the_label_as_theirs(tmp_path, labels):
    lines = lme_lines(labels)
    lines.append({"question_id": "nope", "hypothesis": "x"})
    path = tmp_path / ("answers.jsonl.log" if labels else "answers.jsonl")
    path.write_text("\n".join(json.dumps(x) for x in lines))
    out = await import_answers_async("longmemeval", path, name="published", data_file=LME, examples=len(QUESTIONS),
                                     results=tmp_path / "results")
    m = out.match
    assert m.file_format == ("longmemeval-log" if labels else "longmemeval-jsonl")
    assert (m.answers, m.questions, m.matched, m.unmatched, m.duplicated, m.unanswered) == (10, 9, 9, 1, 0, 0)
    results = {r.example_id: r for r in out.results("published")}
    assert results["2dd272d1"].status == "ok" and results["2dd272d1"].score == 1.0  # the gold said back: the rule
    assert results["216fdaee"].status in ("ok", "unscored") and results["216fdaee"].score == 0.0
    kept = read_match_report(RunFolder(out.path), "published")
    assert kept is not None
    if labels:  # their judge's verdicts, kept and shown as theirs
        assert {t.judge for t in kept.theirs} == {1.0} and len(kept.theirs) == 9
        page = write_report([out.path]).html.read_text()
        assert "their judge (gpt-4o-2024-08-06) vs our scores" in page
    else:
        assert kept.theirs == []


async def test_an_imported_run_sits_beside_a_live_one_in_compare(tmp_path, capsys):
    cfg = {"config": {"run_name": "locomo", "seed": 0},
           "datasets": {"args": {"memory_span": 4000, "dataset_examples": 2},
                        "datasets": [{"name": "locomo", "args": {"mode": "reference", "data_file": str(LOCOMO)}}]}}
    live = await run_async(cfg, ["retrieval"], results=tmp_path / "results")
    imported = await import_answers_async("locomo", mem0_file(tmp_path / "mem0.json"), name="mem0", data_file=LOCOMO,
                                          examples=2, results=tmp_path / "results")
    assert imported.path.name == "locomo-mem0"
    assert main(["compare", str(live.path), str(imported.path)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("retrieval · locomo vs mem0 · locomo-mem0 on locomo"))
    assert "(8 questions scored for both)" in line  # the 3 adversarial ones mem0's file leaves out are not compared
    assert "A wins" in line and ("p = " in line or "p < " in line)
    page = Path(next(x for x in out.splitlines() if x.startswith("report in ")).removeprefix("report in ")).read_text()
    assert "Question by question" in page and "of 8 questions differ" in page


def test_bad_files_are_one_line_each(tmp_path, capsys, monkeypatch):
    def run(*argv: str) -> str:
        assert main(["import-answers", *argv, "--name", "x", "--data-file", str(LOCOMO), "--results",
                     str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "Traceback" not in err
        return err

    (tmp_path / "not.json").write_text("this is not JSON\n")
    assert "line 1: not JSON" in run("locomo", str(tmp_path / "not.json"))
    (tmp_path / "list.json").write_text("[1, 2]")
    assert "a JSON list is not a LoCoMo answers format" in run("locomo", str(tmp_path / "list.json"))
    (tmp_path / "shape.json").write_text(json.dumps({"0": [{"question": "q"}]}))
    assert "'response' must be text" in run("locomo", str(tmp_path / "shape.json"))
    (tmp_path / "lme.jsonl").write_text(json.dumps({"question_id": "a", "answer": "b"}))
    assert "no 'hypothesis'" in run("longmemeval", str(tmp_path / "lme.jsonl"))
    assert "unknown benchmark 'beam'" in run("beam", str(tmp_path / "lme.jsonl"))
    assert "no such file" in run("locomo", str(tmp_path / "missing.json"))
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:  # sparse: refused by its size before it is opened
        f.truncate(65 * 1024 * 1024)
    assert "more than the 67,108,864 read whole" in run("locomo", str(huge))
    assert not (tmp_path / "r").exists()  # nothing was written for a bad file


def test_the_library_call_says_a_config_playing_another_benchmark_in_one_line(tmp_path):
    from ltm_harness import import_answers

    (tmp_path / "a.jsonl").write_text(json.dumps({"question_id": "a", "hypothesis": "b"}))
    with pytest.raises(ConfigError, match="plays exactly one benchmark, locomo, longmemeval or memoryagentbench; this one plays"):
        import_answers("default", tmp_path / "a.jsonl", name="x", results=tmp_path / "r")


async def test_with_a_judge_their_judge_is_set_beside_ours_and_unanswered_questions_stay_unscored(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import MockLLMServer

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await import_answers_async("locomo", mem0_file(tmp_path / "mem0.json"), name="mem0", data_file=LOCOMO,
                                         examples=2, results=tmp_path / "results", judge="mock-judge")
    results = out.results("mem0")
    assert sum(1 for r in results if r.verdicts) == 8  # our judge on the 8 answered questions of categories 1-4
    assert all(r.status == "unscored" for r in results if r.labels == {"category": "adversarial"})
    page = write_report([out.path]).html.read_text()
    assert "their judge vs our judge (J)" in page
    assert len([r for r in server.requests if r["model"] == "mock-judge"]) == 8


async def test_no_judge_call_is_made_for_a_question_the_file_does_not_answer(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import MockLLMServer

    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lme_lines(False)[:7]))  # the last 2 questions: no answer
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await import_answers_async("longmemeval", path, name="p", data_file=LME, examples=len(QUESTIONS),
                                         results=tmp_path / "results", judge="mock-judge")
    assert len([r for r in server.requests if r["model"] == "mock-judge"]) == 7
    missing = [r for r in out.results("p") if r.responses == [NOT_ANSWERED]]
    assert len(missing) == 2 and all(r.status == "unscored" and "no answer" in r.reasons[0] for r in missing)


class Stop(Exception):
    pass


def test_an_interrupted_import_is_resumed_or_overwritten_like_a_run(tmp_path, capsys):
    answers = mem0_file(tmp_path / "mem0.json")
    common = ["import-answers", "locomo", str(answers), "--name", "mem0", "--data-file", str(LOCOMO), "--examples",
              "2", "--results", str(tmp_path / "r"), "--no-report"]
    turns = 0

    def stop_after_three(turn) -> None:
        nonlocal turns
        turns += 1
        if turns == 3:
            raise Stop()

    import asyncio

    with pytest.raises(Stop):  # stopped mid-way: the folder holds an interrupted run
        asyncio.run(import_answers_async("locomo", answers, name="mem0", data_file=LOCOMO, examples=2,
                                         results=tmp_path / "r", on_turn=stop_after_three))
    folder = tmp_path / "r" / "locomo-mem0"
    assert (folder / "mem0").is_dir() and not (folder / "summary.json").exists()
    assert main(common) != 0  # reused without a word: refused, with the two ways out
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and "Traceback" not in err
    assert main([*common, "--resume"]) == 0
    resumed = json.loads((folder / "mem0" / "results.json").read_text())
    assert main([*common, "--overwrite"]) == 0
    assert json.loads((folder / "mem0" / "results.json").read_text()) == resumed  # the same as played in one go
    assert not (tmp_path / "r" / "locomo-mem0-2").exists()
    with pytest.raises(SystemExit):
        main([*common, "--resume", "--overwrite"])


def test_an_import_stopped_by_ctrl_c_says_the_command_that_continues_it(tmp_path, capsys, monkeypatch):
    import ltm_harness._api as api

    def interrupted(*args, on_claimed, **options):
        on_claimed("locomo-mem0-2")
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "import_answers", interrupted)
    argv = ["import-answers", "locomo", "a b.json", "--name", "mem0", "--examples", "2", "--results", str(tmp_path)]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"kept in {tmp_path / 'locomo-mem0-2'}" in err
    assert err.rstrip().endswith(f"import-answers locomo 'a b.json' --name mem0 --run-name locomo-mem0-2 --examples 2 "
                                 f"--results {tmp_path} --resume")


def _asked() -> list:
    from ltm_harness._interop.answers.matching import AskedQuestion

    return [AskedQuestion(s["sample_id"], f"{s['sample_id']}.q{i}", str(i), q["question"])
            for s in SAMPLES for i, q in enumerate(s["qa"])]


def test_an_index_and_a_text_that_disagree_are_unmatched_never_scored_against_the_index(tmp_path):
    from ltm_harness._interop.answers.formats import read_answers
    from ltm_harness._interop.answers.matching import match_answers

    first, second = SAMPLES[0]["qa"][0]["question"], SAMPLES[0]["qa"][1]["question"]
    lines = [{"sample_id": "synthetic-1", "question_index": 0, "question": second, "response": "June 2023"},
             {"sample_id": "synthetic-1", "question_index": 1, "question": f"  {second.upper()} ", "response": "June"},
             {"sample_id": "synthetic-1", "question_index": 2, "question": first, "response": "Pepper"}]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    m = match_answers(read_answers(path, "locomo"), _asked(), "locomo").report
    assert (m.matched, m.unmatched, m.duplicated) == (1, 2, 0)  # only the one whose text is its index's question
    assert m.unmatched_list[0].startswith("line 1: question_index 0 of synthetic-1 reads \"What is the name")
    assert "not the line's question 'When did Ada run" in m.unmatched_list[0]


def test_a_mem0_conversation_given_twice_is_duplicated_never_used(tmp_path):
    from ltm_harness._interop.answers.formats import read_answers
    from ltm_harness._interop.answers.matching import match_answers

    q = SAMPLES[0]["qa"]
    block = lambda response: json.dumps([{"question": x["question"], "response": response, "category": "4"}  # noqa: E731
                                         for x in q[:2]])
    path = tmp_path / "mem0.json"
    path.write_text('{"0": ' + block("first") + ', "1": [], "0": ' + block("second") + "}")
    m = match_answers(read_answers(path, "locomo"), _asked(), "locomo", ["synthetic-1", "synthetic-2"]).report
    assert (m.answers, m.matched, m.duplicated) == (4, 0, 4)
    assert all("conversation 0 is given 2 times in the file; never used" in line for line in m.duplicated_list)
    # a field given twice in one answer: which response is meant is not known either
    path.write_text('{"0": [{"question": ' + json.dumps(q[0]["question"]) + ', "response": "a", "response": "b"}]}')
    m = match_answers(read_answers(path, "locomo"), _asked(), "locomo", ["synthetic-1", "synthetic-2"]).report
    assert (m.matched, m.duplicated) == (0, 1) and "gives 'response' more than once" in m.duplicated_list[0]


@pytest.mark.parametrize("key", ["²", "٣", "1" * 5000, "-1", " 1"])
def test_keys_that_are_not_an_ascii_index_are_one_line(tmp_path, capsys, key):
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({key: [{"question": "q", "response": "r"}]}))
    assert main(["import-answers", "locomo", str(path), "--name", "x", "--data-file", str(LOCOMO), "--results",
                 str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and len(err) < 400
    assert "mem0's results are keyed by the conversation's index" in err


async def test_publisher_scores_outside_0_1_are_shown_invalid_never_averaged(tmp_path):
    q = SAMPLES[0]["qa"]
    items = [{"question": x["question"], "answer": x.get("answer"), "response": f"it was {x.get('answer')}",
              "category": str(x["category"]), "f1_score": f1, "llm_score": 1}
             for x, f1 in zip(q[:4], [1e308, 1e308, 7.5, 0.5])]
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"0": items}))
    out = await import_answers_async("locomo", path, name="mem0", data_file=LOCOMO, examples=1,
                                     results=tmp_path / "results")
    assert out.match.invalid_scores == 3 and "their f1_score 1e+308 is not a score in [0, 1]" in out.match.invalid_list[0]
    kept = read_match_report(RunFolder(out.path), "mem0")
    assert kept is not None and [t.f1 for t in kept.theirs] == [None, None, None, 0.5]
    page = write_report([out.path]).html.read_text()  # no overflow: the F1 row is over the one valid score
    assert "3 scores of the publisher's are not a number in [0, 1]: shown as invalid, never averaged" in page
    assert '<td>their F1 vs the reference rules (our score)</td><td class="num">1</td><td class="num">0.500</td>' in page
    # a match report written before (or edited) with such a score: shown invalid too, the report still made
    (RunFolder(out.path).imported("mem0")).write_text(
        kept.model_copy(update={"theirs": [t.model_copy(update={"f1": 1e308}) for t in kept.theirs]}).model_dump_json())
    page = write_report([out.path]).html.read_text()
    assert "7 scores of the publisher's are not a number in [0, 1]" in page and "their F1 vs" not in page
async def test_imported_answers_judged_through_the_batch_api_get_the_online_verdicts(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import MockLLMServer
    from ltm_harness._runner import judge_batch

    monkeypatch.setattr(judge_batch, "POLL_FIRST", 0.01)
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lme_lines(False)))
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        online = await import_answers_async("longmemeval", path, name="p", data_file=LME, examples=len(QUESTIONS),
                                            results=tmp_path / "online", judge="mock-judge")
        batched = await import_answers_async("longmemeval", path, name="p", data_file=LME, examples=len(QUESTIONS),
                                             results=tmp_path / "batch", judge="mock-judge", judge_batch=True)
        assert server.stats["model:mock-judge"] == server.stats["batch_lines"] == len(QUESTIONS)
        assert server.stats["batches_created"] == 1
    assert [(r.score, r.status, r.verdicts) for r in batched.results("p")] == \
        [(r.score, r.status, r.verdicts) for r in online.results("p")]
    assert batched.match.matched == online.match.matched == len(QUESTIONS)
