"""Our LLM-judge prompts for LoCoMo's J number: two built-in judge prompts (lenient, strict) that the harness's judge
uses like any other, a verdict of CORRECT/WRONG read as 1/0, an unreadable verdict unscored (JudgeUnparseable),
adversarial questions not judged. The judge is the project's mock LLM server on 127.0.0.1."""

from __future__ import annotations

import pytest

from ltm_harness._interop.locomo.data import LocomoQuestion
from ltm_harness._interop.locomo.judge import JUDGE_PROMPT_NAMES, JudgeVariant, grade, is_judged, judge_prompt
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.judge import LLMJudge, load_judge_prompt
from ltm_harness._scoring.judge_prompt import parse_verdict
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._scoring.verdict import JudgeUnparseable

QUESTION = LocomoQuestion(index=3, question="What is the name of Ada's cat?", answer="Pepper", adversarial_answer=None,
                          evidence=["D1:1"], category=4)


@pytest.fixture
async def mock_llm(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    async with MockLLMServer() as server:
        yield server


def judge(url: str, model: str, variant: JudgeVariant) -> LLMJudge:
    client = LLMClient(resolve_endpoint("the judge", url), LLMSettings(backoff_initial=0.01))
    return LLMJudge(client, model, judge_prompt(variant), use_cache=False)


def test_the_two_prompts_are_built_in_judge_prompts_with_their_criteria():
    lenient, strict = judge_prompt("lenient"), judge_prompt("strict")
    assert JUDGE_PROMPT_NAMES == {"lenient": "locomo-lenient", "strict": "locomo-strict"}
    assert load_judge_prompt("locomo-lenient") == lenient and lenient.sha != strict.sha
    assert "the same thing or the same topic as the gold answer" in lenient.system
    assert "relative time" in lenient.system
    assert "only when it states the facts of the gold answer" in strict.system
    assert "another format" in strict.system and "every part must be there" in strict.system
    for prompt in (lenient, strict):
        assert "CORRECT or WRONG" in prompt.user and '"correct": true or false' in prompt.user
        assert parse_verdict('{"reason": "same cat", "correct": true}').value == 1.0  # what the prompts ask for
        assert parse_verdict('{"reason": "another cat", "correct": false}').value == 0.0


async def test_a_judged_answer_carries_the_prompt_and_the_gold(mock_llm):
    lenient = judge(mock_llm.url, "mock-judge", "lenient")
    right = await grade(lenient, QUESTION, "Her cat is called Pepper.")
    wrong = await grade(lenient, QUESTION, "I think it is Mittens.")
    await lenient.client.close()
    assert (right.score, wrong.score) == (1.0, 0.0)
    assert right.prompt_hash == judge_prompt("lenient").sha and right.question == "What is the name of Ada's cat?"
    system, user = mock_llm.requests[0]["messages"]
    assert system["content"] == judge_prompt("lenient").system
    assert "<question>What is the name of Ada's cat?</question>" in user["content"]
    assert "<expected>Pepper</expected>" in user["content"]


async def test_a_verdict_the_judge_cannot_give_leaves_the_question_unscored(mock_llm):
    strict = judge(mock_llm.url, "mock-judge-garbage", "strict")
    with pytest.raises(JudgeUnparseable):
        await grade(strict, QUESTION, "Pepper")
    await strict.client.close()
    assert mock_llm.stats["requests"] == judge_prompt("strict").parse_attempts


async def test_adversarial_questions_are_not_judged(mock_llm):
    adversarial = QUESTION.model_copy(update={"category": 5, "answer": None, "adversarial_answer": "Mittens"})
    assert is_judged(QUESTION) and not is_judged(adversarial)
    assert not is_judged(QUESTION.model_copy(update={"category": 5, "answer": "No"}))
    lenient = judge(mock_llm.url, "mock-judge", "lenient")
    with pytest.raises(ValueError, match="category 5"):
        await grade(lenient, adversarial, "Not mentioned in the conversation")
    await lenient.client.close()
    assert mock_llm.stats["requests"] == 0
