"""One way to name things: built-ins, code, installed packages (entry points), folders and specs, for datasets,
agents, environments, judge prompts and suites; named agents; Python agents on the command line and from code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ltm_harness
from ltm_harness._cli.main import main
from ltm_harness.testing import make_config

AGENT_FILE = textwrap.dedent('''
    from ltm_harness import Agent

    class Echo(Agent):
        """Says back what it heard last."""

        async def reply(self, message, oracle_hint=None):
            return "You said: " + message.text[-40:]

        async def restore(self, turns):
            pass
''')

PACKAGE = textwrap.dedent('''
    from pydantic import BaseModel, ConfigDict
    from ltm_harness import Agent, DatasetInterface, TestExample
    from ltm_harness.aivle import ReinforcementLearningTestCase, StepCountEvaluator, TestSuite
    from ltm_harness.envs import make_env

    class Echoer(Agent):
        """A packaged agent that always answers the same."""

        async def reply(self, message, oracle_hint=None):
            return "packaged " + (self.spec.partition(":")[2] or "echo")

    class Facts(DatasetInterface):
        name = "packaged_facts"
        description = "a dataset from an installed package"

        def generate_examples(self, n):
            return [self.make_example(i, [f"My code is {i}42.", "What is my code?"], [False, True], [f"{i}42"],
                                      oracle_answers=[f"It is {i}42."])
                    for i in range(n)]

        def evaluate_correct(self, questions, responses, expected):
            ok = expected[0] in responses[0]
            return float(ok), 1.0, [str(ok)]

    STRICT = {"name": "strict", "description": "grades strictly", "system": "Be strict.",
              "user": "Q: {question} E: {expected} R: {response}"}

    def build_suite():
        return TestSuite("packaged", [ReinforcementLearningTestCase(
            "guess", 30.0, 1, {}, make_env("guess", high=8), StepCountEvaluator(), t_max=8)])
''')

ENTRY_POINTS = textwrap.dedent('''
    [ltm_harness.agents]
    echoer = fakepkg:Echoer

    [ltm_harness.datasets]
    fakepkg = fakepkg

    [ltm_harness.judge_prompts]
    strict = fakepkg:STRICT

    [ltm_harness.suites]
    packaged-suite = fakepkg:build_suite
''')


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A package installed (on PYTHONPATH, with its dist-info) that declares entry points in every group."""
    site = tmp_path / "site"
    (site / "fakepkg").mkdir(parents=True)
    (site / "fakepkg" / "__init__.py").write_text(PACKAGE)
    info = site / "fakepkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def cli(args: list[str], cwd: Path, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"PYTHONPATH": str(site)} if site else {})}
    return subprocess.run([sys.executable, "-m", "ltm_harness", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_installed_packages_add_agents_datasets_prompts_and_suites(installed: Path, tmp_path: Path):
    listed = cli(["list"], tmp_path, installed)
    assert listed.returncode == 0, listed.stderr
    for name in ("echoer", "packaged_facts", "strict", "packaged-suite"):
        line = next(line for line in listed.stdout.splitlines() if line.lstrip("│┃| ").startswith(f"{name} "))
        assert "package fakepkg" in line
    (tmp_path / "c.yml").write_text("datasets:\n  args: {memory_span: 1000}\n  datasets:\n    - name: packaged_facts\n")
    ran = cli(["run", "-c", "c.yml", "--quiet", "--no-report", "-a", "echoer", "-a", "named=echoer:hello",
               "-a", "oracle"], tmp_path, installed)
    assert ran.returncode == 0, ran.stderr
    summary = json.loads((tmp_path / "results" / "default" / "summary.json").read_text())
    assert [a["agent"] for a in summary["agents"]] == ["echoer", "named", "oracle"]
    events = [json.loads(line) for line in (tmp_path / "results" / "default" / "named" / "events.jsonl")
              .read_text().splitlines()]
    replies = [e for e in events if e["type"] == "turn"]
    assert replies[-1]["reply"] == "packaged hello"  # the spec's argument reached the packaged agent
    scores = {a["agent"]: a["benchmark_score"] for a in summary["agents"]}
    assert scores == {"echoer": 0.0, "named": 0.0, "oracle": 1.0}
    suite = cli(["suite", "packaged-suite", "-a", "oracle", "--quiet"], tmp_path, installed)
    assert suite.returncode == 0, suite.stderr
    assert (tmp_path / "results" / "suites" / "packaged" / "oracle.json").is_file()


def test_a_python_agent_by_spec_and_by_name_on_the_command_line(tmp_path: Path, capsys, monkeypatch):
    (tmp_path / "my_agent.py").write_text(AGENT_FILE)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--quiet", "--no-report", "--span", "1000", "--examples", "1", "-a", "my_agent.py:Echo",
                 "-a", "mine=my_agent.py:Echo"]) == 0
    run_dir = tmp_path / "results" / "default"
    names = [a["agent"] for a in json.loads((run_dir / "summary.json").read_text())["agents"]]
    assert names == ["my_agent.py:Echo", "mine"]
    assert (run_dir / "mine" / "events.jsonl").is_file() and (run_dir / "my_agent.py_Echo" / "results.json").is_file()
    out = capsys.readouterr().out
    assert "mine" in out


def test_agents_given_as_objects_from_the_library(tmp_path: Path):
    from ltm_harness import Agent, AgentMessage

    class Parrot(Agent):
        async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> str:
            return message.text

    cfg = make_config(["colours", "kv"], span=1000)
    out = ltm_harness.run(cfg, agents=[Parrot(), ("factory", lambda: Parrot()), ("cls", Parrot), "null"],
                          results=tmp_path)
    assert out.agents == ["Parrot", "factory", "cls", "null"]
    assert {r.dataset for r in out.results("cls")} == {"colours", "kv"}
    assert out.events("factory")["main"][0].type == "session_start"
    assert ltm_harness.read_run(out.path).summary == out.summary
    log = out.path / "cls" / "events.jsonl"
    log.write_text(log.read_text(encoding="utf-8") + '{"type": "turn", "i": "x"}\n', encoding="utf-8")
    with pytest.raises(ltm_harness.RunFolderError, match=r"events.jsonl: line \d+ is not a valid event"):
        ltm_harness.read_run(out.path).events("cls")
    isolated = make_config(["kv"], span=1000, isolated=True, examples=2)
    with pytest.raises(ltm_harness.ConfigError, match="given as an instance, which holds one conversation"):
        ltm_harness.run(isolated, agents=[Parrot()], results=tmp_path)
    assert ltm_harness.run(isolated, agents=[Parrot], results=tmp_path).summary.agents[0].turns > 0


def test_names_belong_to_one_thing_and_unknown_names_list_the_known(tmp_path: Path):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "mine.py").write_text(textwrap.dedent('''
        from ltm_harness import DatasetInterface

        class Clash(DatasetInterface):
            name = "colours"
    '''))
    cfg = make_config(["colours"], dataset_dirs=[str(folder)])
    with pytest.raises(ltm_harness.DefinitionError, match=r"dataset name 'colours' is used by built-in and by .*mine\.py"):
        ltm_harness.run(cfg, agents=["null"], results=tmp_path / "r")
    with pytest.raises(ltm_harness.ConfigError, match="unknown dataset 'colour'; known datasets: .*colours"):
        ltm_harness.run(make_config(["colour"]), agents=["null"], results=tmp_path / "r")
    with pytest.raises(ltm_harness.AgentError, match="unknown agent 'orcale'; known agents: http, langgraph, letta, mem0, null, openai, openai-agents, oracle"):
        ltm_harness.run(make_config(["kv"]), agents=["orcale"], results=tmp_path / "r")
    with pytest.raises(ltm_harness.ConfigError, match="nowhere.py does not exist"):
        ltm_harness.run(make_config(["kv"]), agents=[f"{tmp_path / 'nowhere.py'}:Agent"], results=tmp_path / "r")
    assert not (tmp_path / "r" / "t").exists()  # a run refused before it started leaves no folder behind
    with pytest.raises(ltm_harness.ConfigError, match="agent 'a' is given twice"):
        ltm_harness.run(make_config(["kv"]), agents=["a=null", "a=oracle"], results=tmp_path / "r")
    from ltm_harness.envs import make_env

    with pytest.raises(ltm_harness.ConfigError, match="unknown environment 'stairz'; known environments: bandit"):
        make_env("stairz")


def test_registered_in_code_then_named_everywhere(tmp_path: Path):
    from ltm_harness import Agent, DatasetInterface
    from ltm_harness._agents.specs import AGENTS
    from ltm_harness._authoring.catalog import DATASETS

    @ltm_harness.register_dataset
    class Hello(DatasetInterface):
        name = "hello_registered"
        description = "registered in code"

        def generate_examples(self, n):
            return [self.make_example(i, ["Hello!", "What did I say?"], [False, True], ["Hello"]) for i in range(n)]

        def evaluate_correct(self, questions, responses, expected):
            return float("Hello" in responses[0]), 1.0, []

    class Shout(Agent):
        async def reply(self, message, oracle_hint=None):
            return message.text.upper()

    ltm_harness.register_agent("shout", Shout, "shouts back")
    try:
        out = ltm_harness.run(make_config(["hello_registered"], span=1000), agents=["shout"], results=tmp_path)
        assert out.summary.agents[0].agent == "shout"
        entry = AGENTS.scope().entry("shout")
        assert entry.source.startswith("code in ") and entry.description == "shouts back"
    finally:
        DATASETS.unregister("hello_registered")
        AGENTS.unregister("shout")


ENV_FILE = textwrap.dedent('''
    from ltm_harness.envs import ActiveEnv, EnvHeader, Space

    class Corridor(ActiveEnv):
        """Walk right to the end of a corridor."""

        test_name = "corridor_file"

        @property
        def header(self):
            return EnvHeader(name="corridor", kind="active", action_space=Space(description="a move", choices=("left", "right")),
                             observation_space=Space(description="where you are"), info="walk right",
                             min_score=0.0, max_score=3.0)

        def rules(self):
            return "Walk right to the end of the corridor."

        def _reset(self):
            self.at = 0

        def _act(self, action):
            self.at += 1 if action == "right" else 0
            return (1.0 if action == "right" else 0.0), self.at >= 3, f"you went {action}"

        def _observe(self):
            return {"at": self.at}

        def describe(self, observation):
            return f"You are at {observation['at']}."

        def oracle_action(self):
            return "right"

        def default_max_steps(self):
            return 6

        def summary(self):
            return f"You walked {self.at} steps right."
''')


def test_aiq_plays_a_user_environment_named_by_its_file(tmp_path: Path, capsys):
    (tmp_path / "my_env.py").write_text(ENV_FILE)
    spec = f"{tmp_path / 'my_env.py'}:Corridor"
    assert main(["aiq", "--quiet", "--trials", "2", "--test", spec, "-a", "oracle", "-a", "null",
                 "--results", str(tmp_path / "r")]) == 0
    report = json.loads((tmp_path / "r" / "aiq" / "aiq.json").read_text())
    assert report["tests"] == [spec]
    scores = {a["agent"]: a["aiq"] for a in report["agents"]}
    assert scores == {"oracle": 1.0, "null": 0.0}


@pytest.mark.slow
def test_a_dataset_named_by_its_file_is_found_from_the_configs_folder(tmp_path: Path):
    """`- name: mine/capitals.py:Capitals` is read from the config file's folder (as dataset_dirs are), whatever the
    current folder; the saved config names the file absolutely, so the run is re-scored from anywhere."""
    project = tmp_path / "project"
    (project / "mine").mkdir(parents=True)
    (project / "mine" / "capitals.py").write_text(textwrap.dedent('''
        from ltm_harness import Dataset

        class Capitals(Dataset):
            name = "capitals"

            def generate_examples(self, n):
                return [self.make_example(i, ["The capital of Zembla is Quorn.", "What is the capital of Zembla?"],
                                          [False, True], ["Quorn"], oracle_answers=["Quorn"]) for i in range(n)]

            def evaluate_correct(self, questions, responses, expected):
                ok = "quorn" in responses[0].lower()
                return float(ok), 1.0, ["recalled" if ok else "forgot"]
    '''))
    config = project / "config.yml"
    config.write_text("datasets:\n  args: {memory_span: 1000, dataset_examples: 1}\n"
                      "  datasets:\n    - name: mine/capitals.py:Capitals\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = cli(["run", "-c", str(config), "-a", "oracle", "--results", str(tmp_path / "r"), "--quiet"], elsewhere)
    assert run.returncode == 0, run.stderr
    saved = json.loads((tmp_path / "r" / "default" / "run_config.json").read_text())
    assert saved["datasets"]["datasets"][0]["name"] == f"{project / 'mine' / 'capitals.py'}:Capitals"
    refused = cli(["rescore", str(tmp_path / "r" / "default")], tmp_path)  # code named only by the results folder
    assert refused.returncode == 2 and "is code named by the results folder" in refused.stderr
    again = cli(["rescore", str(tmp_path / "r" / "default"), "-c", str(config)], tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"dataset code from: built-in datasets and installed packages, the config {config}" in again.stdout
    assert ltm_harness.read_run(tmp_path / "r" / "default").results("oracle")[0].score == 1.0


def test_functions_making_agents_with_or_without_the_spec(tmp_path: Path, capsys, monkeypatch):
    """A function returning an agent works everywhere a class does: given the spec (or the agent's name) when it
    takes an argument; one that fails or returns something else is one AgentError."""
    (tmp_path / "makers.py").write_text(textwrap.dedent('''
        from ltm_harness import Agent

        class Said(Agent):
            async def reply(self, message, oracle_hint=None):
                return f"{self.spec} heard you"

        def plain():
            return Said("plain-made")

        def with_spec(spec):
            return Said(spec)

        def broken(spec):
            raise KeyError("no model")

        def not_an_agent():
            return 42
    '''))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--examples", "1", "--span", "1000", "-a", "makers.py:plain", "-a", "w=makers.py:with_spec",
                 "--results", str(tmp_path / "r"), "--quiet", "--no-report"]) == 0
    replies = {agent: json.loads((tmp_path / "r" / "default" / folder / "events.jsonl").read_text().splitlines()[1])
               ["reply"] for agent, folder in (("plain", "makers.py_plain"), ("w", "w"))}
    assert replies == {"plain": "plain-made heard you", "w": "makers.py:with_spec heard you"}
    monkeypatch.syspath_prepend(str(tmp_path))
    import makers  # type: ignore[import-not-found]  # from the current folder, as a library user would

    out = ltm_harness.run(make_config(["kv"], span=1000), agents=[("a", makers.plain), ("b", makers.with_spec)],
                          results=tmp_path / "lib")
    assert out.results("b")[0].responses[0] == "b heard you"
    for maker, message in (("broken", r"making it with broken failed \(KeyError: 'no model'\)"),
                           ("not_an_agent", "not_an_agent returned int, not an ltm_harness.Agent")):
        with pytest.raises(ltm_harness.AgentError, match=message):
            ltm_harness.run(make_config(["kv"], span=1000), agents=[getattr(makers, maker)], results=tmp_path / "x")


def test_list_names_the_file_of_code_registered_by_a_loaded_file(tmp_path: Path):
    """Registered from a module loaded by path (a dataset folder's, a file spec's), the source is that file, not the
    private module name it was loaded under."""
    from ltm_harness._envs.catalog import ENVIRONMENTS

    (tmp_path / "games.py").write_text(textwrap.dedent('''
        from ltm_harness.envs import env_class, register_env

        @register_env
        class Coins(env_class("guess")):
            test_name = "coins_for_the_list_test"
    '''))
    from ltm_harness._registry.loading import load_module_file

    load_module_file(tmp_path / "games.py")
    try:
        entry = ENVIRONMENTS.scope().entry("coins_for_the_list_test")
        assert entry.source == f"code in {(tmp_path / 'games.py').resolve()}"
    finally:
        ENVIRONMENTS.unregister("coins_for_the_list_test")


def test_built_in_datasets_are_known_by_name_and_loaded_only_when_named():
    """The names read from the built-in modules' source are those their classes have once loaded; a run that names
    one dataset loads its module alone (a LoCoMo run does not import the environments or LongMemEval's reader)."""
    from ltm_harness._authoring.catalog import DATASETS, PACKAGE, _accept, _lazy_builtins
    from ltm_harness._registry.loading import load_module_file
    from ltm_harness._resources import shipped

    loaded = {e.name for path in shipped("datasets").glob("[!_]*.py")
              for e in _accept(load_module_file(path, PACKAGE), "built-in")}
    assert set(_lazy_builtins()) == loaded and {"colours", "locomo", "env_bandit", "locations_directions"} <= loaded
    code = ("import sys; from ltm_harness._authoring.catalog import known_datasets, PACKAGE\n"
            "scope = known_datasets(); assert 'longmemeval' in scope and 'no-such' not in scope\n"
            "cls = scope['locomo']\n"
            "print(sorted(m.split('.')[1].rsplit('_', 1)[0] for m in sys.modules if m.startswith(PACKAGE + '.')))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('nltk', 'ltm_harness._envs', "
            "'ltm_harness._interop.longmemeval'))))\n"
            "print(len(scope), sorted(scope)[:2])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['locomo']" and out[1] == "[]"
    assert out[2].startswith(f"{len(DATASETS.scope())} ")  # listing everything loads the rest


def test_a_name_taken_by_a_built_in_not_loaded_yet_is_still_refused():
    from ltm_harness._authoring.catalog import DATASETS
    from ltm_harness._authoring.dataset import DatasetInterface
    from ltm_harness._errors import DefinitionError

    class Clash(DatasetInterface):
        name = "env_guess"
        description = "not the built-in"

        def generate_examples(self, n):
            return []

        def evaluate_correct(self, questions, responses, expected):
            return 0.0, 1.0, []

    with pytest.raises(DefinitionError, match="dataset name 'env_guess' is used by built-in and by code"):
        DATASETS.register(Clash, "code in test")
