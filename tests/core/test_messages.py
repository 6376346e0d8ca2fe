"""Messages that say the right cause: the time a model list was really waited for, a reply that is not a model list,
a results file too large or a manifest that is a FIFO (never "permissions" or "the code changed"), and an agent that
failed to go back, whose stopped run says how to resume it."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path

import pytest
from aiohttp import web

from ltm_harness._api import read_run, rescore_async, run_async
from ltm_harness._cli.main import main
from ltm_harness._errors import DefinitionError, LLMError, RunFolderError
from ltm_harness._llm import client as client_module
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._store.layout import MANIFEST, RunFolder
from ltm_harness.testing import make_config, serve_local

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


async def listed(app: web.Application) -> tuple[str, str]:
    async with serve_local(app) as url:
        client = LLMClient(resolve_endpoint("t", f"{url}/v1"), LLMSettings())  # llm.timeout: 60 s
        try:
            with pytest.raises(LLMError) as exc:
                await client.listed_models()
        finally:
            await client.close()
    return url, str(exc.value)


async def test_a_model_list_that_never_comes_is_said_with_the_time_it_was_waited_for(monkeypatch):
    monkeypatch.setattr(client_module, "LISTING_TIMEOUT", 0.3)

    async def models(request: web.Request) -> web.Response:
        await asyncio.sleep(1.5)  # longer than the 0.3 s the list is waited for (the server's exit waits for this)
        return web.json_response({"data": []})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    url, said = await listed(app)
    assert said == f"{url}/v1 (GET /models) did not answer within 0.3 s; check the server"


@pytest.mark.parametrize("body, content_type", [("<html><body>Welcome</body></html>", "text/html"),
                                                ("[1, 2]", "application/json"), ('{"data": 5}', "application/json")])
async def test_a_reply_that_is_not_a_model_list_says_so(body, content_type):
    async def models(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type=content_type)

    app = web.Application()
    app.router.add_get("/v1/models", models)
    url, said = await listed(app)
    assert said.startswith(f"{url}/v1 (GET /models) answered with something that is not a list of models")
    assert "Error" not in said and "check that the base URL is the API's" in said


async def test_an_oversized_summary_is_not_a_permissions_problem(tmp_path):
    out = await run_async(make_config(["colours"], span=1000), ["oracle"], results=tmp_path)
    summary = RunFolder(out.path).summary
    os.truncate(summary, 513 * 1024 * 1024)  # sparse: no disk is used
    with pytest.raises(RunFolderError) as exc:
        read_run(out.path)
    said = str(exc.value)
    assert said.startswith(f"cannot read {summary}: it is 537,919,488 bytes, more than the 536,870,912 read whole, "
                           "so not a file this harness wrote") and "permission" not in said


async def test_a_manifest_that_is_a_fifo_is_said_as_such_not_as_changed_code(tmp_path):
    out = await run_async(make_config(["colours"], span=1000), ["oracle"], results=tmp_path)
    manifest = RunFolder(out.path).definitions / MANIFEST
    manifest.unlink()
    os.mkfifo(manifest)
    with pytest.raises(DefinitionError) as exc:
        await rescore_async(out.path)
    said = str(exc.value)
    assert said.startswith(f"{manifest}: cannot be read (it is a FIFO (named pipe), not a regular file)")
    assert "code" not in said and "overwrite=True" in said


AGENT = '''
from ltm_harness import Agent, Reply


class Stuck(Agent):
    """Takes a snapshot, but cannot go back to it."""

    async def reply(self, message, oracle_hint=None):
        return Reply(text="Not mentioned in the conversation.")

    async def observe(self, message):
        return None

    def snapshot(self):
        return 0

    def rewind(self, snapshot):
        raise RuntimeError("the state store is gone")
'''


async def test_a_failed_rewind_stops_the_run_and_says_how_to_resume_it(tmp_path, capsys):
    (tmp_path / "stuck.py").write_text(textwrap.dedent(AGENT))
    config = tmp_path / "locomo.yml"
    config.write_text(f"config:\n  run_name: stuck\ndatasets:\n  args:\n    dataset_examples: 1\n  datasets:\n"
                      f"    - name: locomo\n      args:\n        data_file: {LOCOMO}\n")
    argv = ["run", "-c", str(config), "-a", f"{tmp_path / 'stuck.py'}:Stuck", "--results", str(tmp_path / "results"),
            "--no-report", "--quiet"]
    assert await asyncio.to_thread(main, argv) == 1
    err = capsys.readouterr().err
    assert "the agent failed to go back to its state before an independent question" in err
    resume = err.rstrip().splitlines()[-1]
    assert "continue the run with" in err.rstrip().splitlines()[-2]
    assert resume.endswith(f"--run-name stuck --results {tmp_path / 'results'} --quiet --no-report --resume")
