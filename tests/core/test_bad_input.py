"""A corpus of bad input, through the command line as a user meets it.

Every case writes its files under tmp_path, runs one CLI command in-process and checks what the user
sees: a nonzero exit code, exactly one error line naming the file (or argument) and the field, with a
hint of what to do, and never a traceback (unless `--debug` asks for one).

Agents that answer badly (empty, huge, binary replies) and a judge that answers garbage are run for
real against servers on 127.0.0.1: the run must finish, or stop with one clear line, and the tests hit
must be scored, or marked unscored/errored with the reason in results.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ltm_harness._cli.main import main as cli
from ltm_harness._errors import LTMError
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.layout import slug
from ltm_harness.testing import serve_local

# The "what to do" part of a message: a clause that starts with one of these verbs.
HINT = re.compile(r"(?:^|[;:(]\s*|\bor\s+|,\s+)(?:fix|remove|give|run|set|use|check|add|delete|write|pass|rename|"
                  r"export|upgrade|list|put|renumber|number|start|close|see|replace|vary|validate|make|return)\b")

GOOD = """\
config: {run_name: x}
datasets:
  args: {memory_span: 1000, dataset_examples: 1}
  datasets:
    - name: colours
"""

RUN = ["--results", "results", "--quiet", "--no-report"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case works in its own folder (relative paths, results/ and the LLM cache land there)."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LTM_HTTP_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


# -- file builders ------------------------------------------------------------------------------------------


def put(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def plain_folder(tmp: Path) -> str:
    """A folder that is not what the command wants (empty)."""
    (tmp / "plain").mkdir()
    return str(tmp / "plain")


def config(tmp: Path, text: str = GOOD, name: str = "c.yml") -> str:
    return str(put(tmp / name, text))


def with_config(text: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["run", "-c", config(tmp, text), "-a", "oracle", *RUN]


def prompt_dataset(tmp: Path, prompt: str | bytes | dict[str, Any], examples: str | bytes | dict[str, Any] | None = None,
                   name: str = "facts") -> str:
    """A user dataset folder `ds/` with the prompt file `facts.json` (and its stored sets), and a config running it."""
    def text(v: str | bytes | dict[str, Any]) -> str | bytes:
        return json.dumps(v) if isinstance(v, dict) else v

    put(tmp / "ds" / f"{name}.json", text(prompt))
    sets = {"format": 1, "generated_by": ["hand-written"],
            "sets": [{"content": ["The capital of Varrow is Kestrel."], "questions": ["What is the capital of Varrow?"],
                      "answers": ["Kestrel"]}]}
    put(tmp / "ds" / f"{name}.examples.json", text(sets if examples is None else examples))
    return config(tmp, GOOD.replace("name: colours", f"name: {name}").replace("{run_name: x}",
                                                                                "{run_name: x, dataset_dirs: [ds]}"))


PROMPT = {"content": "Give two facts.", "question": "Ask about each.", "answer": "Answer each."}


def judge_prompt(tmp: Path, content: str | bytes) -> list[str]:
    path = put(tmp / "j.json", content)
    text = GOOD.replace("{run_name: x}", f"{{run_name: x, judge: {{model: mock-judge, base_url: 'http://127.0.0.1:9/v1', "
                                          f"prompt: '{path}'}}}}")
    return ["run", "-c", config(tmp, text), "-a", "oracle", *RUN]


def finished_run(tmp: Path) -> Path:
    """A real finished run, results/x (colours, oracle), to break afterwards."""
    assert cli(["run", "-c", config(tmp), "-a", "oracle", "--results", "results", "--quiet", "--no-report"]) == 0
    return tmp / "results" / "x"


def break_definition(tmp: Path, content: str | bytes | Callable[[dict[str, Any]], None]) -> Path:
    path = finished_run(tmp) / "definitions" / "colours" / "0.def.json"
    if callable(content):
        data = json.loads(path.read_text())
        content(data)
        content = json.dumps(data)
    put(path, content)
    return path


def set_field(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data[key] = value
    return edit


def rescore_after(edit: Callable[[Path], object]) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        edit(tmp)
        return ["rescore", "x", "--results", "results"]
    return setup


def rerun_after(edit: Callable[[Path], object]) -> Callable[[Path], list[str]]:
    """The same config run again over the finished run (--overwrite: its definitions are reused, not regenerated)."""
    def setup(tmp: Path) -> list[str]:
        edit(tmp)
        return ["run", "-c", config(tmp), "-a", "oracle", "--overwrite", *RUN]
    return setup


def report_after(edit: Callable[[Path], object]) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        edit(tmp)
        return ["report", "results/x"]
    return setup


def compare_with_broken_run(tmp: Path) -> list[str]:
    """Two finished runs (the second goes to results/x-2), the first one's summary.json damaged."""
    first = finished_run(tmp)
    finished_run(tmp)  # the same config again: a finished run is kept, this one goes to results/x-2
    assert (tmp / "results" / "x-2" / "summary.json").is_file()
    put(first / "summary.json", "{")
    return ["compare", "results/x-2", "results/x"]


def goodai_source(tmp: Path) -> Path:
    """A folder shaped like the reference's definitions folder: its config.yml (a case adds a dataset folder)."""
    src = tmp / "ref"
    put(src / "config.yml", "config: {run_name: Ref}\ndatasets:\n  args: {memory_span: 1000}\n  datasets:\n"
                            "    - name: colours\n")
    return src


def suite_file(tmp: Path, text: str) -> str:
    return str(put(tmp / "my_suite.py", textwrap.dedent(text)))


# -- the corpus ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    setup: Callable[[Path], list[str]]  # writes the bad input under tmp_path; returns the command line
    names: tuple[str, ...]  # what the error line must name: the file (or argument), and the field when there is one


CASES = [
    # malformed YAML
    Case("yaml-tab-indent", with_config("config:\n\trun_name: x\n"), ("c.yml", "line 2")),
    Case("yaml-unclosed-bracket", with_config("config: {run_name: x\ndatasets: [\n"), ("c.yml", "not valid YAML")),
    Case("yaml-top-level-list", with_config("- colours\n- kv\n"), ("c.yml", "mapping")),
    Case("yaml-empty-file", with_config(""), ("c.yml", "empty")),
    Case("yaml-binary-file", lambda tmp: ["run", "-c", str(put(tmp / "c.yml", b"\xff\xfe\x00\x81config")), *RUN],
         ("c.yml", "UTF-8")),
    Case("yaml-unknown-top-level-key", with_config(GOOD + "agents: [oracle]\n"), ("c.yml", "agents", "unknown field")),
    Case("yaml-misspelt-section", with_config(GOOD.replace("config:", "confg:")), ("c.yml", "confg")),
    # definitions of the config with wrong types
    Case("config-memory-span-abc", with_config(GOOD.replace("memory_span: 1000", "memory_span: abc")),
         ("c.yml", "datasets.args.memory_span")),
    Case("config-dataset-examples-0", with_config(GOOD.replace("dataset_examples: 1", "dataset_examples: 0")),
         ("c.yml", "datasets.args.dataset_examples")),
    Case("config-seed-not-a-number", with_config(GOOD.replace("{run_name: x}", "{run_name: x, seed: abc}")),
         ("c.yml", "config.seed")),
    Case("config-agents-not-a-list", with_config(GOOD.replace("{run_name: x}", "{run_name: x, agents: 7}")),
         ("c.yml", "config.agents")),
    Case("config-dataset-arg-wrong-type", with_config(GOOD + "      args: {memory_span: lots}\n"),
         ("c.yml", "datasets.datasets[0].args.memory_span")),
    Case("config-dataset-arg-unknown", with_config(GOOD + "      args: {colour_chnges: 2}\n"),
         ("c.yml", "datasets.datasets[0].args.colour_chnges")),
    Case("config-tokenizer-unknown", with_config(GOOD.replace("{run_name: x}", "{run_name: x, tokenizer: gpt9}")),
         ("c.yml", "config.tokenizer")),
    Case("config-file-missing", lambda tmp: ["run", "-c", "nothere.yml", *RUN], ("nothere.yml",)),
    Case("config-dataset-dirs-missing", with_config(GOOD.replace("{run_name: x}", "{run_name: x, dataset_dirs: [gone]}")),
         ("c.yml", "config.dataset_dirs[0]", "gone")),
    # unknown names
    Case("unknown-dataset", with_config(GOOD.replace("name: colours", "name: colors")),
         ("c.yml", "datasets.datasets[0].name", "colors")),
    Case("dataset-listed-twice", with_config(GOOD + "    - name: colours\n"), ("c.yml", "datasets.datasets[1]")),
    Case("unknown-agent", lambda tmp: ["run", "-c", config(tmp), "-a", "nobody", *RUN], ("nobody",)),
    Case("agent-recent-not-a-number", lambda tmp: ["run", "-c", config(tmp), "-a", "recent:abc", *RUN],
         ("recent:abc",)),
    Case("agent-baseline-with-argument", lambda tmp: ["run", "-c", config(tmp), "-a", "oracle:3", *RUN],
         ("oracle:3",)),
    Case("agent-http-bad-port", lambda tmp: ["run", "-c", config(tmp), "-a", "http://127.0.0.1:99999/chat", *RUN],
         ("127.0.0.1:99999",)),
    Case("agent-http-no-host", lambda tmp: ["run", "-c", config(tmp), "-a", "http:///chat", *RUN], ("http:///chat",)),
    Case("agent-given-twice", lambda tmp: ["run", "-c", config(tmp), "-a", "null", "-a", "null", *RUN], ("-a",)),
    Case("results-folder-is-a-file", lambda tmp: ["run", "-c", config(tmp), "-a", "oracle", "--results",
                                                  str(put(tmp / "taken", "x")), "--quiet", "--no-report"], ("taken",)),
    Case("openai-key-env-not-set",
         lambda tmp: ["run", "-c", config(tmp, GOOD.replace("{run_name: x}", "{run_name: x, openai: {api_key_env: "
                                                                              "LTM_NO_SUCH_KEY}}")),
                      "-a", "openai:gpt-4o-mini", *RUN],
         ("config.openai.api_key_env", "LTM_NO_SUCH_KEY")),
    Case("judge-prompt-unknown-name",
         with_config(GOOD.replace("{run_name: x}", "{run_name: x, judge: {model: mock-judge, base_url: "
                                                   "'http://127.0.0.1:9/v1', prompt: strict}}")),
         ("strict",)),
    Case("span-too-small", lambda tmp: ["run", "-c", config(tmp), "--span", "100", *RUN], ("--span",)),
    Case("examples-zero", lambda tmp: ["run", "-c", config(tmp), "--examples", "0", *RUN], ("--examples",)),
    Case("estimate-bad-yaml", lambda tmp: ["estimate", "-c", config(tmp, "config: [\n"), "-a", "openai:gpt-4o-mini"],
         ("c.yml",)),
    Case("estimate-reply-tokens-0", lambda tmp: ["estimate", "-c", config(tmp), "-a", "openai:gpt-4o-mini",
                                                 "--reply-tokens", "0"], ("--reply-tokens",)),
    # prompt files of GPT-generated datasets
    Case("prompt-json-syntax", lambda tmp: ["run", "-c", prompt_dataset(tmp, '{"content": "x", "question": '), *RUN],
         ("facts.json", "line 1")),
    Case("prompt-keys-all-misspelt",
         lambda tmp: ["run", "-c", prompt_dataset(tmp, {"contents": "x", "questions": "y", "answers": "z"}), *RUN],
         ("facts.json", "not a prompt file", "content")),
    Case("prompt-named-otherwise", lambda tmp: ["run", "-c", prompt_dataset(tmp, {**PROMPT, "name": "trivia"}), *RUN],
         ("facts.json", "name", "trivia")),
    Case("prompt-missing-field", lambda tmp: ["run", "-c", prompt_dataset(tmp, {"content": "x", "question": "y"}), *RUN],
         ("facts.json", "answer")),
    Case("prompt-wrong-type", lambda tmp: ["run", "-c", prompt_dataset(tmp, {**PROMPT, "content": 5}), *RUN],
         ("facts.json", "content")),
    Case("prompt-unknown-field", lambda tmp: ["run", "-c", prompt_dataset(tmp, {**PROMPT, "scorng": "judge"}), *RUN],
         ("facts.json", "scorng")),
    Case("prompt-bad-scoring", lambda tmp: ["run", "-c", prompt_dataset(tmp, {**PROMPT, "scoring": "vibes"}), *RUN],
         ("facts.json", "scoring")),
    Case("prompt-stored-sets-wrong-type",
         lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, {"format": 1, "sets": [{"content": "one line",
                                                                                        "questions": ["q?"],
                                                                                        "answers": ["a"]}]}), *RUN],
         ("facts.examples.json", "sets.0.content")),
    Case("prompt-stored-sets-json-syntax", lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, "{\"sets\": [}"), *RUN],
         ("facts.examples.json", "line 1")),
    Case("prompt-stored-sets-uneven",
         lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, {"sets": [{"content": ["c"], "questions": ["q1?", "q2?"],
                                                                          "answers": ["a"]}]}), *RUN],
         ("facts.examples.json", "answers")),
    Case("prompt-stored-sets-empty", lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, {"sets": []}), *RUN],
         ("facts.examples.json", "generate")),
    Case("generate-prompt-missing", lambda tmp: ["generate", "nothere.json", "--model", "mock-generator"],
         ("nothere.json",)),
    Case("generate-prompt-not-an-object", lambda tmp: ["generate", str(put(tmp / "p.json", "[1, 2]")), "--model", "m"],
         ("p.json",)),
    Case("generate-n-zero", lambda tmp: ["generate", str(put(tmp / "p.json", json.dumps(PROMPT))), "--model", "m",
                                         "-n", "0"], ("-n",)),
    # judge prompt files
    Case("judge-prompt-missing-placeholder",
         lambda tmp: judge_prompt(tmp, json.dumps({"name": "j", "system": "s", "user": "{question} {response}"})),
         ("j.json", "{expected}")),
    Case("judge-prompt-stray-brace",
         lambda tmp: judge_prompt(tmp, json.dumps({"name": "j", "system": "s",
                                                   "user": "{question} {expected} {response} {oops}"})),
         ("j.json", "brace")),
    Case("judge-prompt-json-syntax", lambda tmp: judge_prompt(tmp, "{\"name\": \"j\",,}"), ("j.json", "line 1")),
    Case("judge-prompt-binary", lambda tmp: judge_prompt(tmp, b"\x89PNG\r\n\x1a\n\x00\x00"), ("j.json", "UTF-8")),
    Case("judge-prompt-wrong-type",
         lambda tmp: judge_prompt(tmp, json.dumps({"name": "j", "system": "s", "parse_attempts": "three",
                                                   "user": "{question} {expected} {response}"})),
         ("j.json", "parse_attempts")),
    # run folders: definitions edited by hand, then rescore or run again
    Case("definition-wrong-type-rescore", rescore_after(lambda tmp: break_definition(tmp, set_field("script", "hi"))),
         ("0.def.json", "script")),
    Case("definition-wrong-type-rerun", rerun_after(lambda tmp: break_definition(tmp, set_field("is_question", 3))),
         ("0.def.json", "is_question")),
    Case("definition-uneven-lines-rerun",
         rerun_after(lambda tmp: break_definition(tmp, set_field("is_question", [True]))), ("0.def.json", "is_question")),
    Case("definition-json-syntax-rerun", rerun_after(lambda tmp: break_definition(tmp, "{\"script\": [")),
         ("0.def.json", "JSON")),
    Case("definition-binary-rescore", rescore_after(lambda tmp: break_definition(tmp, b"\xff\x00\xfe")),
         ("0.def.json", "UTF-8")),
    Case("definition-missing-rerun", rerun_after(lambda tmp: break_definition(tmp, "").unlink()), ("0.def.json",)),
    Case("definitions-manifest-garbage-rerun",
         rerun_after(lambda tmp: put(finished_run(tmp) / "definitions" / "manifest.json", "not json")),
         ("manifest.json",)),
    Case("definitions-manifest-binary-rerun",
         rerun_after(lambda tmp: put(finished_run(tmp) / "definitions" / "manifest.json", b"\xff\xfe\x00")),
         ("manifest.json",)),
    # rescore, report and compare on what is not a finished run
    Case("rescore-missing-run", lambda tmp: ["rescore", "nosuchrun", "--results", "results"], ("nosuchrun",)),
    Case("rescore-not-a-run", lambda tmp: ["rescore", plain_folder(tmp)], ("plain",)),
    Case("rescore-summary-not-json", rescore_after(lambda tmp: put(finished_run(tmp) / "summary.json", "{oops")),
         ("summary.json", "JSON")),
    Case("rescore-summary-missing", rescore_after(lambda tmp: (finished_run(tmp) / "summary.json").unlink()),
         ("summary.json", "did not finish")),
    Case("rescore-run-config-wrong-type",
         rescore_after(lambda tmp: put(finished_run(tmp) / "run_config.json", json.dumps({"config": 3}))),
         ("run_config.json", "config")),
    Case("report-not-a-run", lambda tmp: ["report", plain_folder(tmp)], ("plain",)),
    Case("report-interrupted-run", report_after(lambda tmp: (finished_run(tmp) / "summary.json").unlink()),
         ("results/x", "summary.json")),
    Case("report-missing-run", lambda tmp: ["report", "nosuchrun", "--results", "results"], ("nosuchrun",)),
    Case("report-summary-not-json", report_after(lambda tmp: put(finished_run(tmp) / "summary.json", "[1,")),
         ("summary.json", "line 1")),
    Case("report-summary-binary", report_after(lambda tmp: put(finished_run(tmp) / "summary.json", b"\xff\xfe")),
         ("summary.json", "UTF-8")),
    Case("report-summary-wrong-type",
         report_after(lambda tmp: put(finished_run(tmp) / "summary.json", json.dumps({"run_name": 3, "agents": []}))),
         ("summary.json", "run_name")),
    Case("report-results-not-json", report_after(lambda tmp: put(finished_run(tmp) / "oracle" / "results.json", "[{")),
         ("results.json",)),
    Case("report-results-wrong-type",
         report_after(lambda tmp: put(finished_run(tmp) / "oracle" / "results.json", json.dumps([{"dataset": 1}]))),
         ("results.json", "test 0")),
    Case("compare-summary-not-json", compare_with_broken_run, ("x", "summary.json")),
    Case("compare-missing-run", lambda tmp: ["compare", "nosuchrun", "other", "--results", "results"], ("nosuchrun",)),
    # import-goodai on what is not the reference's definitions folder
    Case("import-goodai-empty-folder", lambda tmp: ["import-goodai", plain_folder(tmp),
                                                    "--span", "1000"], ("plain",)),
    Case("import-goodai-a-file", lambda tmp: ["import-goodai", str(put(tmp / "defs.txt", "x"))], ("defs.txt",)),
    Case("import-goodai-bad-config", lambda tmp: ["import-goodai", str(put(tmp / "ref" / "config.yml", "a: [").parent)],
         ("config.yml",)),
    Case("import-goodai-no-span", lambda tmp: ["import-goodai", plain_folder(tmp)],
         ("plain", "--span")),
    Case("import-goodai-broken-definition",
         lambda tmp: ["import-goodai", str(put(goodai_source(tmp) / "Colours" / "0.def.json", "{\"script\": 3}").parents[1])],
         ("0.def.json",)),
    # aiq and environments
    Case("aiq-unknown-env", lambda tmp: ["aiq", "--test", "maze", "--quiet"], ("maze",)),
    Case("aiq-env-param-wrong-type", lambda tmp: ["aiq", "--test", "bandit,arms=abc", "--quiet"], ("bandit", "arms")),
    Case("aiq-env-param-unknown", lambda tmp: ["aiq", "--test", "bandit,colour=3", "--quiet"], ("bandit", "colour")),
    Case("aiq-sub-test-unknown", lambda tmp: ["aiq", "--test", "keydoor,env_name=99x99", "--quiet"],
         ("keydoor", "env_name")),
    Case("aiq-not-key-value", lambda tmp: ["aiq", "--test", "bandit,arms", "--quiet"], ("bandit,arms",)),
    Case("aiq-seed-param", lambda tmp: ["aiq", "--test", "bandit,seed=3", "--quiet"], ("bandit,seed=3", "--seed")),
    Case("aiq-trials-zero", lambda tmp: ["aiq", "--trials", "0", "--quiet"], ("--trials",)),
    # aiVLE suites
    Case("suite-module-not-found", lambda tmp: ["suite", "no_such_module:suite"], ("no_such_module",)),
    Case("suite-file-not-found", lambda tmp: ["suite", "nothere.py:suite"], ("nothere.py",)),
    Case("suite-file-syntax-error", lambda tmp: ["suite", suite_file(tmp, "def broken(:\n") + ":suite"], ("my_suite.py",)),
    Case("suite-name-not-in-module", lambda tmp: ["suite", suite_file(tmp, "x = 1\n") + ":suite"],
         ("my_suite.py", "suite")),
    Case("suite-not-a-suite", lambda tmp: ["suite", suite_file(tmp, "suite = 42\n") + ":suite"], ("my_suite.py", "suite")),
    Case("suite-unknown-agent", lambda tmp: ["suite", "ltm_harness.aivle.examples:suite", "-a", "nobody"], ("nobody",)),
    # syllabus files that do not parse (the rules are checked in test_syllabus_rule_violations below)
    Case("syllabus-json-syntax", lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", "[{\"$phase\": "))],
         ("s.json", "line 1")),
    Case("syllabus-binary", lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", b"\xff\xfe\x00"))],
         ("s.json", "UTF-8")),
    Case("syllabus-not-found", lambda tmp: ["syllabus", "validate", "nothere"], ("nothere",)),
    Case("syllabus-unknown-field",
         lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", json.dumps([{"$phase": "1.train", "x": 1}])))],
         ("s.json", "instruction 0", "'x'")),
    Case("syllabus-count-wrong-type",
         lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", json.dumps(
             [{"$phase": "1.train"}, {"$repeat": {"$episode": "bandit"}, "count": "many"}])))],
         ("s.json", "instruction 1", "count")),
    Case("syllabus-bad-phase-label",
         lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", json.dumps([{"$phase": "train-1"}])))],
         ("s.json", "instruction 0", "phase")),
    Case("syllabus-run-ste-missing", lambda tmp: ["syllabus", "run", "cl-bandit", "-a", "null", "--ste", "noexperts",
                                                  "--out", "l2m"], ("noexperts",)),
    Case("syllabus-metrics-missing-folder", lambda tmp: ["syllabus", "metrics", "nologs"], ("nologs",)),
    Case("syllabus-metrics-no-logs", lambda tmp: ["syllabus", "metrics", plain_folder(tmp)],
         ("plain",)),
]


# -- issue 13: bounded, contained, validated -------------------------------------------------------------------

def cfg_with(section: str) -> Callable[[Path], list[str]]:
    """GOOD with `section` added to its `config:` mapping."""
    return with_config(GOOD.replace("{run_name: x}", "{run_name: x, " + section + "}"))


def args_with(text: str) -> Callable[[Path], list[str]]:
    return with_config(GOOD.replace("{memory_span: 1000, dataset_examples: 1}", "{" + text + "}"))


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def deep(n: int = 5000) -> str:
    return "[" * n + "]" * n


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")) + GOOD


def edit_manifest(entry: str) -> Callable[[Path], object]:
    def edit(tmp: Path) -> None:
        path = finished_run(tmp) / "definitions" / "manifest.json"
        data = json.loads(path.read_text())
        data["tests"][0] = entry
        put(path, json.dumps(data))
    return edit


def edit_result(**fields: Any) -> Callable[[Path], object]:
    def edit(tmp: Path) -> None:
        path = finished_run(tmp) / "oracle" / "results.json"
        data = json.loads(path.read_text())
        data[0].update(fields)
        put(path, json.dumps(data).replace('"__nan__"', "NaN"))
    return edit


def user_dataset(tmp: Path, body: str, name: str = "mine") -> str:
    put(tmp / "ds" / f"{name}.py", textwrap.dedent(body))
    return config(tmp, GOOD.replace("name: colours", f"name: {name}").replace("{run_name: x}",
                                                                              "{run_name: x, dataset_dirs: [ds]}"))


DATASET_NAMED = '''
from ltm_harness import DatasetInterface
class Mine(DatasetInterface):
    name = {name!r}
    def generate_examples(self, n):
        return [self.make_example({eid!r}, ["Remember 7.", "What number?"], [False, True], ["7"]) for i in range(n)]
    def evaluate_correct(self, q, r, e):
        return 1.0, 1.0, []
'''

SYS_EXIT = "import sys\nsys.exit(0)\n"

# a user dataset whose generate_examples returns `body` (n: the number of tests asked for)
DATASET_RETURNS = '''
from ltm_harness import DatasetInterface
class Mine(DatasetInterface):
    name = "mine"
    def generate_examples(self, n):
        {body}
    def evaluate_correct(self, q, r, e):
        return 1.0, 1.0, []
'''


def dataset_returning(body: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_RETURNS.format(body=body)), *RUN]


LONG_INT = "9" * 5000  # more digits than Python turns into an int from text (4,300)

HARDENING_CASES = [
    # limits on every count, size and time (refused in one line, never a hang or an overflow)
    Case("limit-dataset-examples-huge", args_with("memory_span: 1000, dataset_examples: 1000000000000"),
         ("c.yml", "datasets.args.dataset_examples", "less than or equal")),
    Case("limit-memory-span-huge", args_with("memory_span: 1000000000000000, dataset_examples: 1"),
         ("c.yml", "datasets.args.memory_span")),
    Case("limit-dataset-examples-bool", args_with("memory_span: 1000, dataset_examples: true"),
         ("c.yml", "datasets.args.dataset_examples", "integer")),
    Case("limit-memory-span-bool", args_with("memory_span: true, dataset_examples: 1"), ("c.yml", "datasets.args.memory_span")),
    Case("limit-memory-span-string-number", args_with("memory_span: '1000', dataset_examples: 1"),
         ("c.yml", "datasets.args.memory_span")),
    Case("limit-per-dataset-examples-huge", with_config(GOOD + "      args: {dataset_examples: 99999999999}\n"),
         ("c.yml", "datasets.datasets[0].args.dataset_examples")),
    Case("limit-per-dataset-examples-bool", with_config(GOOD + "      args: {dataset_examples: true}\n"),
         ("c.yml", "datasets.datasets[0].args.dataset_examples")),
    Case("limit-seconds-per-turn-huge", cfg_with("seconds_per_turn: 1.0e+300"), ("c.yml", "config.seconds_per_turn")),
    Case("limit-seconds-per-turn-inf", cfg_with("seconds_per_turn: .inf"), ("c.yml", "config.seconds_per_turn")),
    Case("limit-seconds-per-turn-nan", cfg_with("seconds_per_turn: .nan"), ("c.yml", "config.seconds_per_turn")),
    Case("limit-start-time-far", cfg_with("start_time: 9999-12-31T00:00:00Z"), ("c.yml", "config.start_time")),
    Case("limit-start-time-early", cfg_with("start_time: 0001-01-01T00:00:00Z"), ("c.yml", "config.start_time")),
    Case("limit-seed-huge", cfg_with("seed: 100000000000000000000000000000"), ("c.yml", "config.seed")),
    Case("limit-seed-bool", cfg_with("seed: true"), ("c.yml", "config.seed")),
    Case("limit-max-message-tokens-huge", cfg_with("max_message_tokens: 1000000000000"), ("c.yml", "config.max_message_tokens")),
    Case("limit-turn-attempts-huge", cfg_with("turns: {attempts: 1000000000}"), ("c.yml", "config.turns.attempts")),
    Case("limit-turn-timeout-huge", cfg_with("turns: {timeout: 1.0e+300}"), ("c.yml", "config.turns.timeout")),
    Case("limit-turn-attempts-bool", cfg_with("turns: {attempts: true}"), ("c.yml", "config.turns.attempts")),
    Case("limit-llm-timeout-huge", cfg_with("llm: {timeout: 1.0e+300}"), ("c.yml", "config.llm.timeout")),
    Case("limit-llm-attempts-bool", cfg_with("llm: {max_attempts: false}"), ("c.yml", "config.llm.max_attempts")),
    Case("limit-llm-reply-bytes-huge", cfg_with("llm: {max_reply_bytes: 100000000000000}"), ("c.yml", "config.llm.max_reply_bytes")),
    Case("limit-http-reply-bytes-tiny", cfg_with("http: {max_reply_bytes: 5}"), ("c.yml", "config.http.max_reply_bytes")),
    Case("limit-isolated-concurrency-huge", cfg_with("isolated_concurrency: 1000000000"), ("c.yml", "config.isolated_concurrency")),
    Case("limit-watchdog-inf", cfg_with("watchdog: .inf"), ("c.yml", "config.watchdog")),
    Case("limit-isolated-not-bool", cfg_with("isolated: 3"), ("c.yml", "config.isolated")),
    Case("limit-flag-examples-huge", lambda tmp: ["run", "-c", config(tmp), "--examples", "10000000000", *RUN], ("--examples",)),
    Case("limit-flag-span-huge", lambda tmp: ["run", "-c", config(tmp), "--span", "10000000000000", *RUN], ("--span",)),
    Case("limit-flag-seed-huge", lambda tmp: ["run", "-c", config(tmp), "--seed", str(10**30), *RUN], ("--seed",)),
    Case("limit-aiq-trials-huge", lambda tmp: ["aiq", "--test", "bandit", "--trials", "1000000000000", "--quiet"], ("--trials",)),
    Case("limit-generate-n-huge", lambda tmp: ["generate", str(put(tmp / "p.json", json.dumps(PROMPT))), "--model", "m",
                                               "-n", "100000000000"], ("-n",)),
    Case("limit-estimate-reply-tokens-huge", lambda tmp: ["estimate", "-c", config(tmp), "-a", "openai:gpt-4o-mini",
                                                          "--reply-tokens", "100000000000000"], ("--reply-tokens",)),
    Case("limit-syllabus-count-huge",
         lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", json.dumps(
             [{"$phase": "1.train"}, {"$repeat": {"$episode": "bandit"}, "count": 10**15}])))],
         ("s.json", "instruction 1", "count")),
    Case("limit-syllabus-count-bool",
         lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", json.dumps(
             [{"$phase": "1.train"}, {"$repeat": {"$episode": "bandit"}, "count": True}])))],
         ("s.json", "instruction 1", "count")),
    # YAML: duplicate keys, alias bombs, depth, short echoes
    Case("yaml-duplicate-top-level-key", with_config("config: {run_name: y}\n" + GOOD), ("c.yml", "'config'", "twice")),
    Case("yaml-duplicate-nested-key", with_config(GOOD.replace("{run_name: x}", "{run_name: x, run_name: y}")),
         ("c.yml", "'run_name'", "twice")),
    Case("yaml-duplicate-dataset-arg", with_config(GOOD.replace("dataset_examples: 1}", "dataset_examples: 1, memory_span: 2000}")),
         ("c.yml", "memory_span", "twice")),
    Case("yaml-alias-bomb", with_config(BOMB), ("c.yml", "alias bomb")),
    Case("yaml-recursive-alias", with_config("loop: &a [*a]\n" + GOOD), ("c.yml", "recursive alias")),
    Case("yaml-deeply-nested", with_config("x: " + deep(3000) + "\n" + GOOD), ("c.yml",)),
    Case("yaml-huge-value-echo", with_config(GOOD.replace("{run_name: x}", "{run_name: x, seed: " + "9" * 5 + "z" * 200_000 + "}")),
         ("c.yml", "config.seed", "characters")),
    Case("yaml-fifo-config", lambda tmp: ["run", "-c", str(fifo(tmp / "c.yml")), *RUN], ("c.yml", "FIFO")),
    Case("yaml-device-config", lambda tmp: ["run", "-c", "/dev/zero", *RUN], ("/dev/zero", "not a regular file")),
    # JSON nested too deeply, anywhere JSON is read
    Case("json-deep-prompt-file", lambda tmp: ["run", "-c", prompt_dataset(tmp, '{"content": ' + deep() + "}"), *RUN],
         ("facts",)),
    Case("json-deep-stored-sets", lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, '{"sets": ' + deep() + "}"), *RUN],
         ("facts.examples.json", "nested deeper")),
    Case("json-deep-judge-prompt", lambda tmp: judge_prompt(tmp, '{"name": ' + deep() + "}"), ("j.json", "nested deeper")),
    Case("json-deep-syllabus", lambda tmp: ["syllabus", "validate", str(put(tmp / "s.json", deep()))], ("s.json", "nested deeper")),
    Case("json-deep-summary", report_after(lambda tmp: put(finished_run(tmp) / "summary.json", '{"a": ' + deep() + "}")),
         ("summary.json", "nested deeper")),
    Case("json-deep-results", report_after(lambda tmp: put(finished_run(tmp) / "oracle" / "results.json", deep())),
         ("results.json", "nested deeper")),
    Case("json-deep-run-config", rescore_after(lambda tmp: put(finished_run(tmp) / "run_config.json", deep())),
         ("run_config.json", "nested deeper")),
    Case("json-deep-definition", rescore_after(lambda tmp: break_definition(tmp, '{"script": ' + deep() + "}")),
         ("0.def.json",)),
    Case("json-deep-manifest", rerun_after(lambda tmp: put(finished_run(tmp) / "definitions" / "manifest.json", deep())),
         ("manifest.json",)),
    # special files: refused before they are opened (a FIFO would block forever)
    Case("fifo-judge-prompt", lambda tmp: judge_prompt(tmp, "{}") if fifo(tmp / "j.json") is None else
         ["run", "-c", config(tmp, GOOD.replace("{run_name: x}", "{run_name: x, judge: {model: mock-judge, base_url: "
                                                  f"'http://127.0.0.1:9/v1', prompt: '{tmp / 'j.json'}'}}}}")),
          "-a", "oracle", *RUN], ("j.json", "FIFO")),
    Case("fifo-definition", rerun_after(lambda tmp: fifo(break_definition(tmp, "{}"))), ("0.def.json", "FIFO")),
    Case("fifo-manifest", rerun_after(lambda tmp: fifo(finished_run(tmp) / "definitions" / "manifest.json")),
         ("manifest.json", "FIFO")),
    Case("fifo-summary", report_after(lambda tmp: fifo(finished_run(tmp) / "summary.json")), ("summary.json",)),
    Case("fifo-stored-sets", lambda tmp: (prompt_dataset(tmp, PROMPT), fifo(tmp / "ds" / "facts.examples.json"),
                                          ["run", "-c", str(tmp / "c.yml"), *RUN])[2], ("facts.examples.json", "FIFO")),
    Case("fifo-run-config", rescore_after(lambda tmp: fifo(finished_run(tmp) / "run_config.json")),
         ("run_config.json", "FIFO")),
    Case("fifo-syllabus", lambda tmp: ["syllabus", "validate", str(fifo(tmp / "s.json"))], ("s.json",)),
    # names that become paths, and paths that must stay inside their folder
    Case("manifest-entry-escapes", rerun_after(edit_manifest("colours/../../../../outside")), ("manifest.json", "example id")),
    Case("manifest-entry-dotdot-dataset", rerun_after(edit_manifest("../0")), ("manifest.json", "dataset name")),
    Case("manifest-entry-no-slash", rerun_after(edit_manifest("colours")), ("manifest.json", "example id")),
    Case("manifest-entry-absolute", rerun_after(edit_manifest("colours//etc/passwd")), ("manifest.json", "example id")),
    Case("definition-symlink-outside",
         rerun_after(lambda tmp: (lambda p: (p.unlink(), p.symlink_to(put(tmp / "outside.json", "{}"))))(break_definition(tmp, "{}"))),
         ("0.def.json", "outside")),
    Case("dataset-name-escapes", lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_NAMED.format(name="../evil", eid="0"),
                                                                          ), *RUN], ("dataset name", "'../evil'")),
    Case("example-id-escapes", lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_NAMED.format(name="mine", eid="../../x")),
                                            *RUN], ("example id", "'../../x'")),
    Case("example-id-too-long", lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_NAMED.format(name="mine", eid="x" * 300)),
                                             *RUN], ("example id", "characters")),
    # code named only by a results folder is never run
    Case("rescore-dataset-dir-missing", rescore_after(lambda tmp: finished_run(tmp)) if False else
         lambda tmp: (finished_run(tmp), ["rescore", "x", "--results", "results", "--dataset-dir", "gone"])[1],
         ("--dataset-dir", "gone")),
    # scores in results files are validated on read
    Case("report-score-above-max", report_after(edit_result(score=7.0, max_score=1.0)), ("results.json", "outside")),
    Case("report-score-negative", report_after(edit_result(score=-1.0)), ("results.json", "outside")),
    Case("report-max-score-zero", report_after(edit_result(score=0.0, max_score=0.0)), ("results.json", "max_score")),
    Case("report-score-nan", report_after(edit_result(score="__nan__")), ("results.json", "finite")),
    Case("report-score-string", report_after(edit_result(score="high")), ("results.json", "score")),
    # user code that calls sys.exit on import, and two datasets of one name
    Case("dataset-module-sys-exit", lambda tmp: ["run", "-c", user_dataset(tmp, SYS_EXIT), *RUN], ("mine.py", "sys.exit")),
    Case("agent-file-sys-exit", lambda tmp: ["run", "-c", config(tmp), "-a", f"{put(tmp / 'ag.py', SYS_EXIT)}:Agent", *RUN],
         ("ag.py", "sys.exit")),
    Case("dataset-name-used-twice",
         lambda tmp: (put(tmp / "ds" / "other.py", textwrap.dedent(DATASET_NAMED.format(name="mine", eid="0"))),
                      ["run", "-c", user_dataset(tmp, DATASET_NAMED.format(name="mine", eid="0")), *RUN])[1],
         ("mine", "rename one")),
]

# issue 22: inputs that still ended in a traceback, and their siblings
ISSUE_22_CASES = [
    Case("dataset-returns-dicts", dataset_returning("return [{'script': ['Hi.'], 'is_question': [False]}] * n"),
         ("mine.py", "dataset 'mine'", "a dict as test 0", "make_example")),
    Case("dataset-returns-none", dataset_returning("return None"),
         ("mine.py", "generate_examples returned None", "make_example")),
    Case("dataset-empty-script", dataset_returning("return [self.make_example(i, [], [], []) for i in range(n)]"),
         ("mine.py", "script is empty")),
    Case("prompt-stored-sets-huge-int",
         lambda tmp: ["run", "-c", prompt_dataset(tmp, PROMPT, '{"sets": [{"content": ["c"], "questions": ["q?"], '
                                                               f'"answers": [{LONG_INT}]}}]}}'), *RUN],
         ("facts.examples.json", "line 1", "5,000 digits")),
    Case("agent-http-unclosed-ipv6", lambda tmp: ["run", "-c", config(tmp), "-a", "http://[::1/chat", *RUN],
         ("http://[::1/chat", "IPv6")),
    # siblings: what user code returns or raises, integers too long to read, URLs that do not parse
    Case("dataset-generator-raises",
         dataset_returning("return (self.make_example(i, ['Hi.'], [False], []) if i == 0 else 1 / 0 for i in range(n + 1))"),
         ("mine.py", "ZeroDivisionError")),
    Case("dataset-returns-a-number", dataset_returning("return 7"), ("mine.py", "returned an int", "not a list")),
    Case("dataset-returns-too-few", dataset_returning("return []"), ("mine.py", "0 tests instead of 1")),
    Case("dataset-generate-raises", dataset_returning("return 1 / 0"), ("mine.py", "ZeroDivisionError: division by zero")),
    Case("dataset-example-mutated",
         dataset_returning("e = [self.make_example(i, ['Hi.'], [False], []) for i in range(n)]; e[0].script = 'Hi.'; "
                           "return e"), ("mine.py", "test 0", "script")),
    Case("dataset-example-not-json",
         dataset_returning("return [self.make_example(i, ['Hi.'], [True], [object()]) for i in range(n)]"),
         ("mine.py", "test 0", "JSON")),
    Case("dataset-example-huge-int",
         dataset_returning("import sys; sys.set_int_max_str_digits(0); big = int('9' * 5000); "
                           "sys.set_int_max_str_digits(4300); "
                           "return [self.make_example(i, ['Hi.'], [True], [big]) for i in range(n)]"),
         ("mine.py", "test 0", "4,300 digits")),
    Case("dataset-example-other-dataset",
         dataset_returning("return [self.make_example(i, ['Hi.'], [False], []).model_copy(update={'dataset_name': "
                           "'other'}) for i in range(n)]"),
         ("mine.py", "'other'", "dataset_name")),
    Case("dataset-duplicate-ids",
         lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_RETURNS.format(
             body="return [self.make_example(0, ['Hi.'], [False], []) for i in range(n)]")), "--examples", "2", *RUN],
         ("mine.py", "tests 0 and 1", "'0'")),
    Case("dataset-source-files-not-a-list",
         lambda tmp: ["run", "-c", user_dataset(tmp, DATASET_RETURNS.format(body="return []") +
                                                "    def source_files(self):\n        return 'data.txt'\n"), *RUN],
         ("mine.py", "source_files()", "a str")),
    Case("yaml-huge-int", with_config(GOOD.replace("{run_name: x}", "{run_name: x, seed: " + LONG_INT + "}")),
         ("c.yml", "line 1", "5,000 digits")),
    Case("prompt-file-huge-int", lambda tmp: ["run", "-c", prompt_dataset(tmp, '{"content": ' + LONG_INT + "}"), *RUN],
         ("facts.json", "5,000 digits")),
    Case("agent-http-ipv6-not-an-address", lambda tmp: ["run", "-c", config(tmp), "-a", "http://[zz]/chat", *RUN],
         ("http://[zz]/chat", "IPv6")),
    Case("agent-http-unclosed-ipv6-secret-hidden",
         lambda tmp: ["run", "-c", config(tmp), "-a", "http://me:hunter22@[::1/chat?key=hunter33", *RUN],
         ("[::1/chat", "IPv6")),
    Case("openai-base-url-unclosed-ipv6",
         lambda tmp: ["run", "-c", config(tmp, GOOD.replace("{run_name: x}", "{run_name: x, openai: {base_url: "
                                                                              "'http://[::1/v1'}}")),
                      "-a", "openai:gpt-4o-mini", *RUN],
         ("openai:gpt-4o-mini", "http://[::1/v1", "IPv6")),
    Case("judge-base-url-bad-port",
         with_config(GOOD.replace("{run_name: x}", "{run_name: x, judge: {model: mock-judge, base_url: "
                                                   "'http://127.0.0.1:99999/v1'}}")),
         ("judge", "127.0.0.1:99999", "port")),
]
CASES += HARDENING_CASES + ISSUE_22_CASES


ISSUE_22_INPUTS = ["dataset-returns-dicts", "dataset-returns-none", "dataset-empty-script", "prompt-stored-sets-huge-int",
                   "agent-http-unclosed-ipv6", "agent-http-unclosed-ipv6-secret-hidden"]


@pytest.mark.parametrize("case_id", ISSUE_22_INPUTS)
def test_issue_22_inputs_exit_2_in_one_line_from_a_shell(case_id: str, tmp_path: Path) -> None:
    """The inputs of issue 22 as a user meets them (`python -m ltm_harness` in a shell): exit status 2, as every config
    or definition error, one line on stderr, nothing else, no secret of the URL."""
    case = next(c for c in CASES if c.id == case_id)
    argv = case.setup(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "LTM_HTTP"))}
    done = subprocess.run([sys.executable, "-m", "ltm_harness", *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and not done.stdout.strip(), (done.returncode, done.stdout, done.stderr)
    line = error_line(done.stderr)
    assert all(name in line for name in case.names), line
    assert "hunter" not in done.stderr  # the password and the key of the URL are never shown


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error_line(text: str) -> str:
    """The one non-empty line of `text`, without its `error: ` prefix."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{text}"
    assert lines[0].startswith("error: "), lines[0]
    return lines[0].removeprefix("error: ")


def check_hint(line: str) -> None:
    assert HINT.search(line), f"no hint of what to do: {line!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_clear_line(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = case.setup(tmp_path)
    capsys.readouterr()  # what setting up printed
    code, out, err = run_cli(argv, capsys)
    assert "Traceback" not in out + err
    assert code != 0, f"accepted: {out}{err}"
    line = error_line(err)
    for name in case.names:
        assert name in line, f"{name!r} is not named in {line!r}"
    check_hint(line)
    assert not out.strip(), f"printed besides the error: {out!r}"
    assert len(line) < 1000, f"the error line echoes too much: {len(line)} characters"


def test_the_corpus_is_large_and_its_ids_unique() -> None:
    assert len(CASES) >= 36 and len({c.id for c in CASES}) == len(CASES)
    assert len(HARDENING_CASES) >= 60


DEBUG_CASES = ["yaml-tab-indent", "unknown-dataset", "prompt-wrong-type", "definition-wrong-type-rescore",
               "rescore-summary-missing", "report-summary-not-json", "import-goodai-a-file", "syllabus-unknown-field",
               "aiq-unknown-env", "suite-not-a-suite"]


@pytest.mark.parametrize("case_id", DEBUG_CASES)
def test_debug_raises_the_error_instead(case_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--debug` (before the command, or after it) lets the exception through, where Python shows its traceback."""
    case = next(c for c in CASES if c.id == case_id)
    argv = case.setup(tmp_path)
    capsys.readouterr()
    for debug_argv in (["--debug", *argv], [*argv, "--debug"]):
        with pytest.raises(LTMError) as info:
            cli(debug_argv)
        assert all(name in str(info.value) for name in case.names)
    assert "error:" not in capsys.readouterr().err


def test_debug_shows_a_traceback_only_when_asked(tmp_path: Path) -> None:
    bad = put(tmp_path / "c.yml", "config:\n\trun_name: x\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    plain = subprocess.run([sys.executable, "-m", "ltm_harness", "run", "-c", str(bad), *RUN], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    debug = subprocess.run([sys.executable, "-m", "ltm_harness", "--debug", "run", "-c", str(bad), *RUN], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert error_line(plain.stderr).startswith(f"{bad}: not valid YAML")
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    assert "ConfigError" in debug.stderr and "not valid YAML" in debug.stderr


def test_report_skips_unreadable_event_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Binary garbage in an event log (a disk error, a killed writer) costs the conversation, not the report."""
    run_dir = finished_run(tmp_path)
    log = run_dir / "oracle" / "events.jsonl"
    first_bad = len(log.read_bytes().splitlines()) + 1
    put(log, log.read_bytes() + b"\xff\xfe\x00garbage\n{\"type\": \"turn\", \"i\": \n")
    capsys.readouterr()
    code, out, err = run_cli(["report", str(run_dir)], capsys)
    assert code == 0 and "Traceback" not in out + err
    warnings = [line for line in err.splitlines() if line.strip()]
    assert all(line.startswith("warning: ") and str(log) in line for line in warnings), warnings
    assert f"line {first_bad} is not valid JSON" in warnings[0] and "skipped" in warnings[0]
    assert warnings[1:] == [f"warning: {log}: 2 lines in all could not be read"]
    assert (run_dir / "report.html").is_file()


# -- syllabus rules: `validate` prints every broken rule, one per line ---------------------------------------


def P(label: str) -> dict[str, Any]:
    return {"$phase": label}


def R(task: str, count: int = 1, **params: Any) -> dict[str, Any]:
    return {"$repeat": {"$episode": task, **params}, "count": count}


OFF = {"$info": {"disable_updates": True}}

RULE_BREAKERS: list[tuple[str, str | None, list[dict[str, Any]]]] = [
    ("episodes-before-phase", None, [R("bandit"), P("1.train"), R("bandit")]),
    ("first-block-train", None, [P("1.test"), R("bandit")]),
    ("phase-numbering", None, [P("1.train"), R("bandit"), P("3.train"), R("bandit")]),
    ("empty-phase", None, [P("1.train"), R("bandit"), P("1.test")]),
    ("updates-left-disabled", None, [P("1.train"), R("bandit"), P("1.test"), OFF, R("bandit"), P("2.train"), R("bandit")]),
    ("cl-single-task", "CL", [P("1.train"), R("bandit"), R("guess")]),
    ("ant-test-phases", "ANT_C", [P("1.train"), R("bandit"), R("guess")]),
    ("ant-several-tasks", "ANT_C", [P("1.train"), R("bandit"), P("1.test"), R("bandit")]),
    ("ant-no-variation", "ANT_A", [P("1.train"), R("bandit", horizon=5), R("bandit", horizon=6), P("1.test"), R("guess")]),
    ("task", None, [P("1.train"), R("maze")]),  # not an environment
    ("task", None, [P("1.train"), R("bandit", horizn=5)]),  # not a param of the bandit
    ("task", None, [P("1.train"), R("bandit", seed=5)]),  # seeds come from --seed
]


@pytest.mark.parametrize("rule, kind, instructions", RULE_BREAKERS, ids=[f"{r[0]}-{i}" for i, r in enumerate(RULE_BREAKERS)])
def test_syllabus_rule_violations(rule: str, kind: str | None, instructions: list[dict[str, Any]], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = put(tmp_path / f"{rule}.json", json.dumps(instructions))
    code, out, err = run_cli(["syllabus", "validate", str(path), *(["--type", kind] if kind else [])], capsys)
    assert code == 1 and "Traceback" not in out + err
    lines = [line for line in out.splitlines() if line.strip()]
    assert [line.rsplit("[", 1)[-1] for line in lines] == [f"{rule}]"]  # each violation on its own line, with its rule id
    assert lines[0].startswith(f"{path}: ")
    check_hint(lines[0])
    assert [line for line in err.splitlines() if line.strip()] == [f"1 problem ({kind or 'general rules only; give --type for CL or ANT rules'})"]
    # `run` refuses it: the first line says so, then one line per violation, as `validate` prints them
    code, out, err = run_cli(["syllabus", "run", str(path), "-a", "null", "--out", "l2m",
                              *(["--type", kind] if kind else [])], capsys)
    assert code == 2 and "Traceback" not in out + err and not out.strip()
    first, *rest = [line for line in err.splitlines() if line.strip()]
    assert first.startswith("error: ") and "1 rule" in first
    check_hint(first)
    assert rest == [lines[0]]
    assert not (tmp_path / "l2m").exists()


# -- agents that answer badly --------------------------------------------------------------------------------

HUGE = ("lorem ipsum dolor sit amet " * 80_000)[:2_000_000]


def agent_app(mode: str) -> web.Application:
    """An HTTP agent (docs/http-agent.md) that says "OK." to statements and answers questions badly."""
    async def chat(request: web.Request) -> web.StreamResponse:
        data = await request.json()
        if data.get("reset") or not data["message"].rstrip().endswith("?"):
            return web.json_response({"reply": "OK."})
        if mode == "empty":
            return web.json_response({"reply": ""})
        if mode == "huge":
            return web.json_response({"reply": HUGE})
        if mode == "latin1-in-json":
            return web.Response(body=b'{"reply": "caf\xe9 \xff\xfe"}', content_type="application/json")
        if mode == "binary":
            return web.Response(body=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", content_type="application/octet-stream")
        if mode == "reply-12":
            return web.json_response({"reply": 12})
        if mode == "no-reply":
            return web.json_response({"answer": "Red"})
        raise AssertionError(mode)

    app = web.Application(client_max_size=8 * 1024 * 1024)
    app.router.add_post("/chat", chat)
    return app


@pytest.fixture
async def agent_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    async with serve_local(agent_app(request.param)) as base:
        yield f"{base}/chat"


# Two datasets, two tests each; a failing turn is tried twice, quickly.
TWO_DATASETS = GOOD.replace("{run_name: x}", "{run_name: x, turns: {attempts: 2, backoff: 0.01}}") + "    - name: kv\n"


async def run_agent(tmp: Path, url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, Path]:
    argv = ["run", "-c", config(tmp, TWO_DATASETS), "-a", url, "-a", "oracle", "--examples", "2", *RUN]
    code = await asyncio.to_thread(cli, argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err, tmp / "results" / "x"


def results_of(folder: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return data


def check_oracle_unharmed(run_dir: Path) -> None:
    """The other agent of the run finished as usual."""
    oracle = results_of(run_dir / "oracle")
    assert len(oracle) == 4 and all(r["status"] == "ok" and r["score"] == r["max_score"] for r in oracle)


def check_messages(out: str, err: str) -> None:
    """No traceback; whatever goes to stderr is one line per message, each an error, warning or note."""
    assert "Traceback" not in out + err
    for line in err.splitlines():
        assert not line.strip() or line.startswith(("error: ", "warning: ", "note: ")), line


@pytest.mark.parametrize("agent_url", ["empty", "huge", "latin1-in-json"], indirect=True)
async def test_accepted_odd_replies_are_scored(agent_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty, a 2 MB and a non-UTF-8 reply are replies: the run finishes and every test has a score (0)."""
    code, out, err, run_dir = await run_agent(tmp_path, agent_url, capsys)
    check_messages(out, err)
    assert code == 0 and not err.strip(), err
    results = results_of(run_dir / slug(agent_url))
    assert sorted(r["dataset"] for r in results) == ["colours", "colours", "kv", "kv"]
    for r in results:
        assert r["status"] == "ok" and r["score"] == 0 and r["reasons"], r
    check_oracle_unharmed(run_dir)
    assert json.loads((run_dir / "summary.json").read_text())["errors"] == {}
    # the report shows them
    code, out, err = await asyncio.to_thread(run_cli, ["report", str(run_dir)], capsys)
    assert code == 0 and not err.strip() and (run_dir / "report.html").is_file(), err


REJECTED = [("binary", "not JSON"), ("reply-12", 'without a string "reply"'), ("no-reply", 'no "reply" field')]


@pytest.mark.parametrize("agent_url, problem", REJECTED, indirect=["agent_url"], ids=[r[0] for r in REJECTED])
async def test_rejected_replies_mark_their_tests_errored(agent_url: str, problem: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A reply that breaks the protocol errors the test it belongs to, with the reason (the URL and what is
    wrong) in results.json; the run goes on, and the other agent is not affected."""
    code, out, err, run_dir = await run_agent(tmp_path, agent_url, capsys)
    check_messages(out, err)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert code == (1 if summary["errors"] else 3), err  # 3: finished, with errored tests
    results = results_of(run_dir / slug(agent_url))
    assert sorted(r["dataset"] for r in results) == ["colours", "colours", "kv", "kv"]
    for r in results:  # every test asks a question, and every question gets a bad reply
        assert r["status"] == "errored" and r["score"] == 0, r
        assert any(agent_url in reason and problem in reason for reason in r["reasons"]), r["reasons"]
    agent = next(a for a in summary["agents"] if a["agent"] == agent_url)
    assert sum(d["errored"] for d in agent["datasets"]) == 4
    check_oracle_unharmed(run_dir)


# -- a judge that answers garbage ----------------------------------------------------------------------------


@pytest.fixture
async def mock_llm() -> AsyncIterator[MockLLMServer]:
    async with MockLLMServer() as server:
        yield server


async def test_judge_garbage_leaves_tests_unscored(mock_llm: MockLLMServer, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = GOOD.replace("name: colours", "name: delayed_recall").replace(
        "{run_name: x}", f"{{run_name: x, judge: {{model: mock-judge-garbage, base_url: '{mock_llm.url}'}}, "
                         "llm: {backoff_initial: 0.01, cache: false}}")
    argv = ["run", "-c", config(tmp_path, text), "-a", "oracle", "--examples", "2", *RUN]
    code = await asyncio.to_thread(cli, argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert code == 0, captured.err
    results = results_of(tmp_path / "results" / "x" / "oracle")
    assert len(results) == 2
    for r in results:
        assert r["status"] == "unscored", r
        assert any("judge" in reason and "no JSON object" in reason for reason in r["reasons"]), r["reasons"]
    summary = json.loads((tmp_path / "results" / "x" / "summary.json").read_text())
    [dataset] = summary["agents"][0]["datasets"]
    assert (dataset["tests"], dataset["scored"], dataset["unscored"]) == (2, 0, 2)
    assert "unscored" in captured.out
