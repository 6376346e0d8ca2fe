"""Framework adapters as a user meets them on the command line: `list` names them with their extra, a missing extra
is one line naming the pip command, a bad spec is one line naming what is wrong and the fix; never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ltm_harness._agents.specs import _builtins
from ltm_harness._cli.main import main as cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"
LANGGRAPH = f"langgraph:{EXAMPLES / 'langgraph_agent.py'}:graph"
SDK = f"openai-agents:{EXAMPLES / 'agents_sdk_agent.py'}:agent"
MEM0 = f"mem0:{EXAMPLES / 'mem0.yml'}"
LETTA = "letta:http://127.0.0.1:9"
RUN = ["run", "--datasets", "colours", "--limit", "1", "--results", "results", "--quiet", "--no-report"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached: every case stops before a turn


def error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = cli(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1, f"exit {code}, expected one line:\n{err}"
    assert lines[0].startswith("error: ") and "Traceback" not in err
    return lines[0].removeprefix("error: ")


def block(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Make `package` (and its submodules) impossible to import, as if it were not installed."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, package, None)
    for name in [n for n in sys.modules if n.startswith("ltm_harness._agents.frameworks.")
                 and n != "ltm_harness._agents.frameworks.base"]:
        monkeypatch.delitem(sys.modules, name)  # the adapters are imported again, and meet the missing package


def test_list_names_the_adapters_and_their_extras(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # rich wraps table cells to the terminal's width
    assert cli(["list"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "langgraph │ built-in (extra langchain)" in out and "openai-agents │ built-in (extra openai-agents)" in out
    assert "mem0 │ built-in (extra mem0)" in out and "letta │ built-in (extra letta)" in out


@pytest.mark.parametrize("package,spec,extra", [("langgraph", LANGGRAPH, "langchain"),
                                                ("agents", SDK, "openai-agents"), ("mem0", MEM0, "mem0"),
                                                ("letta_client", LETTA, "letta")])
def test_a_missing_extra_is_one_line_naming_the_pip_command(monkeypatch, capsys, package, spec, extra):
    block(monkeypatch, package)
    line = error_line([*RUN, "-a", spec], capsys)
    assert line.endswith(f'install it with: pip install "ltm-harness[{extra}]"'), line
    kind = spec.partition(":")[0]
    (entry,) = [e for e in _builtins() if e.name == kind]  # as `list` shows it in a process without the extra
    assert entry.source == f'built-in, needs: pip install "ltm-harness[{extra}]"'


@pytest.mark.parametrize("spec,said", [
    ("langgraph", "write langgraph:FILE.py:NAME or langgraph:MODULE:NAME"),
    (f"langgraph:{EXAMPLES / 'langgraph_agent.py'}", "does not name an object; write langgraph:FILE.py:NAME"),
    ("langgraph:nothere.py:graph", "the file nothere.py does not exist; check the path"),
    ("langgraph:no_such_module_here:graph", "cannot import 'no_such_module_here'"),
    (f"langgraph:{EXAMPLES / 'langgraph_agent.py'}:grap", "has no 'grap'"),
    (f"langgraph:{EXAMPLES / 'langgraph_agent.py'}:respond",
     "the object is a plain function, not a LangGraph graph or a LangChain Runnable; decorate it with @entrypoint()"),
    (f"{LANGGRAPH}?input=list", "input='list' is not one of auto, dict, messages"),
    (f"{LANGGRAPH}?inptu=dict", "unknown parameter 'inptu'; known parameters of langgraph: input"),
    (f"{LANGGRAPH}?input", "the parameters after '?' must be KEY=VALUE pairs joined by '&'"),
    (f"openai-agents:{EXAMPLES / 'langgraph_agent.py'}:graph",
     "the object is a CompiledStateGraph, not an OpenAI Agents SDK Agent; name an agents.Agent(...)"),
    (f"{SDK}?tracing=maybe", "tracing='maybe' is not one of off, on"),
    ("mem0:", "write mem0 or mem0:CONFIG.yml"),
    ("mem0:nothere.yml", "nothere.yml: cannot be read"),
    ("letta", "write letta:http://HOST:PORT or letta:http://HOST:PORT/AGENT_ID"),
    ("letta:ftp://host", "write letta:http://HOST:PORT or letta:http://HOST:PORT/AGENT_ID"),
    ("letta:http://host:8283?model=", "unknown or empty parameter 'model'"),
], ids=["no-target", "no-name", "no-file", "no-module", "no-object", "wrong-type", "bad-value", "unknown-parameter",
        "empty-value", "sdk-wrong-type", "sdk-bad-value", "mem0-empty", "mem0-no-file", "letta-no-url",
        "letta-not-http", "letta-empty-value"])
def test_a_bad_spec_is_one_line(capsys, spec, said):
    line = error_line([*RUN, "-a", spec], capsys)
    assert said in line, line
