"""LongMemEval's judge: our prompt per kind of question (abstention by the id), a yes/no verdict read as the
reference reads it (an unreadable one unscored, never wrong), sent through the run's judge at temperature 0 with at
most 10 tokens, recorded and replayed; and the reference's own prompts read from a checkout with `ast`, running
nothing (a synthetic checkout in the reference's shape, with dummy texts)."""

from __future__ import annotations

from collections import deque
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ltm_harness._engine.session_llm import SessionLLM
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion
from ltm_harness._interop.longmemeval.judge import JUDGE_KINDS, PROMPTS, judge_kind, judge_prompt, judge_verdict
from ltm_harness._interop.longmemeval.reference_prompts import load_reference_prompts
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.judge import LLMJudge, load_judge_prompt
from ltm_harness._scoring.judge_prompt import parse_yes_no
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._scoring.verdict import JudgeUnparseable
from ltm_harness._store.eventlog import MemoryLog
from ltm_harness._store.records import LLMCall

WHEN = datetime(2023, 5, 30, 23, 40, tzinfo=timezone.utc)


def question(kind: str, qid: str = "q1", answer: str = "Luna") -> LMEQuestion:
    return LMEQuestion(question_id=qid, question_type=kind, question="What is my cat called?", answer=answer,
                       question_date=WHEN, question_date_text="2023/05/30 (Tue) 23:40", sessions=[],
                       answer_session_ids=[])


def test_each_kind_has_its_prompt_and_abstention_goes_by_the_id():
    assert set(PROMPTS) == set(JUDGE_KINDS) == set(QUESTION_TYPES) | {"abstention"}
    for kind in QUESTION_TYPES:
        assert judge_kind(question(kind)) == kind and judge_prompt(question(kind)) is PROMPTS[kind]
        assert judge_prompt(question(kind, "x_abs")) is PROMPTS["abstention"]
    default = PROMPTS["single-session-user"].user
    assert PROMPTS["single-session-assistant"].user == PROMPTS["multi-session"].user == default
    assert len({p.user for p in PROMPTS.values()}) == 5  # default, temporal, update, preference, abstention
    for prompt in PROMPTS.values():
        assert (prompt.verdict, prompt.max_tokens, prompt.temperature, prompt.system) == ("yes_no", 10, 0.0, "")
        assert prompt.user.rstrip().endswith("Answer with one word: yes or no.")


def test_the_prompts_say_the_reference_criteria():
    temporal = PROMPTS["temporal-reasoning"].user
    assert PROMPTS["single-session-user"].user in temporal.replace(temporal[temporal.index(" When the question"):
                                                                            temporal.index(" Answer with")], "")
    assert "off by one" in temporal and "days, weeks, months" in temporal
    assert "only part of what the reference answer requires" in PROMPTS["multi-session"].user
    assert "even if it also mentions what was true before" in PROMPTS["knowledge-update"].user
    assert "Rubric: {expected}" in PROMPTS["single-session-preference"].user
    assert "need not cover every point" in PROMPTS["single-session-preference"].user
    assert "recognises that it cannot answer" in PROMPTS["abstention"].user
    assert "Explanation: {expected}" in PROMPTS["abstention"].user


@pytest.mark.parametrize("reply, score", [
    ("yes", 1.0), ("Yes.", 1.0), (" YES", 1.0), ("yes, it is correct", 1.0), ("No", 0.0), ("no.", 0.0),
    ("The answer is no", 0.0), ("no, yes", 1.0),  # "yes" anywhere wins, as the reference reads it
])
def test_yes_no_verdicts_read_as_the_reference_reads_them(reply, score):
    assert parse_yes_no(reply) == score


@pytest.mark.parametrize("reply, problem", [("", "empty"), ("   ", "empty"), ("Correct", "neither yes nor no"),
                                            ("nope", "neither yes nor no"), ("I cannot tell", "neither")])
def test_a_reply_without_yes_or_no_is_unparseable_not_wrong(reply, problem):
    with pytest.raises(ValueError, match=problem):
        parse_yes_no(reply)


def test_json_prompts_keep_their_hashes():
    # The yes/no fields enter the hash only when set: existing prompts (and recorded verdicts) keep theirs.
    default = load_judge_prompt("default")
    assert default.sha == default.model_copy(update={"verdict": "json"}).sha
    assert default.model_copy(update={"max_tokens": 10}).sha != default.sha
    assert PROMPTS["multi-session"].sha != PROMPTS["multi-session"].model_copy(update={"max_tokens": 11}).sha


@pytest.fixture
async def mock_llm():
    async with MockLLMServer() as server:
        yield server


def run_judge(url: str, model: str, temperature: float = 0.7) -> LLMJudge:
    client = LLMClient(resolve_endpoint("the judge", url), LLMSettings(backoff_initial=0.01))
    return LLMJudge(client, model, load_judge_prompt("default"), temperature=temperature, use_cache=False)


async def test_a_judge_call_is_one_user_message_at_temperature_0_with_10_tokens(mock_llm):
    judge = run_judge(mock_llm.url, "mock-fixed:Yes.")
    verdict = await judge_verdict(judge, question("knowledge-update"), "You live in Lyon now.")
    await judge.client.close()
    assert verdict.score == 1.0 and verdict.raw == "Yes." and verdict.prompt_hash == PROMPTS["knowledge-update"].sha
    sent = mock_llm.requests[-1]
    assert sent["max_tokens"] == 10 and sent["temperature"] == 0.0  # the prompt's, not the run judge's 0.7
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert "Reference answer: Luna" in sent["messages"][0]["content"]
    assert "Assistant's response: You live in Lyon now." in sent["messages"][0]["content"]


async def test_no_is_wrong_and_a_reply_saying_neither_is_asked_once_more_then_unscored(mock_llm):
    judge = run_judge(mock_llm.url, "mock-fixed:No")
    assert (await judge_verdict(judge, question("multi-session"), "3")).score == 0.0
    judge = run_judge(mock_llm.url, "mock-fixed:It depends")
    before = mock_llm.stats["requests"]
    with pytest.raises(JudgeUnparseable, match="neither yes nor no"):
        await judge_verdict(judge, question("multi-session"), "3")
    await judge.client.close()
    assert mock_llm.stats["requests"] - before == 2
    assert mock_llm.requests[-1]["messages"][-1]["content"].endswith("Answer with one word: yes or no.")


async def test_judge_calls_are_recorded_in_the_session_and_replayed_without_calling_again(mock_llm):
    judge = run_judge(mock_llm.url, "mock-fixed:yes")
    log = MemoryLog()
    first = await judge_verdict(SessionLLM(log, judge).judge_for("longmemeval/0"), question("single-session-user"),
                                "Luna")
    calls = [e for e in log.events if isinstance(e, LLMCall)]
    assert len(calls) == 1 and calls[0].role == "judge" and calls[0].test == "longmemeval/0"
    assert calls[0].response == "yes"
    requests = mock_llm.stats["requests"]
    replay = SessionLLM(MemoryLog(), judge, judge_replay={"longmemeval/0": deque(calls)})
    again = await judge_verdict(replay.judge_for("longmemeval/0"), question("single-session-user"), "Luna")
    await judge.client.close()
    assert mock_llm.stats["requests"] == requests and again.score == first.score == 1.0 and again.raw == "yes"


async def test_a_judge_of_the_users_own_without_prompt_support_still_grades_datasets_that_pass_none():
    class Plain:
        model = "plain"

        async def grade(self, question, expected, response, *, context=""):
            from ltm_harness._scoring.verdict import JudgeVerdict
            return JudgeVerdict(question=question, score=1.0, reason="", model="plain", prompt_hash="", raw="")

    judge = SessionLLM(MemoryLog(), Plain()).judge_for("t")  # type: ignore[arg-type]
    assert (await judge.grade("q", "a", "a")).score == 1.0


# -- the reference's prompts, read from a checkout ------------------------------------------------------------------

SHAPED = '''
import os
open(os.path.join(os.path.dirname(__file__), "EXECUTED"), "w").write("ran")  # must never run

model_zoo = {'gpt-4o': ('gpt-4o-2024-08-06', 'openai')}


def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if not abstention:
        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
            template = "DEFAULT {{literal}} Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        elif task == 'temporal-reasoning':
            template = "TEMPORAL Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        elif task == 'knowledge-update':
            template = "UPDATE R={2} Q={0} A={1}"
            prompt = template.format(question, answer, response)
        elif task == 'single-session-preference':
            template = "PREFERENCE R={} Q={} RUBRIC={}"
            prompt = template.format(response, question, answer)
        else:
            raise NotImplementedError
    else:
        template = "ABSTENTION Q={} E={} R={}"
        prompt = template.format(question, answer, response)
    return prompt


if __name__ == '__main__':
    raise SystemExit("not run")
'''


def checkout(tmp_path: Path, source: str = SHAPED) -> Path:
    script = tmp_path / "LongMemEval" / "src" / "evaluation" / "evaluate_qa.py"
    script.parent.mkdir(parents=True)
    script.write_text(source, encoding="utf-8")
    return tmp_path / "LongMemEval"


def test_the_reference_prompts_are_read_from_a_checkout_without_running_it(tmp_path):
    folder = checkout(tmp_path)
    prompts = load_reference_prompts(folder)
    assert list(prompts) == list(JUDGE_KINDS)
    assert not (folder / "src" / "evaluation" / "EXECUTED").exists()
    fill = {"question": "q?", "expected": "gold", "response": "said", "context": ""}
    assert prompts["single-session-user"].messages(**fill) == [
        {"role": "user", "content": "DEFAULT {literal} Q=q? A=gold R=said"}]
    assert prompts["multi-session"].user == prompts["single-session-assistant"].user == prompts["single-session-user"].user
    assert prompts["temporal-reasoning"].messages(**fill)[0]["content"] == "TEMPORAL Q=q? A=gold R=said"
    assert prompts["knowledge-update"].messages(**fill)[0]["content"] == "UPDATE R=said Q=q? A=gold"
    assert prompts["single-session-preference"].messages(**fill)[0]["content"] == "PREFERENCE R=said Q=q? RUBRIC=gold"
    assert prompts["abstention"].messages(**fill)[0]["content"] == "ABSTENTION Q=q? E=gold R=said"
    for prompt in prompts.values():
        assert (prompt.verdict, prompt.max_tokens, prompt.temperature, prompt.system) == ("yes_no", 10, 0.0, "")
    assert load_reference_prompts(folder / "src" / "evaluation" / "evaluate_qa.py") == prompts  # the file itself


def test_reference_prompts_select_as_ours_do(tmp_path):
    prompts = load_reference_prompts(checkout(tmp_path))
    assert judge_prompt(question("temporal-reasoning", "t_abs"), prompts) is prompts["abstention"]
    assert judge_prompt(question("knowledge-update"), prompts) is prompts["knowledge-update"]


@pytest.mark.parametrize("change, message", [
    (lambda s: s.replace("def get_anscheck_prompt", "def build_prompt"), "has no function get_anscheck_prompt"),
    (lambda s: s.replace("    return prompt\n", "    return prompt\n  oops\n"), "not Python this version can parse"),
    (lambda s: s.replace("elif task == 'knowledge-update':", "elif task.startswith('knowledge'):"),
     "a branch on something other than task == '...'"),
    (lambda s: s.replace("elif task == 'single-session-preference':", "elif task == 'preference':"),
     "no template for single-session-preference"),
    (lambda s: s.replace('"TEMPORAL Q={} A={} R={}"', '"TEMPORAL Q={} A={} R={} X={}"'),
     "a field of the template is not filled with the question, the answer or the response"),
    (lambda s: s.replace('"TEMPORAL Q={} A={} R={}"', '"TEMPORAL Q={q} A={} R={}"'), "a field {q} other than"),
    (lambda s: s.replace('"TEMPORAL Q={} A={} R={}"', '"TEMPORAL A={} R={}"').replace(
        "template.format(question, answer, response)\n        elif task == 'knowledge-update'",
        "template.format(answer, response)\n        elif task == 'knowledge-update'"),
     "the user template must contain {question}"),
    (lambda s: s.replace('        template = "ABSTENTION', '        note = "unused"\n        template = "ABSTENTION'),
     "the template note is never filled"),
    (lambda s: s.replace('template = "ABSTENTION', 'other = "ABSTENTION'),
     ".format is called on something other than a template assigned just before"),
    (lambda s: s.replace("prompt = template.format(response, question, answer)",
                         "prompt = template.format(response, question, answer=answer)"),
     ".format takes other than plain argument names"),
])
def test_a_checkout_shaped_otherwise_is_one_line(tmp_path, change, message):
    folder = checkout(tmp_path, change(SHAPED))
    with pytest.raises(DefinitionError) as err:
        load_reference_prompts(folder)
    text = str(err.value)
    assert message in text and "evaluate_qa.py" in text and "\n" not in text
    assert not (folder / "src" / "evaluation" / "EXECUTED").exists()


def test_a_missing_checkout_is_one_line(tmp_path):
    with pytest.raises(DefinitionError, match="does not exist; name the folder of a LongMemEval checkout"):
        load_reference_prompts(tmp_path / "nowhere")
