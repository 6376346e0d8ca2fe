"""Every place the harness prints or stores a URL, exercised with a URL that holds a user:password and query
secrets (`token=`, a presigned URL's `X-Amz-Signature` / `X-Goog-Signature` / `sig=`): none of them may show.

The call sites were found by search (`grep -rn` for print/warn/echo/progress/console and for error messages that
format a URL variable, over ltm_harness/ and datasets/), not from memory; each one is named in a test below:

* `_authoring/datafiles.py`: the download start line (`_progress`, off a terminal; LoCoMo, LongMemEval, any
  dataset's RemoteFile), and every error of `_download` / `fetch_file`: HTTP status, size offered, unreachable,
  broke off / deadline, redirect refused (with the target's secrets too), sha256 mismatch, damaged file, and
  `RemoteFile.by_hand()` inside each;
* `_cli/main.py`: every error line (`one_line`); `_cli/commands/run.py`, `rescore.py`, `grid.py`, `estimate.py`,
  `_options.py`: warning/note/error lines;
* `_engine/channel.py`: an agent's error as recorded in events, summaries and reports;
* `_agents/http_agent.py` (`shown_url`) and `_agents/specs.py` (`display_spec`): agent names in folders, events,
  summaries, progress lines;
* `_llm/endpoint.py` (`display_url`): endpoint errors; `_runner/prepare.py`: the saved run_config.json;
* `_agents/frameworks/letta.py`: a spec with credentials; `_grid/executors.py`: Ray address errors.
(`_cli/commands/mock_llm.py` prints the URL of the mock server it started itself on 127.0.0.1: no secret can be in
it. `datasets/chapterbreak.py` shows its built-in constant URL.)
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ltm_harness._authoring import download
from ltm_harness._authoring.datafiles import RemoteFile, fetch_json
from ltm_harness._cli.main import main as cli
from ltm_harness._cli.main import one_line
from ltm_harness._errors import DefinitionError, LTMError

SECRETS = ("ALICEUSER", "PASSWORD1", "TOKEN2", "AMZSIG3", "GOOGSIG4", "AZSIG5", "NEXTTOKEN9")
QUERY = "token=TOKEN2&X-Amz-Signature=AMZSIG3&X-Goog-Signature=GOOGSIG4&sig=AZSIG5"


def secret_url(base: str, path: str) -> str:
    """`base` (http://127.0.0.1:PORT) with ALICEUSER:PASSWORD1@ and the secret query on `path`."""
    scheme, _, rest = base.partition("://")
    return f"{scheme}://ALICEUSER:PASSWORD1@{rest}{path}?{QUERY}"


def clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text[max(0, text.find(secret) - 200):text.find(secret) + 60])


class Handler(BaseHTTPRequestHandler):
    """Any path, query ignored: /junk* a 200 body that is no data file, /big* a 200 offering too much, /redirect*
    a 302 to a file: URL with a token of its own, /slow* a body that never comes; else 404."""

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if "/redirect" in path:
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd?token=NEXTTOKEN9")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif "/junk" in path or "/big" in path or "/slow" in path:
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 40) if "/big" in path else "100")
            self.end_headers()
            if "/slow" in path:
                time.sleep(3)
                return
            self.wfile.write(b"<html>a login page, not JSON</html>".ljust(100))
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LTM_HTTP_TIMEOUT", "LTM_LOCOMO_SHA256", "LTM_LOCOMO_URL",
                 "LTM_LONGMEMEVAL_URL", download.DEADLINE_ENV, download.MIN_RATE_ENV):
        monkeypatch.delenv(name, raising=False)


def mine(url: str, sha256: str | None = None) -> RemoteFile:
    return RemoteFile(dataset="mine", name="data.json", url=url, sha256=sha256, max_bytes=1 << 20,
                      max_json_bytes=1 << 20, env_prefix="LTM_MINE_SITE", compression="none")


def failing(call: Callable[[], Any]) -> str:
    with pytest.raises(LTMError) as err:
        call()
    return str(err.value)


# -- datafiles: the start line and every error ---------------------------------------------------------------------

@pytest.mark.parametrize("path, sha, said", [
    ("/junk.json", None, "is damaged or not the right one"),
    ("/junk.json", "0" * 64, "has sha256"),
    ("/missing.json", None, "failed with HTTP 404"),
    ("/big.json", None, "offers 1,099,511,627,776 bytes"),
    ("/redirect.json", None, "redirects to file:///etc/passwd?token=***, not followed"),
])
def test_download_lines_and_errors_show_no_secret(base, capsys, path, sha, said):
    text = failing(lambda: fetch_json(mine(secret_url(base, path), sha), lambda d, p: None, quiet=False))
    assert said in text and "http://***@127.0.0.1" in text and "token=***&X-Amz-Signature=***" in text
    assert "download http://***@127.0.0.1" in text  # by_hand() says the redacted URL too
    err = capsys.readouterr().err
    if path == "/junk.json":
        assert "mine: downloading http://***@127.0.0.1" in err  # the start line (not a terminal)
    clean(text, err)


def test_unreachable_and_deadline_errors_show_no_secret(base, monkeypatch):
    text = failing(lambda: fetch_json(mine(secret_url("http://127.0.0.1:9", "/f.json")), lambda d, p: None, True))
    assert "cannot reach http://***@127.0.0.1:9/f.json?token=***" in text
    monkeypatch.setenv(download.DEADLINE_ENV, "0.5")
    text2 = failing(lambda: fetch_json(mine(secret_url(base, "/slow.json")), lambda d, p: None, True))
    assert "did not finish within 0.5 s" in text2
    clean(text, text2)


def test_locomo_and_longmemeval_start_lines_show_no_secret(base, monkeypatch, capsys):
    from ltm_harness._interop.locomo.fetch import load_locomo
    from ltm_harness._interop.longmemeval.fetch import data_path

    monkeypatch.setenv("LTM_LOCOMO_URL", secret_url(base, "/junk/locomo10.json"))
    monkeypatch.setenv("LTM_LOCOMO_SHA256", "none")
    locomo = failing(lambda: load_locomo(None, quiet=False))
    monkeypatch.setenv("LTM_LONGMEMEVAL_URL", base.replace("http://", "http://ALICEUSER:PASSWORD1@") + "/junk")
    longmemeval = failing(lambda: data_path("s", None, quiet=False))
    err = capsys.readouterr().err
    assert "locomo: downloading http://***@127.0.0.1" in err and "?token=***&X-Amz-Signature=***" in err
    assert "longmemeval: downloading http://***@127.0.0.1" in err
    clean(locomo, longmemeval, err)


# -- the command line, the engine, agents and endpoints --------------------------------------------------------------

def test_an_error_line_of_the_cli_shows_no_secret(base):
    line = one_line(f"could not fetch {secret_url(base, '/x')} (see https://h/p#access_token=NEXTTOKEN9)")
    assert "http://***@127.0.0.1" in line and "#access_token=***" in line
    clean(line)


FAILING_AGENT = '''
from ltm_harness import Agent
class Leaky(Agent):
    async def reply(self, message, oracle_hint=None):
        raise RuntimeError("GET {url} answered 403")
'''


def test_a_run_stores_and_prints_no_secret(base, tmp_path, capsys):
    """An agent whose error names a presigned URL, an HTTP agent whose URL holds credentials, and a judge base URL
    with both: the events, summary, report, saved config, folder names and every printed line are clean."""
    agent = tmp_path / "leaky.py"
    agent.write_text(FAILING_AGENT.format(url=secret_url("https://bucket.example", "/o")), encoding="utf-8")
    config = tmp_path / "c.yml"
    config.write_text("config: {run_name: x, judge: {base_url: '" + secret_url("http://127.0.0.1:9", "/v1") + "'}}\n"
                      "datasets:\n  args: {memory_span: 1000, dataset_examples: 1}\n  datasets:\n    - name: colours\n",
                      encoding="utf-8")
    agents = ["-a", f"{agent}:Leaky", "-a", secret_url("http://127.0.0.1:9", "/chat")]
    # the check before the first turn refuses the unreachable HTTP agent in one line, without its secrets
    assert cli(["run", "-c", str(config), *agents, "--results", "results"]) == 2
    refused = capsys.readouterr()
    assert "cannot be reached" in refused.err and not (tmp_path / "results").exists()
    clean(refused.out, refused.err)
    # with the check off, the run plays and every file it writes is clean too
    code = cli(["run", "-c", str(config), *agents, "--results", "results", "--set", "config.preflight=false"])
    out = capsys.readouterr()
    assert code != 0 and "error" in out.err  # the agents failed, and said so
    written = [p for p in (tmp_path / "results").rglob("*") if p.is_file()]
    assert any(p.name == "events.jsonl" for p in written) and any(p.name == "run_config.json" for p in written)
    recorded = "".join(p.read_text(encoding="utf-8", errors="replace") for p in written)
    assert "https://***@bucket.example/o?token=***&X-Amz-Signature=***" in recorded  # the reason is kept, redacted
    clean(out.out, out.err, recorded, *(str(p) for p in written))


def test_endpoint_letta_and_ray_errors_show_no_secret():
    from ltm_harness._agents.frameworks.letta import parse_letta_spec
    from ltm_harness._grid.executors import check_reachable
    from ltm_harness._llm.endpoint import resolve_endpoint

    endpoint = failing(lambda: resolve_endpoint("the judge", secret_url("https://llm.example", "/v1")))
    letta = failing(lambda: parse_letta_spec("letta:" + secret_url("https://letta.example", "/agent-1")))
    ray_bad = failing(lambda: check_reachable("ray://ALICEUSER:PASSWORD1@127.0.0.1:x?token=TOKEN2"))
    ray_down = failing(lambda: check_reachable("ALICEUSER:PASSWORD1@127.0.0.1:9", timeout=1))
    query_only = failing(lambda: parse_letta_spec(f"letta:https://letta.example/agent-1?{QUERY}"))
    assert "no API key for https://llm.example/v1" in endpoint and "letta:https://***@letta.example" in letta
    assert "letta:https://letta.example/agent-1?token=***" in query_only
    clean(query_only)
    assert "Ray address ***@127.0.0.1:9: nothing answers there" in ray_down
    clean(endpoint, letta, ray_bad, ray_down)


def test_a_download_error_is_a_definition_error_not_a_traceback(base):
    with pytest.raises(DefinitionError):
        fetch_json(mine(secret_url(base, "/missing.json")), lambda d, p: None, quiet=True)


@pytest.mark.parametrize("url, shown", [
    ("https://b.s3.amazonaws.com/k.json?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAX%2F2024&X-Amz-Signature=ab12",
     "https://b.s3.amazonaws.com/k.json?X-Amz-Algorithm=***&X-Amz-Credential=***&X-Amz-Signature=***"),
    ("https://storage.googleapis.com/b/k?X-Goog-Signature=ff00&X-Goog-Expires=900",
     "https://storage.googleapis.com/b/k?X-Goog-Signature=***&X-Goog-Expires=***"),
    ("https://a.blob.core.windows.net/c/k?sv=2022&sig=Zz%3D&se=2030", "https://a.blob.core.windows.net/c/k?sv=***&sig=***&se=***"),
    ("https://u:p@h/x?flag&empty=&v=1#access_token=t&x", "https://***@h/x?flag&empty=&v=***#access_token=***&x"),
    ("https://h/x#section-2", "https://h/x#section-2"),
    ("u:p@h:6379", "***@h:6379"),
    ("http://[::1/x?token=t", "http://[::1/x?***"),  # does not parse: the whole query masked
])
def test_the_redactor_masks_every_query_value(url, shown):
    from ltm_harness._guard.redact import redact, redact_url

    assert redact_url(url) == shown
    if "://" in url:  # free text: URLs are found by their scheme (an agent spec such as openai:model@300 is no URL)
        assert redact(f"fetching {url} failed") == f"fetching {shown} failed"
    assert redact("openai:mock-model@300 and langgraph:g.py:graph") == "openai:mock-model@300 and langgraph:g.py:graph"
