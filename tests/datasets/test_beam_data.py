"""BEAM's files read as the reference reads them (on small files of the real shapes written by
benchmarks/beam_data.py, never the real data): every shape of `source_chat_ids` and its quirks counted, chats of both
forms streamed, a 10M chat assembled from its sub-plans with ids running on, one line for a file of the wrong shape;
the scoring arithmetic (rubric means ours and the reference's, tau-b against a brute-force count, the alignment and
F1 as the reference counts them); the mock judge's BEAM replies."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from pathlib import Path

import pytest

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.beam.chat import iter_assembled, iter_chat_file, plan_files
from ltm_harness._interop.beam.fetch import local_source
from ltm_harness._interop.beam.probing import ABILITIES, Quirks, drop_unknown, parse_probing, read_evidence
from ltm_harness._interop.beam.scoring import (align, answer_lines, kendall_tau_b, order_ranks, order_score,
                                               rubric_score, rule_verdict)
from ltm_harness._llm.mock_beam import beam_judge_reply
from ltm_harness.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "beam_data.py")


# -- evidence ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, ability, ids, quirks", [
    ([3, 5], "information_extraction", [3, 5], {}),
    (["7", 9], "information_extraction", [7, 9], {}),
    ([[1], [4, 6], [8]], "event_ordering", [1, 4, 6, 8], {"evidence_nested": 1}),
    ([2, "--", 6], "event_ordering", [2, 6], {"evidence_not_ids": 1}),
    ({"first_statement": [2], "second_statement": [8]}, "contradiction_resolution", [2, 8], {}),
    ({"original_info": [4], "updated_info": []}, "knowledge_update", [4], {"evidence_half_empty": 1}),
    ({"first_event": [], "second_event": []}, "temporal_reasoning", [], {"evidence_empty": 1}),
    ([], "summarization", [], {"evidence_empty": 1}),
    (None, "summarization", [], {"evidence_missing": 1}),
    (None, "abstention", [], {}),  # abstention questions have no evidence by design
    ([4, 4, 6], "multi_session_reasoning", [4, 6], {"evidence_duplicates": 1}),
])
def test_every_shape_of_source_chat_ids(raw, ability, ids, quirks):
    counted = Quirks()
    assert read_evidence(raw, ability, counted) == ids
    assert counted.counts == quirks


def test_a_probing_file_reads_ability_by_ability_with_its_quirks_counted(tmp_path):
    gen.write_chat(tmp_path / "c", seed=3)
    data = json.loads((tmp_path / "c" / "probing_questions" / "probing_questions.json").read_text())
    quirks = Quirks()
    questions = parse_probing(data, "p.json", quirks)
    assert [q.ability for q in questions] == [a for a in ABILITIES for _ in range(2)]
    assert all(q.rubric for q in questions)
    golds = {q.ability: q.gold for q in questions}
    assert golds["instruction_following"] is None and golds["abstention"].startswith("Based on the provided chat")
    order = next(q for q in questions if q.key == "event_ordering.0")
    assert len(order.rubric) == 3 and len(order.evidence) == 4  # one event named by two ids
    assert quirks.counts == {"evidence_half_empty": 1, "evidence_nested": 1, "evidence_not_ids": 1,
                             "event_ids_vs_rubric": 1, "evidence_missing": 1, "evidence_empty": 1,
                             "evidence_duplicates": 1}
    kept = drop_unknown(questions, range(0, 30), quirks)  # ids past a chat's end are left out, counted
    assert all(i < 30 for q in kept for i in q.evidence) and quirks.counts["evidence_unknown"] > 0


@pytest.mark.parametrize("data, problem", [
    ([], "not an object of abilities"),
    ({"memory": []}, "'memory' is not one of BEAM's ten abilities"),
    ({"abstention": [{"rubric": ["x"]}]}, "abstention[0].question: missing"),
    ({"abstention": "x"}, "abstention: must be a list"),
])
def test_a_probing_file_of_another_shape_is_one_line(data, problem):
    with pytest.raises(DefinitionError) as err:
        parse_probing(data, "p.json")
    assert problem in str(err.value) and "\n" not in str(err.value)


# -- chats ------------------------------------------------------------------------------------------------------
def test_a_chat_streams_in_order_with_batch_dates_and_ids_given_as_text(tmp_path):
    gen.write_chat(tmp_path / "c", seed=1, id_strings=True, bad_anchor=True)
    messages = list(iter_chat_file(tmp_path / "c" / "chat.json"))
    assert [m.id for m in messages] == list(range(72))
    assert [m.role for m in messages[:4]] == ["user", "assistant", "user", "assistant"]
    opened = [m for m in messages if m.anchor_text]
    assert [m.id for m in opened] == [0, 24, 48]  # the first message of each batch
    assert opened[0].opens.isoformat() == "2024-03-15T00:00:00+00:00" and opened[1].opens.day == 22
    assert opened[2].opens is None and opened[2].anchor_text == "Sometime-in-2024"  # counted as dates_unread


def test_the_reference_plays_the_truncated_file_where_there_is_one(tmp_path):
    root = gen.write_dataset(tmp_path, "100K", 2)
    first, second = local_source(root, "100K", 1), local_source(root, "100K", 2)
    assert first.kind == "truncated" and first.chat[0].name == "chat_trunecated.json"
    assert second.kind == "full" and second.chat[0].name == "chat.json"
    assert len(list(first.messages())) == 60 and len(list(second.messages())) == 72
    assert local_source(root / "chats", "100K", 1).kind == "truncated"  # the chats folder itself also does


def test_a_10m_chat_is_assembled_from_its_sub_plans_with_ids_running_on(tmp_path):
    folder = tmp_path / "chats" / "10M" / "1"
    gen.write_10m_chat(folder, seed=1, plans=10, batches=2, turns=2, combined=True)
    plans = plan_files(folder)
    assert [p.parent.name for p in plans] == [f"plan-{k}" for k in range(10)]
    assembled = list(iter_assembled(plans))
    assert [m.id for m in assembled] == list(range(160))  # each sub-plan restarts at 0 in its file
    combined = list(iter_chat_file(folder / "chat_trunecated.json"))  # the reference's combined form
    assert [(m.id, m.role, m.content, m.opens) for m in combined] == \
        [(m.id, m.role, m.content, m.opens) for m in assembled]
    (folder / "chat_trunecated.json").unlink()
    source = local_source(tmp_path, "10M", 1)
    assert source.kind == "assembled" and len(source.chat) == 10
    questions = source.questions(Quirks())
    assert max(i for q in questions for i in q.evidence) >= 80  # global ids, past the first sub-plan


def test_offsets_follow_the_last_id_of_the_previous_sub_plan(tmp_path):
    for k, ids in enumerate([[0, 1, 2, 3], [0, 1]]):
        path = tmp_path / f"plan-{k}" / "chat.json"
        path.parent.mkdir()
        turn = [{"role": "user" if i % 2 == 0 else "assistant", "id": i, "content": f"m{i}"} for i in ids]
        path.write_text(json.dumps([{"batch_number": 1, "time_anchor": None, "turns": [turn]}]))
    assert [m.id for m in iter_assembled(plan_files(tmp_path))] == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("text, problem", [
    ('[{"turns": [[{"role": "system", "id": 0, "content": "x"}]]}]', "role: must be user or assistant"),
    ('[{"turns": [[{"role": "user", "id": "a", "content": "x"}]]}]', "id: must be a message number"),
    ('[{"turns": {}}]', "must be an object with a list of turns"),
    ('{"a": 1}', "not a JSON list"),
    ('[{"turns": [[{"role": "user", "id": 0, "content": "x"}', "the file is cut"),
])
def test_a_chat_of_another_shape_is_one_line(tmp_path, text, problem):
    path = tmp_path / "chat.json"
    path.write_text(text)
    with pytest.raises(DefinitionError) as err:
        list(iter_chat_file(path))
    assert problem in str(err.value) and "\n" not in str(err.value)


# -- scoring ----------------------------------------------------------------------------------------------------
def brute_tau_b(x, y):
    """tau-b from its definition by pairs: (concordant - discordant) / sqrt((pairs untied in x) (pairs untied in
    y))."""
    concordant = discordant = tied_x = tied_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            tied_x += 1
            tied_y += 1
        elif dx == 0:
            tied_x += 1
        elif dy == 0:
            tied_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    pairs = len(x) * (len(x) - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return None if denominator == 0 else (concordant - discordant) / denominator


def test_tau_b_matches_a_brute_force_count_and_scipys_documented_value():
    assert kendall_tau_b([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) == pytest.approx(-0.47140452079103173)  # scipy's docs
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(2, 9)
        x = [rng.randint(1, 4) for _ in range(n)]
        y = [rng.randint(1, 4) for _ in range(n)]
        want = brute_tau_b(x, y)
        got = kendall_tau_b(x, y)
        assert (got is None and want is None) or got == pytest.approx(want)
    assert kendall_tau_b([1], [1]) is None and kendall_tau_b([1, 1], [1, 2]) is None


def test_order_score_counts_as_the_reference_does():
    gold = ["a", "b", "c"]
    perfect = order_score(gold, gold)
    assert (perfect.f1, perfect.tau_norm, perfect.score("ours"), perfect.score("reference")) == (1.0, 1.0, 1.0, 1.0)
    swapped = order_score(gold, ["b", "a", "c"])
    assert swapped.f1 == 1.0 and swapped.tau_norm == pytest.approx((1 / 3 + 1) / 2)
    partial = order_score(gold, ["a", "x"])  # one right, one not an event, two missing
    assert partial.precision == 0.5 and partial.recall == pytest.approx(1 / 3)
    ranks = order_ranks(gold, ["a", "x"])
    assert ranks == ([1, 2, 3, 5], [1, 5, 5, 2])  # the union (gold first), missing items at the shared last rank
    assert partial.score("ours") == pytest.approx(partial.tau_norm * partial.f1)
    assert partial.score("reference") == partial.tau_norm
    alone = order_score(["a"], ["a"])  # one item: tau-b undefined (NaN in the reference)
    assert alone.tau_norm is None and alone.score("ours") == 1.0 and alone.score("reference") is None


def test_alignment_replaces_each_line_by_the_first_unused_matching_event():
    calls = []

    async def same(event: str, line: str) -> bool:
        calls.append((event, line))
        return event[0] == line[0]

    aligned = asyncio.run(align(["apple", "avocado", "banana"], ["a1", "b1", "a2", "a3"], same))
    assert aligned == ["apple", "banana", "avocado", "a3"]
    assert calls[:3] == [("apple", "a1"), ("avocado", "b1"), ("banana", "b1")]  # a used event is not asked again
    assert answer_lines("1. a\n\n2. b\n", "ours") == ["1. a", "2. b"]
    assert answer_lines("1. a\n\n2. b\n", "reference") == ["1. a", "", "2. b", ""]  # blank lines included


def test_rubric_arithmetic_ours_and_the_published_codes():
    assert rubric_score([1.0, 0.5, 0.0], "ours") == 0.5
    assert rubric_score([1.0, 0.5, 0.0], "reference") == pytest.approx(1 / 3)  # int(0.5) == 0
    assert rubric_score([0.5], "reference") == 0.0


def test_without_a_judge_only_clear_abstentions_on_abstention_questions_are_decided():
    assert rule_verdict("abstention", "I don't know: you never told me that.") == 1.0
    assert rule_verdict("abstention", "Probably the garden plan, I think.") is None
    assert rule_verdict("information_extraction", "I don't know.") is None
    assert rule_verdict("abstention", "") is None


def test_the_mock_judge_scores_rubric_items_and_aligns_events():
    def rubric(item: str, response: str) -> dict:
        return json.loads(beam_judge_reply(f"<rubric_item>{item}</rubric_item>\n<response>{response}</response>"))

    item = "LLM response should state: the login code for project Noor is quartz-12"
    assert rubric(item, "The login code for project Noor is quartz-12.")["score"] == 1.0
    assert rubric(item, "Project Noor uses login codes.")["score"] == 0.5
    assert rubric(item, "No idea.")["score"] == 0.0
    assert beam_judge_reply("<event>Set up the login page</event> <item>1. set up the login page</item>") == "yes"
    assert beam_judge_reply("First snippet: Set up the login page \n Second snippet: deployed it") == "no"
    assert beam_judge_reply("Is this right? <expected>x</expected>") is None
