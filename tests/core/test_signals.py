"""SIGTERM stops every command as Ctrl-C does (exit 130, with the command that goes on), also in a process started
with SIGINT ignored, as `cmd &` in a script starts it; the resume hint is the command the user ran (./ltm, the
ltm-harness entry point, or python -m ltm_harness) and a Python without the harness's dependencies gets one line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web

from ltm_harness._cli.again import LAUNCHER, command_line
from ltm_harness.testing import serve_local

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def env() -> dict[str, str]:
    out = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    out.pop(LAUNCHER, None)
    out.pop("OPENAI_API_KEY", None)
    return out


async def test_mock_llm_exits_on_sigterm_when_started_in_the_background():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--port", "0", env=env(), preexec_fn=ignore_sigint,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), timeout=60)
    assert line.startswith(b"mock LLM serving at http://127.0.0.1:")
    proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 130 and err.decode() == "interrupted\n"


async def test_a_background_import_answers_sent_sigterm_stops_with_130(tmp_path):
    asked, done = asyncio.Event(), asyncio.Event()

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "slow", "object": "model", "created": 0,
                                                              "owned_by": "t"}]})

    async def chat(request: web.Request) -> web.Response:
        asked.set()
        await asyncio.wait_for(done.wait(), timeout=60)  # a judge that takes its time: the import is stopped meanwhile
        return web.json_response({}, status=500)

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"sample_id": "synthetic-1", "question_index": 0, "response": "Pepper"}) + "\n")
    config = tmp_path / "locomo.yml"
    async with serve_local(app) as url:
        config.write_text(f"config:\n  run_name: imp\n  judge:\n    base_url: {url}/v1\n"
                          f"datasets:\n  args:\n    dataset_examples: 2\n  datasets:\n"
                          f"    - name: locomo\n      args:\n        data_file: {LOCOMO}\n")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "ltm_harness", "import-answers", str(config), str(answers), "--name", "pub",
            "--judge", "slow", "--results", str(tmp_path / "results"), env=env(), preexec_fn=ignore_sigint,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        await asyncio.wait_for(asked.wait(), timeout=120)
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
        done.set()
    assert proc.returncode == 130, err.decode()
    assert err.decode().startswith("interrupted") and b"Traceback" not in err


def test_the_hint_names_the_launcher_the_user_started():
    script = ("import os, sys; sys.argv[0] = sys.argv[1]; from ltm_harness._cli.again import command_line; "
              "print(command_line(['run', '-c', 'my config.yml', '--resume']))")

    def hint(argv0: str, **extra: str) -> str:
        done = subprocess.run([sys.executable, "-c", script, argv0], env={**env(), **extra}, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert hint("/x/bin/ltm-harness") == "ltm-harness run -c 'my config.yml' --resume"
    assert hint("/x/bin/ltm-harness", LTM_LAUNCHER="./ltm") == "./ltm run -c 'my config.yml' --resume"
    module = hint("/x/ltm_harness/__main__.py")
    assert module.endswith(" -m ltm_harness run -c 'my config.yml' --resume")
    python = module.split(" -m ")[0]
    assert python in ("python", "python3", sys.executable)  # the Python that ran it, by a name that finds it


def test_the_ltm_script_tells_the_harness_how_it_was_started(tmp_path):
    """./ltm exports LTM_LAUNCHER as it was invoked (a bare name as ./NAME), before it starts the harness."""
    text = (ROOT / "ltm").read_text()
    assert 'case "$0" in */*) LTM_LAUNCHER="$0" ;; *) LTM_LAUNCHER="./$0" ;; esac' in text
    exported = text.index("export LTM_LAUNCHER")
    assert exported < text.index('exec "$venv/bin/python" -m ltm_harness "$cmd" "$@"')
    assert command_line(["run"]).endswith("run")


@pytest.mark.parametrize("command", [["run", "--help"], ["run"]])
def test_a_python_without_the_dependencies_gets_one_line(tmp_path, command):
    """A Python that has not got `rich` (the system Python of someone who set up with ./ltm): one line, exit 2."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'rich' or name.startswith('rich.'):\n"
        "            raise ModuleNotFoundError(f\"No module named {name!r}\", name=name)\n"
        "sys.meta_path.insert(0, _Block())\n")
    done = subprocess.run([sys.executable, "-m", "ltm_harness", *command, "--results", str(tmp_path / "r")],
                          env={**env(), "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}"}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    if command == ["run", "--help"]:  # the help needs nothing missing
        assert done.returncode == 0
        return
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"error: this Python ({sys.executable}) cannot import 'rich', which ltm-harness "
                                  "needs; start it with ./ltm")
