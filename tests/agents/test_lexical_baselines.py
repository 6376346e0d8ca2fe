"""The lexical baselines (`retrieval`, `recent:N`) answer by matching what a message asks against the statements they
remember. On the v3 datasets an answer can be found by matching (colours: the latest statement; trigger_response: the
instruction holding the phrase; restaurant: the menu line naming what to order) they score above `null` while what
is needed is within their window, and like `null` once it is not. The other v3 datasets need reasoning, counting,
time or a JSON structure that matching cannot give (jokes, name_list, shopping, locations_directions, sallyanne,
spy_meeting, prospective_memory, chapterbreak)."""

from __future__ import annotations

from pathlib import Path

from ltm_harness import read_run
from ltm_harness._agents.baselines import query_of
from ltm_harness._agents.lexical import LexicalMemory
from ltm_harness.testing import make_config, run_config

MATCHABLE = [{"name": "colours", "args": {"colour_changes": 3}}, {"name": "trigger_response"}, {"name": "restaurant"}]


def test_a_question_is_what_a_message_asks_not_how_to_answer():
    text = "The show is over for today. Where will Ingrid look for the lantern?\nAnswer in JSON with a single word."
    assert query_of(text) == "Where will Ingrid look for the lantern? Answer in JSON with a single word."
    assert query_of("I'm so bored right now.") == "I'm so bored right now."
    memory = LexicalMemory()
    memory.add("Where is my lantern? I put the lantern in the tub.", 12)
    assert [u.text for u in memory.search("lantern", where=lambda u: not u.text.endswith("?"))] == \
        ["I put the lantern in the tub."]


async def test_within_their_window_lexical_baselines_beat_null_on_the_datasets_matching_can_answer(tmp_path: Path):
    cfg = make_config(MATCHABLE, span=8000, examples=3)
    agents = ["null", "retrieval", "recent:64000", "recent:200"]
    await run_config(cfg, tmp_path, agents)
    run = read_run(tmp_path / "t")
    scores = {a: {d.dataset: d.score for d in run.agent_summary(a).datasets} for a in agents}
    for dataset in ("colours", "trigger_response", "restaurant"):
        assert scores["null"][dataset] == 0.0
        assert scores["retrieval"][dataset] > 0.0 and scores["recent:64000"][dataset] > 0.0, (dataset, scores)
    assert scores["retrieval"]["colours"] == 1.0
    # What each answer needs was told long before the last 200 tokens: no better than null there.
    assert scores["recent:200"]["colours"] == scores["recent:200"]["trigger_response"] == 0.0
