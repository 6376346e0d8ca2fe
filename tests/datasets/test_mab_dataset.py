"""The `memoryagentbench` dataset end to end on small parquet files of the hub's schema (benchmarks/mab_data.py; never
the real data): each row a conversation of its own, its context cut into chunks said as history that needs no reply
(a wrapper exchange each), then every question in its source's template, answered from the memory the chunks left
(the agent goes back after each); scores per source, the paper's headline (competency = mean of its columns, MCC the
mean of the five ICL sets first, overall the mean of the competencies) with Table 3 beside it; the judged sources
with the mock judge; one call per question for an OpenAI-compatible agent; the reference's own templates read from a
checkout, never run; memory distance from the chunk holding the gold."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.mab.chunking import chunk_text, split_sentences
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._results.headline import evaluate
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._store.events import TurnEvent
from ltm_harness._tokens import get_tokenizer
from ltm_harness.testing import load_script, make_config

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "mab_data.py")
OVERALL = "overall (mean of the competencies)"
RULED = ["ruler_qa1_197K", "ruler_qa2_421K", "eventqa_full", "recsys_redial_full", "detective_qa",
         "factconsolidation_sh_262k", "factconsolidation_mh_262k"]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return gen.write_dataset(tmp_path_factory.mktemp("mab"), questions=3, tokens=1500)


def config(data: Path, examples: int = 14, **args):
    cfg = make_config([{"name": "memoryagentbench", "args": {"data_dir": str(data), "chunk_size": 512, **args}}],
                      span=32000, examples=examples)
    cfg.config.tokenizer = "o200k_base"
    return cfg


def values(out, agent: str) -> dict[str, float | None]:
    quoted = out.agent_summary(agent).datasets[0].headline
    assert quoted is not None
    return {v.name: v.value for v in quoted.values}


async def test_rows_are_played_as_chunks_then_independent_questions_and_scored_per_source(data, tmp_path):
    out = await run_async(config(data), ["oracle", "null", "retrieval"], results=tmp_path)
    events = out.events("oracle")
    assert len(events) == 14 and "memoryagentbench__factconsolidation_mh_262k-1" in events
    turns = [e for e in events["memoryagentbench__ruler_qa1_197K-0"] if isinstance(e, TurnEvent)]
    history = [t for t in turns if t.observed]
    questions = [t for t in turns if not t.observed]
    assert len(history) >= 6 and len(history) % 2 == 0 and all(t.reply == "" for t in history)
    assert [t.role or "user" for t in history[:2]] == ["user", "assistant"]  # the chunk, then the canned reply
    assert history[0].user.startswith("Here is a set of documents I have read")
    assert len(questions) == 3 and all(t.went_back for t in questions)
    assert questions[0].user.endswith("Answer:") and "What is the home town of person 0-0?" in questions[0].user
    results = {r.example_id: r for r in out.results("oracle")}
    by_source: dict[str, list[float]] = {}
    for r in results.values():
        if r.status == "ok":
            by_source.setdefault((r.labels or {})["source"], []).append(r.score)
    for source in RULED + [s for s in by_source if s.startswith("icl_")]:
        assert by_source[source] and all(s == 1.0 for s in by_source[source]), source
    # LongMemEval without a judge: its rule decides what it safely can; summaries wait for a judge
    summary = results["infbench_sum_eng_shots2-0.0"]
    assert summary.status == "unscored" and "--judge" in summary.reasons[0]
    oracle, null = values(out, "oracle"), values(out, "null")
    assert oracle[f"score (rule-decided) · AR"] == 1.0 and oracle["score (rule-decided) · CR"] == 1.0
    assert oracle[f"{OVERALL} (rule-decided)"] is None  # LRU's summaries are undecided without a judge
    assert null["score (rule-decided) · CR"] == 0.0 and null["score (rule-decided) · SH"] == 0.0
    metrics = out.agent_summary("null").datasets[0].metrics or {}
    theirs = out.agent_summary("oracle").datasets[0].metrics or {}
    assert theirs["EventQA: eventqa_recall"] == 1.0 and theirs["recommendation: Recall@10"] == 1.0
    assert metrics["EventQA: eventqa_recall"] == 0.0
    assert metrics["published, not ours: GPT-4o-mini · AR"] == pytest.approx(0.492)
    assert metrics["published, not ours: Mem0 · overall"] == pytest.approx(0.211)
    # memory distance: from the chunk holding the gold, for the sources whose gold is text of the context
    measured = [r for r in results.values() if r.gaps and r.gaps[0].memory_distance is not None]
    assert {(r.labels or {})["source"] for r in measured} >= {"ruler_qa1_197K", "factconsolidation_mh_262k"}
    assert not any((r.labels or {})["source"].startswith("icl_") for r in measured)


async def test_with_the_mock_judge_the_oracle_scores_1_everywhere_and_the_summary_is_fluency_times_f1(data, tmp_path,
                                                                                                        monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(data), ["oracle", "null"], results=tmp_path, judge="mock-judge")
    oracle, null = values(out, "oracle"), values(out, "null")
    assert oracle[OVERALL] == 1.0 and all(v == 1.0 for v in oracle.values())
    results = {r.example_id: r for r in out.results("oracle")}
    summary = results["infbench_sum_eng_shots2-0.0"]
    assert summary.score == 1.0 and len(summary.verdicts) == 3 and "fluency 1 x F1 1.000" in summary.reasons[0]
    assert null["score · Sum"] == 0.0


async def test_an_openai_agent_makes_one_call_per_question(data, tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(data, examples=2, sources=["ruler_qa1_197K", "factconsolidation_sh_262k"]),
                              ["openai:mock"], results=tmp_path)
        assert len(server.requests) == 2 * 3
    summary = out.agent_summary("openai:mock")
    assert summary.usage.calls["agent"] == 6


def test_the_headline_nests_means_column_within_competency_and_source_within_column():
    class R:
        def __init__(self, score: float, **labels: str) -> None:
            self.example_id, self.status, self.score, self.max_score = str(id(self)), "ok", score, 1.0
            self.labels, self.verdicts = labels, []

    results = [R(1.0, competency="TTL", column="MCC", source="a"), *[R(0.0, competency="TTL", column="MCC", source="b")
                                                                     for _ in range(3)],
               R(0.5, competency="TTL", column="Rec", source="r"), R(0.2, competency="CR", column="FC", source="f")]
    spec = Headline(metrics=[Metric(name="all", by="competency", within=["column", "source"]),
                             Metric(name="s", per="competency", within=["column", "source"])])
    got = {v.name: v.value for v in evaluate(spec, results, judged=True)}
    ttl = statistics.fmean([statistics.fmean([1.0, 0.0]), 0.5])  # MCC: its two sets averaged first, not its 4 questions
    assert got["s · TTL"] == pytest.approx(ttl) and got["all"] == pytest.approx(statistics.fmean([ttl, 0.2]))
    assert "within" not in Metric(name="x").model_dump()  # declarations written before it stay as they were


def checkout(folder: Path) -> Path:
    """A MemoryAgentBench checkout of the reference's shape (our own words): `BASE_TEMPLATES` naming a constant,
    with `{{label}}`; running the file would leave a mark."""
    (folder / "utils").mkdir(parents=True)
    (folder / "conversation_creator.py").write_text("")
    mark = f"open({str(folder / 'EXECUTED')!r}, 'w').write('x')\n"
    fam = ("ruler_qa", "longmemeval", "eventqa", "in_context_learning", "recsys_redial", "infbench_sum",
           "detective_qa", "factconsolidation")
    entries = ",\n".join(
        f"    '{f}': {{'system': SYS, 'memorize': 'MEM-{f} {{time_stamp}}\\n<User> {{context}} <Assistant> ok', "
        f"'query': {{'long_context_agent': 'Q-{f}: {{question}} -> {{{{label}}}}', 'rag_agent': 'R: {{question}}'}}}}"
        for f in fam)
    (folder / "utils" / "templates.py").write_text(mark + "SYS = 'system text'\nBASE_TEMPLATES = {\n" + entries + "\n}\n")
    return folder


async def test_the_references_own_templates_are_read_from_a_checkout_never_run(data, tmp_path):
    folder = checkout(tmp_path / "checkout")
    out = await run_async(config(data, examples=1, sources=["ruler_qa1_197K"]), ["oracle"], results=tmp_path / "r",
                          reference_prompts=folder)  # `--reference-prompts PATH`: a MemoryAgentBench checkout
    assert not (folder / "EXECUTED").exists()
    (events,) = out.events("oracle").values()
    turns = [e for e in events if isinstance(e, TurnEvent)]
    history = [t for t in turns if t.observed]
    assert all((t.role or "user") == "user" for t in history)  # the whole wrapper is one line, as the reference's
    assert history[0].user.startswith("MEM-ruler_qa \n<User> ") and history[0].user.endswith(" <Assistant> ok")
    question = next(t for t in turns if not t.observed)
    assert question.user == "Q-ruler_qa: What is the home town of person 0-0? -> {label}"


def test_chunks_pack_whole_sentences_within_the_size():
    text = " ".join(f"Sentence number {i} says something about item {i * 3}." for i in range(400))
    count = get_tokenizer("o200k_base").count
    for size in (64, 512):
        chunks = chunk_text(text, size)
        assert " ".join(c.text for c in chunks) == " ".join(split_sentences(text))
        assert all(c.tokens <= size for c in chunks)
        assert all(abs(count(c.text) - c.tokens) <= len(split_sentences(c.text)) for c in chunks)
    long = "word " * 300 + "end."
    assert [c.tokens > 64 for c in chunk_text(long + " Short one.", 64)] == [True, False]  # alone, never empty first


def test_endoftext_is_packed_as_one_token_as_the_reference_counts_it():
    # 4 + 6 tokens (the special token as one) fit 10, as the reference packs them; counted as ordinary text it
    # would be 4 + 11; the chunk's count stays the ordinary one, what the session's tokenizer counts
    chunks = chunk_text("One two three. Stop here <|endoftext|> now. Last words here.", 10)
    assert [c.text for c in chunks] == ["One two three. Stop here <|endoftext|> now.", "Last words here."]
    assert [c.tokens for c in chunks] == [15, 4]
    assert [c.text for c in chunk_text("Stop <|endofprompt|> here. More.", 4)]  # other special tokens: no error


async def test_paper_chunk_sizes_and_the_limit(data, tmp_path):
    with pytest.raises(DefinitionError, match=r"ask for at most 14 \(--limit 14\)"):
        await run_async(config(data, examples=15), ["null"], results=tmp_path / "a")
    out = await run_async(config(data, examples=2, chunk_size="paper", sources=["eventqa_full",
                                                                                 "factconsolidation_sh_262k"]),
                          ["null"], results=tmp_path / "b")
    chunks = {k: sum(1 for e in v if isinstance(e, TurnEvent) and e.observed and (e.role or "user") == "user")
              for k, v in out.events("null").items()}
    assert chunks["memoryagentbench__eventqa_full-3"] == 1  # 4096 tokens hold the whole row
    assert chunks["memoryagentbench__factconsolidation_sh_262k-0"] > 1  # 512 where the paper used it
    with pytest.raises(DefinitionError, match="'nope' is not a MemoryAgentBench source"):
        await run_async(config(data, sources=["nope"]), ["null"], results=tmp_path / "c")


LME_JUDGE = '''
open(__file__ + ".EXECUTED", "w").write("ran")


def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if not abstention:
        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
            template = "PLAIN Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        elif task == 'temporal-reasoning':
            template = "TIME Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        elif task == 'knowledge-update':
            template = "UPDATE Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        elif task == 'single-session-preference':
            template = "PREF Q={} A={} R={}"
            prompt = template.format(question, answer, response)
        else:
            raise NotImplementedError
    else:
        template = "ABS Q={} E={} R={}"
        prompt = template.format(question, answer, response)
    return prompt
'''


async def test_the_longmemeval_judge_uses_the_checkouts_own_prompts(data, tmp_path, monkeypatch):
    folder = checkout(tmp_path / "checkout")
    script = folder / "llm_based_eval" / "longmem_qa_evaluate.py"
    script.parent.mkdir()
    script.write_text(LME_JUDGE)
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        await run_async(config(data, examples=1, sources=["longmemeval_s*"]), ["oracle"], results=tmp_path / "r",
                        reference_prompts=folder, judge="mock-judge")
        sent = [r["messages"][-1]["content"] for r in server.requests if r["model"] == "mock-judge"
                and not r["messages"][-1]["content"].startswith("Your reply could not be read")]  # the judge's retries
    assert not Path(str(script) + ".EXECUTED").exists()
    # question 0 is single-session-user, 1 temporal-reasoning (benchmarks/mab_data.py), each with its gold
    assert sent[0] == "PLAIN Q=What is the home town of person 0-0? A=Vale 0 0 R=Vale 0 0"
    assert sent[1].startswith("TIME Q=What is the home town of person 0-1? A=Vale 0 1")


async def test_sequential_questions_are_asked_in_one_conversation(data, tmp_path):
    out = await run_async(config(data, examples=1, sources=["ruler_qa1_197K"], questions="sequential"), ["retrieval"],
                          results=tmp_path)
    (events,) = out.events("retrieval").values()
    asked = [e for e in events if isinstance(e, TurnEvent) and not e.observed]
    assert len(asked) == 3 and not any(t.went_back for t in asked)
