"""A data download is bounded in time (an overall deadline and a minimum rate, besides the per-read timeout) and in
where it may be redirected (docs/security.md): each refusal is one line, and nothing connects to an address the
policy refuses. Servers run on 127.0.0.1 only; a guard fails the test if anything tries to connect elsewhere."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from ltm_harness._authoring import download
from ltm_harness._authoring.datafiles import RemoteFile, fetch_json
from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._guard.redirects import MAX_REDIRECTS, address_kind, host_kind, refusal

BODY = json.dumps({"ok": [1, 2, 3]}).encode()
TRICKLE_GAPS = (0.2, 0.9, 2.0, 0.5)  # seconds between the trickled bytes, in turn


class Server:
    """On 127.0.0.1: /good (BODY), /trickle (1 byte every 0.2-2 s of a declared 1,000), /to?url=... (302 there),
    /hops/N (N more redirects, then /good)."""

    def __init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path, _, query = self.path.partition("?")
                if path == "/good":
                    self._send(200, BODY)
                elif path == "/trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    try:
                        for k in range(1000):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(TRICKLE_GAPS[k % len(TRICKLE_GAPS)])
                            if server.stopping.is_set():
                                return
                    except OSError:  # the client hung up: as it should
                        return
                elif path == "/to":
                    self._redirect(query.removeprefix("url="))
                elif path.startswith("/hops/"):
                    left = int(path.rsplit("/", 1)[1])
                    self._redirect(f"/hops/{left - 1}" if left > 1 else "/good")
                else:
                    self._send(404, b"not found")

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _redirect(self, where: str) -> None:
                self.send_response(302)
                self.send_header("Location", where)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    s = Server()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    yield s
    s.stopping.set()
    s.httpd.shutdown()
    s.httpd.server_close()


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    """Fail on any connection to an address that is not the loopback (none must be tried), and use a fresh cache."""
    tried: list[Any] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if not str(host).startswith(("127.", "::1", "localhost")):
            tried.append(address)
            raise AssertionError(f"a test tried to connect to {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    for name in (download.DEADLINE_ENV, download.MIN_RATE_ENV):
        monkeypatch.delenv(name, raising=False)
    return tried


def remote(url: str) -> RemoteFile:
    return RemoteFile(dataset="mine", name="data.json", url=url, sha256=None, max_bytes=1 << 20,
                      max_json_bytes=1 << 20, env_prefix="LTM_MINE_TEST", compression="none")


def fetch(url: str) -> Any:
    return fetch_json(remote(url), lambda data, path: None, quiet=True)


def refused(url: str) -> str:
    with pytest.raises(DefinitionError) as err:
        fetch(url)
    text = str(err.value)
    assert "\n" not in text
    return text


# -- time ---------------------------------------------------------------------------------------------------------

def test_a_trickling_server_is_stopped_by_the_deadline_in_one_line(server, monkeypatch, capsys):
    monkeypatch.setenv(download.DEADLINE_ENV, "1.5")
    monkeypatch.setenv(download.MIN_RATE_ENV, "0")
    started = time.monotonic()
    text = refused(f"{server.url}/trickle")
    took = time.monotonic() - started
    assert text.startswith(f"mine: the download of {server.url}/trickle did not finish within 1.5 s (")
    assert "LTM_DOWNLOAD_DEADLINE gives more seconds" in text and "bytes received" in text
    assert 1.5 <= took < 60  # stopped by the deadline (the line says which limit), not before it; not hung
    assert not list((Path(download.os.environ["LTM_HARNESS_CACHE"]) / "mine").glob("*"))  # nothing left behind
    with capsys.disabled():
        print(f"\n  trickle: one line after {took:.2f} s: {text[:160]}...")


def test_a_trickling_server_is_stopped_by_the_minimum_rate(server, monkeypatch):
    monkeypatch.setenv(download.MIN_RATE_ENV, "1000")
    monkeypatch.setattr(download, "RATE_WINDOW", 0.5)
    started = time.monotonic()
    text = refused(f"{server.url}/trickle")
    assert "bytes/s over" in text and "under the minimum of 1,000 bytes/s (LTM_DOWNLOAD_MIN_RATE; 0 turns" in text
    assert 0.5 <= time.monotonic() - started < 60  # after a window of the rate (the line says which limit); not hung


@pytest.mark.parametrize("value", ["soon", "-3", "inf", "nan"])
def test_a_bad_deadline_setting_is_one_line(server, monkeypatch, value):
    monkeypatch.setenv(download.DEADLINE_ENV, value)
    with pytest.raises(ConfigError, match=f"^{download.DEADLINE_ENV}=.*: give a number of seconds"):
        fetch(f"{server.url}/good")


def test_a_download_within_its_bounds_is_kept(server):
    assert fetch(f"{server.url}/good") == {"ok": [1, 2, 3]}


# -- redirects ----------------------------------------------------------------------------------------------------

def test_redirects_on_the_loopback_are_followed_up_to_the_bound(server):
    assert fetch(f"{server.url}/hops/{MAX_REDIRECTS}") == {"ok": [1, 2, 3]}
    other = server.url.replace("127.0.0.1", "localhost")  # another name of the same machine
    assert fetch(f"{server.url}/to?url={other}/good") == {"ok": [1, 2, 3]}


def test_more_redirects_than_the_bound_are_refused(server):
    text = refused(f"{server.url}/hops/{MAX_REDIRECTS + 1}")
    assert f"not followed: it redirects more than {MAX_REDIRECTS} times (docs/security.md)" in text


@pytest.mark.parametrize("target, reason", [
    ("file:///etc/passwd", "it leads to a file: URL, not http or https"),
    ("ftp://127.0.0.1/data.json", "it leads to a ftp: URL, not http or https"),
    ("http://10.0.0.1/data.json", "it leads from the loopback host named (127.0.0.1) to another private address "
                                  "(10.0.0.1) that was not named"),
    ("http://169.254.169.254/latest/meta-data", "to another link-local address (169.254.169.254)"),
    ("http://[fd00::1]/data.json", "to another private address (fd00::1)"),
])
def test_a_redirect_the_policy_refuses_is_one_line_and_never_connected_to(server, loopback_only, target, reason):
    text = refused(f"{server.url}/to?url={target}")
    assert text.startswith(f"mine: {server.url}/to?url=*** redirects to ") and reason in text
    assert loopback_only == []  # refused before any connection


# the rule itself, for hosts the tests cannot reach (nothing here connects or resolves: IP literals and a stub)

NAMES = {"cdn.example": frozenset({"93.184.216.34"}), "rebind.example": frozenset({"10.1.2.3"}),
         "localhost": frozenset({"127.0.0.1", "::1"}), "nas.lan": frozenset({"192.168.1.20"})}


def judge(origin: str, target: str, current: str | None = None) -> str | None:
    def resolve(host: str) -> frozenset[str]:
        return NAMES.get(host) or frozenset([host.strip("[]")])

    return refusal(origin, current or origin, target, resolve)


def test_address_kinds():
    assert [address_kind(a) for a in ("8.8.8.8", "127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "172.16.0.1",
                                      "169.254.169.254", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "0.0.0.0",
                                      "100.64.0.1")] == [
        "public", "loopback", "loopback", "private", "private", "private", "link-local", "link-local", "private",
        "loopback", "private", "other"]
    assert host_kind(frozenset()) == "public"  # not resolved here: a proxy or the connection decides
    assert host_kind(frozenset({"93.184.216.34", "10.0.0.1"})) == "private"  # one local address is enough


@pytest.mark.parametrize("origin, target, current, said", [
    ("https://cdn.example/f", "https://93.184.216.35/f", None, None),  # public to public: a CDN
    ("https://cdn.example/f", "http://cdn.example/f", None, "from https down to plain http"),
    ("http://cdn.example/f", "http://127.0.0.1/f", None, "from a public host to a loopback address"),
    ("https://cdn.example/f", "https://rebind.example/f", None, "from a public host to a private address"),
    ("https://cdn.example/f", "https://169.254.169.254/", None, "from a public host to a link-local address"),
    ("http://127.0.0.1:8000/f", "http://localhost:9000/f", None, None),  # the loopback stays the loopback
    ("http://127.0.0.1:8000/f", "https://cdn.example/f", None, None),  # a mirror may send on to a public host
    ("http://127.0.0.1:8000/f", "http://127.0.0.1/f", "http://cdn.example/x", "from a public host to a loopback"),
    ("http://nas.lan/f", "http://192.168.1.20:8080/f", None, None),  # the private host named, another port
    ("http://nas.lan/f", "http://192.168.1.21/f", None, "from the private host named (nas.lan) to another private"),
    ("http://nas.lan/f", "http://127.0.0.1/f", None, "to another loopback address"),
    ("http://127.0.0.1/f", "data:text/plain,hi", None, "a data: URL"),
])
def test_the_redirect_rule(origin, target, current, said):
    reason = judge(origin, target, current)
    assert (reason is None) if said is None else (reason is not None and said in reason), reason


def test_an_unresolvable_name_is_judged_public():
    assert refusal("https://93.184.216.34/f", "https://93.184.216.34/f", "https://nowhere/f",
                   lambda host: frozenset() if host == "nowhere" else frozenset([host])) is None


def test_the_policy_is_documented():
    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text(encoding="utf-8")
    for said in ("## Downloads", f"at most {MAX_REDIRECTS}", "file:", "https", "loopback", "private", "link-local",
                 download.DEADLINE_ENV, download.MIN_RATE_ENV):
        assert said in page, said


def test_the_sha256_of_a_redirected_download_is_of_what_arrived(server, monkeypatch):
    monkeypatch.setenv("LTM_MINE_TEST_SHA256", hashlib.sha256(BODY).hexdigest())
    assert fetch(f"{server.url}/hops/2") == {"ok": [1, 2, 3]}
