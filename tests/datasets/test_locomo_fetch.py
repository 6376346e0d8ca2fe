"""LoCoMo's data file on first use: served by a local HTTP server (127.0.0.1) as the synthetic fixture, downloaded
once and then read from the cache; every failure (404, truncated, not JSON, wrong shape, wrong sha256, offline) is
one line saying what to do and leaves nothing in the cache; a file of the user's is read instead when given."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

import pytest

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.locomo.fetch import REMOTE, load_locomo
from ltm_harness.testing import FileServer

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
GOOD = FIXTURE.read_bytes()


@pytest.fixture(scope="module")
def server() -> Iterator[FileServer]:
    routes = {
        "/locomo10.json": (200, GOOD, None),
        "/truncated.json": (200, GOOD[: len(GOOD) // 2], len(GOOD)),  # the connection closes before the declared end
        "/cut.json": (200, GOOD[: len(GOOD) // 2], None),  # the server says it is all: the JSON is cut
        "/login.json": (200, b"<html>please log in</html>", None),
        "/other.json": (200, b'{"ao3": {}, "pg19": {}}', None),
        "/badturn.json": (200, GOOD.replace(b'"text": "How was Lisbon?"', b'"words": "How was Lisbon?"'), None),
    }
    with FileServer(routes).serving() as s:
        yield s


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_LOCOMO_SHA256", hashlib.sha256(GOOD).hexdigest())
    return tmp_path / "cache"


def serve(monkeypatch, server: FileServer, path: str) -> str:
    monkeypatch.setenv("LTM_LOCOMO_URL", server.url + path)
    return server.url + path


def leftovers(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


def test_first_use_downloads_checks_and_keeps_the_file_then_reads_the_cache(server, cache, monkeypatch, capsys):
    serve(monkeypatch, server, "/locomo10.json")
    before = server.hits.get("/locomo10.json", 0)
    data = load_locomo(None, quiet=False)
    assert [s.sample_id for s in data.samples] == ["synthetic-1", "synthetic-2"] and data.quirks.int_answers == 1
    assert leftovers(cache) == ["locomo/locomo10.json"] and (cache / "locomo" / "locomo10.json").read_bytes() == GOOD
    err = capsys.readouterr().err
    assert f"locomo: downloading {server.url}/locomo10.json" in err and "locomo: saved " in err
    again = load_locomo(None, quiet=True)
    assert server.hits["/locomo10.json"] == before + 1  # the second load reads the cache
    assert again == data and capsys.readouterr().err == ""


def test_a_cached_file_damaged_later_names_the_field_and_says_to_delete_it(cache):
    path = cache / "locomo" / "locomo10.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD.replace(b'"speaker_b": "Dara",', b""))
    with pytest.raises(DefinitionError) as err:
        load_locomo(None, quiet=True)
    text = str(err.value)
    assert text.startswith(f"{path}: [1].conversation: 'speaker_b' is missing; this is not the LoCoMo file")
    assert text.endswith("; delete it to download it again") and "\n" not in text


@pytest.mark.parametrize("path, sha, message", [
    ("/missing.json", None, "failed with HTTP 404"),
    ("/truncated.json", None, "broke off"),
    ("/cut.json", "none", "is damaged or not the right one (its content is not JSON"),
    ("/login.json", "none", "is damaged or not the right one (its content is not JSON"),
    ("/other.json", "none", "the file holds an object, not a list of samples; this is not the LoCoMo file"),
    ("/badturn.json", "none", "[0].conversation.session_2[0]: 'text' is missing; this is not the LoCoMo file"),
    ("/locomo10.json", "0" * 64, f"has sha256 {hashlib.sha256(GOOD).hexdigest()}, not the expected {'0' * 64}"),
])
def test_a_failed_fetch_is_one_line_saying_what_to_do_and_leaves_nothing(server, cache, monkeypatch, path, sha,
                                                                          message):
    url = serve(monkeypatch, server, path)
    if sha is not None:
        monkeypatch.setenv("LTM_LOCOMO_SHA256", sha)
    with pytest.raises(DefinitionError) as err:
        load_locomo(None, quiet=True)
    text = str(err.value)
    assert message in text and url in text and "\n" not in text
    assert f"put it at {cache / 'locomo' / 'locomo10.json'}" in text and "exclude=['locomo']" in text
    assert leftovers(cache) == []


def test_offline_says_how_to_do_without_the_download(cache, monkeypatch):
    monkeypatch.setenv("LTM_LOCOMO_URL", "http://127.0.0.1:9/locomo10.json")  # nothing listens: connection refused
    with pytest.raises(DefinitionError) as err:
        load_locomo(None, quiet=True)
    text = str(err.value)
    assert text.startswith("locomo: cannot reach http://127.0.0.1:9/locomo10.json") and "offline?" in text
    assert "\n" not in text and leftovers(cache) == []
    for way in (f"put it at {cache / 'locomo' / 'locomo10.json'}", "set LTM_LOCOMO_URL to a mirror",
                "give your own copy with the dataset's `args: {data_file: PATH}`", "exclude=['locomo']"):
        assert way in text


def test_a_file_of_the_users_is_read_instead_and_never_cached(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("LTM_LOCOMO_URL", "http://127.0.0.1:9/locomo10.json")
    own = tmp_path / "my-locomo.json"
    own.write_bytes(GOOD)
    assert len(load_locomo(own, quiet=True).samples) == 2 and leftovers(cache) == []
    with pytest.raises(DefinitionError, match=f"locomo: the data file {tmp_path / 'nope.json'} is missing; download "
                                              "data/locomo10.json from https://github.com/snap-research/locomo"):
        load_locomo(tmp_path / "nope.json", quiet=True)
    own.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(DefinitionError, match=f"^{own}: its content is not JSON"):
        load_locomo(own, quiet=True)
    own.write_text('[{"sample_id": "x"}]', encoding="utf-8")
    with pytest.raises(DefinitionError, match=f"^{own}: \\[0\\]: 'conversation' is missing"):
        load_locomo(own, quiet=True)


def test_the_reference_file_is_pinned_to_a_commit_and_its_sha256(monkeypatch):
    monkeypatch.delenv("LTM_LOCOMO_URL", raising=False)
    monkeypatch.delenv("LTM_LOCOMO_SHA256", raising=False)
    assert REMOTE.source_url == ("https://raw.githubusercontent.com/snap-research/locomo/"
                                 "cbfbc1dba6bc53d00625212a0f22d55ffee7c1fc/data/locomo10.json")
    assert REMOTE.expected_sha256 == "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
    assert REMOTE.compression == "none"
    monkeypatch.setenv("LTM_LOCOMO_SHA256", "none")
    assert REMOTE.expected_sha256 is None  # the structure check alone decides (a later version of the file)
