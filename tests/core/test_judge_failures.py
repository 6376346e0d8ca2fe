"""A paid run with a judge that fails: the judge is checked before the first turn (run, rescore, import-answers: one
line, exit 2, nothing written); a judge that fails during the run never erases a rule's score (LoCoMo's F1 and
adversarial, LongMemEval's and BEAM's rule-decided answers): only its verdict is unscored, naming the cause; a cause
that fails every call (a refused key, an unknown model, an exhausted quota) stops the run at once, resumable; the end of
the run groups errored and unscored tests by cause. The judge's endpoint is a server the test starts on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ltm_harness._api import run_async
from ltm_harness._cli.main import main
from ltm_harness._errors import LLMError
from ltm_harness._interop.beam.grade import grade as beam_grade
from ltm_harness._interop.beam.probing import BeamQuestion
from ltm_harness._interop.longmemeval.scoring import score_reply
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._results.causes import cause_lines, group_causes
from ltm_harness._scoring.verdict import JudgeUnavailable
from ltm_harness.testing import make_config, serve_local

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


class JudgeEndpoint:
    """An OpenAI-compatible endpoint for a judge: answers every chat call (the first `failing` ones, when given) with
    `status` (and `body`), the others, or all with status 200, with a CORRECT verdict; `models`: what GET /models lists
    (None: no such list, 404)."""

    def __init__(self, status: int = 200, body: dict[str, Any] | None = None,
                 models: list[str] | None = None, failing: int | None = None) -> None:
        self.status, self.body, self.models, self.failing = status, body or {}, models, failing
        self.chats = 0

    async def chat(self, request: web.Request) -> web.Response:
        self.chats += 1
        if self.status != 200 and (self.failing is None or self.chats <= self.failing):
            return web.json_response({"error": {"message": "refused", **self.body}}, status=self.status)
        verdict = json.dumps({"reason": "the same", "correct": True})
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": "judge",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": verdict}}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    async def list_models(self, request: web.Request) -> web.Response:
        if self.models is None:
            return web.json_response({"error": {"message": "no list"}}, status=404)
        return web.json_response({"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                              "owned_by": "t"} for m in self.models]})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.list_models)
        return app


def locomo(judge_url: str, **config: Any):
    return make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO)}}], span=4000, examples=2,
                       judge={"base_url": f"{judge_url}/v1"}, isolated_concurrency=1,
                       llm={"max_attempts": 2, "backoff_initial": 0.0, "backoff_max": 0.01}, **config)


async def cli(argv: list[str]) -> int:
    """The command line in a thread: it runs its own event loop, while the servers run on the test's."""
    return await asyncio.to_thread(main, argv)


@pytest.fixture(autouse=True)
def _no_provider(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# -- checked before the first turn ------------------------------------------------------------------------------------

async def test_a_judge_model_the_endpoint_does_not_list_stops_run_import_and_rescore_before_anything(tmp_path, capsys):
    async with MockLLMServer() as server:
        async def judged(*words: str) -> int:
            return await cli([*words, "--judge", "gpt-4o-mini"])

        cfg = tmp_path / "run.yml"
        cfg.write_text(f"config:\n  run_name: r\n  judge:\n    base_url: {server.url}\n"
                       f"datasets:\n  args:\n    dataset_examples: 2\n  datasets:\n"
                       f"    - name: locomo\n      args:\n        data_file: {LOCOMO}\n")
        results = tmp_path / "results"
        assert await judged("run", "-c", str(cfg), "-a", "oracle", "--results", str(results)) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: the judge (gpt-4o-mini): {server.url} does not list the model 'gpt-4o-mini' "
                              "(it lists ") and err.count("\n") == 1 and "--judge" in err
        assert not results.exists() and not server.requests  # nothing written, no chat call

        answers = tmp_path / "answers.jsonl"
        answers.write_text(json.dumps({"sample_id": "synthetic-1", "question_index": 0, "response": "x"}) + "\n")
        assert await judged("import-answers", str(cfg), str(answers), "--name", "pub", "--results", str(results)) == 2
        assert "does not list the model 'gpt-4o-mini'" in capsys.readouterr().err and not results.exists()

        assert await cli(["run", "-c", str(cfg), "-a", "oracle", "--results", str(results), "--judge", "mock-judge",
                          "--no-report", "--quiet"]) == 0
        capsys.readouterr()
        before = (results / "r" / "oracle" / "results.json").read_bytes()
        assert await judged("rescore", str(results / "r")) == 2
        assert "does not list the model 'gpt-4o-mini'" in capsys.readouterr().err
        assert (results / "r" / "oracle" / "results.json").read_bytes() == before  # the rescore changed nothing


async def test_an_endpoint_without_a_model_list_is_asked_one_token(tmp_path):
    refusing = JudgeEndpoint(status=404, body={"code": "model_not_found"}, models=None)
    async with serve_local(refusing.app()) as url:
        with pytest.raises(LLMError, match=r"^the judge \(j\): .* answered HTTP 404: refused"):
            await run_async(locomo(url), ["oracle"], results=tmp_path, judge="j")
        assert refusing.chats == 1 and not any(tmp_path.iterdir())
        refusing.status = 200  # the same endpoint, now serving the model: the one-token call passes, the run plays
        out = await run_async(locomo(url), ["oracle"], results=tmp_path, judge="j")
    assert all(r.verdicts for r in out.results("oracle") if r.labels != {"category": "adversarial"})


# -- a failing judge never erases a rule's score ----------------------------------------------------------------------

async def test_a_judge_that_keeps_failing_leaves_f1_and_adversarial_scored_and_only_j_unscored(tmp_path):
    down = JudgeEndpoint(status=503, models=["j"])
    async with serve_local(down.app()) as url:
        out = await run_async(locomo(url), ["oracle"], results=tmp_path, judge="j")
    results = out.results("oracle")
    assert len(results) == 11 and all(r.status == "ok" and r.score == 1.0 for r in results)  # F1 as without a judge
    judged = [r for r in results if r.labels != {"category": "adversarial"}]
    assert all(not r.verdicts and any(x.startswith("not judged: judge j: ") and "HTTP 503" in x for x in r.reasons)
               for r in judged)
    assert down.chats == 2 * len(judged)  # each question tried (max_attempts 2), none given up for the others
    summary = out.summary.agents[0]
    assert summary.error is None and summary.datasets[0].score == 1.0
    lines = cause_lines(group_causes(results))
    assert lines == [f"{len(judged)} unscored: judge j: {url}/v1 (model j) answered HTTP 503: refused after 2 "
                     f"attempts ({len(judged)}); rescore with judge='MODEL'"]
    from ltm_harness._report import write_report

    page = write_report([out.path]).html.read_text()
    assert f'<p class="warn causes">{len(judged)} unscored: judge j: ' in page  # the report says it too


async def test_a_judge_without_a_key_is_one_line_before_anything(tmp_path, capsys):
    argv = ["run", "-c", "default", "--datasets", "colours", "--limit", "1", "-a", "oracle", "--judge", "gpt-4o-mini",
            "--results", str(tmp_path)]
    assert await cli(argv) == 2
    assert capsys.readouterr().err == ("error: the judge (gpt-4o-mini): no API key for https://api.openai.com/v1; set "
                                       "OPENAI_API_KEY (or point OPENAI_BASE_URL at a local server, which needs none)\n")
    assert not any(tmp_path.iterdir())


class Refusing:
    """A judge that raises JudgeUnavailable, as the run's judge does when its endpoint fails."""

    model = "j"

    async def grade(self, *args: Any, **kwargs: Any) -> Any:
        raise JudgeUnavailable("judge j: refused", fatal=True)


async def test_longmemeval_and_beam_keep_their_rule_decided_scores_when_the_judge_cannot_be_asked():
    from ltm_harness._interop.longmemeval.data import LMEQuestion
    from datetime import datetime, timezone

    when = datetime(2023, 5, 30, tzinfo=timezone.utc)
    abstention = LMEQuestion(question_id="q_abs", question_type="single-session-user", question="?", answer="none",
                             question_date=when, question_date_text="2023/05/30", sessions=[], answer_session_ids=[])
    scored = await score_reply(abstention, "You never told me that.", Refusing())
    assert (scored.score, scored.by) == (1.0, "rule") and "not judged: judge j: refused" in scored.reason
    open_one = abstention.model_copy(update={"question_id": "q1", "answer": "blue"})
    unscored = await score_reply(open_one, "It might be green.", Refusing())
    assert unscored.score is None and unscored.reason == "not judged: judge j: refused"

    beam = BeamQuestion(ability="abstention", index=0, question="?", rubric=["says it does not know"], gold=None,
                        evidence=[])
    graded = await beam_grade(beam, "You never told me that.", Refusing())
    assert (graded.score, graded.by) == (1.0, "rule") and "not judged: judge j: refused" in graded.reasons
    other = beam.model_copy(update={"ability": "information_extraction"})
    graded = await beam_grade(other, "It is blue.", Refusing())
    assert graded.score is None and graded.reasons == ["not judged: judge j: refused"]


# -- a cause that fails every call stops the run at once, resumable --------------------------------------------------

async def test_a_refused_judge_stops_the_run_after_one_call_and_the_run_resumes_when_it_answers(tmp_path, capsys):
    judge = JudgeEndpoint(status=401, models=["j"])
    async with serve_local(judge.app()) as url:
        cfg = tmp_path / "run.yml"
        cfg.write_text(json.dumps(locomo(url, preflight=False).model_dump(mode="json", exclude_none=True)))
        argv = ["run", "-c", str(cfg), "-a", "oracle", "--judge", "j", "--results", str(tmp_path / "results"),
                "--no-report", "--quiet"]
        assert await cli(argv) == 1  # stopped, resumable
        err = capsys.readouterr().err
        assert judge.chats == 1  # one refusal, then no call: every later verdict would be refused the same way
        assert "error: agent oracle: the run was stopped: judge j: " in err and "answered HTTP 401" in err
        assert " -m ltm_harness run -c " in err.rstrip().splitlines()[-1] and err.rstrip().endswith("--resume")
        # the conversation being judged is not recorded as ended (a resume judges it again), the other not started
        assert "warning: agent oracle: 11 unscored: the run was stopped: judge j:" in err  # never 0: not errored
        stopped = json.loads((tmp_path / "results" / "t" / "oracle" / "results.json").read_text())
        assert {r["status"] for r in stopped} == {"unscored"}  # no F1 of 0.00 for answers the judge could not judge
        judge.status = 200  # the key is mended: the same command with --resume finishes the run
        assert await cli([*argv, "--resume"]) == 0
        results = json.loads((tmp_path / "results" / "t" / "oracle" / "results.json").read_text())
        assert all(r["status"] == "ok" and r["score"] == 1.0 for r in results)
        judged = [r for r in results if r["labels"] != {"category": "adversarial"}]
        assert all(r["verdicts"] for r in judged) and judge.chats == 1 + len(judged)


async def test_an_exhausted_quota_fails_every_call_and_is_not_retried():
    quota = JudgeEndpoint(status=429, body={"code": "insufficient_quota", "type": "insufficient_quota"})
    async with serve_local(quota.app()) as url:
        client = LLMClient(resolve_endpoint("t", f"{url}/v1"), LLMSettings(backoff_initial=0.0))
        with pytest.raises(LLMError) as exc:
            await client.chat("judge", "j", [{"role": "user", "content": "hi"}])
        await client.close()
    assert exc.value.fatal and quota.chats == 1 and "quota is used up" in str(exc.value)


async def test_an_openai_agent_refused_stops_every_session_of_the_run_after_one_call(tmp_path):
    refusing = JudgeEndpoint(status=401, models=["m"])
    async with serve_local(refusing.app()) as url:
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO)}}], span=4000, examples=2,
                          isolated_concurrency=1, preflight=False, openai={"base_url": f"{url}/v1"})
        out = await run_async(cfg, ["openai:m"], results=tmp_path)
    assert refusing.chats == 1  # the second conversation was not played into the same refusal
    assert out.summary.errors and all(r.status == "errored" for r in out.results("openai:m"))


async def test_a_rescore_whose_judge_is_refused_mid_way_changes_nothing(tmp_path, capsys):
    out = await run_async(locomo("http://127.0.0.1:9"), ["oracle"], results=tmp_path)  # no judge: F1 only
    before = (out.path / "oracle" / "results.json").read_bytes()
    judge = JudgeEndpoint(status=401, models=["j"])  # listed, then every call refused
    async with serve_local(judge.app()) as url:
        cfg = out.path / "run_config.json"
        saved = json.loads(cfg.read_text())
        saved["config"]["judge"]["base_url"] = f"{url}/v1"
        cfg.write_text(json.dumps(saved))
        assert await cli(["rescore", str(out.path), "--judge", "j"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: judge j: ") and "HTTP 401" in err and "nothing was re-scored" in err
    assert err.count("\n") == 1 and judge.chats == 1
    assert (out.path / "oracle" / "results.json").read_bytes() == before


async def test_import_answers_stopped_by_its_judge_never_exits_0(tmp_path, capsys):
    judge = JudgeEndpoint(status=403, models=["j"])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"sample_id": "synthetic-1", "question_index": 0, "response": "Pepper"}) + "\n")
    async with serve_local(judge.app()) as url:
        cfg = tmp_path / "locomo.yml"
        cfg.write_text(f"config:\n  run_name: imp\n  judge:\n    base_url: {url}/v1\n"
                       f"datasets:\n  args:\n    dataset_examples: 2\n  datasets:\n"
                       f"    - name: locomo\n      args:\n        data_file: {LOCOMO}\n")
        assert await cli(["import-answers", str(cfg), str(answers), "--name", "pub", "--judge", "j", "--results",
                          str(tmp_path / "results"), "--no-report"]) == 1
    err = capsys.readouterr().err
    assert "error: agent pub: the run was stopped: judge j: " in err and "HTTP 403" in err and judge.chats == 1


DIRECT = '''
from ltm_harness import DatasetInterface, TestExample, TestOutcome


class Direct(DatasetInterface):
    """Asks one question and has the judge grade it in its own program, catching nothing."""

    name = "direct"

    def generate_examples(self, n):
        return [TestExample(dataset_name=self.name, example_id=str(i), script=["What is two and two?"],
                            expected_responses=["4"], is_question=[True]) for i in range(n)]

    async def run(self, example, ctx):
        reply = await ctx.ask("What is two and two?")
        verdict = await ctx.judge.grade("What is two and two?", "4", reply)
        return TestOutcome(verdict.score, 1.0, [verdict.reason])
'''


async def test_a_program_that_asks_the_judge_itself_is_unscored_when_the_judge_fails(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "direct.py").write_text(DIRECT)
    down = JudgeEndpoint(status=500, models=["j"])
    async with serve_local(down.app()) as url:
        cfg = make_config(["direct"], span=1000, dataset_dirs=[str(tmp_path / "ds")], judge={"base_url": f"{url}/v1"},
                          llm={"max_attempts": 1})
        out = await run_async(cfg, ["oracle"], results=tmp_path / "results", judge="j", source=str(tmp_path / "x.yml"))
    result, = out.results("oracle")
    assert result.status == "unscored" and result.reasons[0].startswith("not judged: judge j: ")
