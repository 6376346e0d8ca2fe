"""LongMemEval's files fetched on first use, from a local HTTP server (127.0.0.1) serving the tiny test file as a
mirror folder: kept in the cache and read from there after; every failure (404, cut, not JSON, wrong shape,
offline) is one line saying what to do and leaves nothing in the cache; a local file is used as it is, checked."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._interop.longmemeval.data import iter_questions
from ltm_harness._interop.longmemeval.fetch import FILES, check_file, data_path, remote_file
from ltm_harness.testing import NO_LENGTH, FileServer

TINY = Path(__file__).resolve().parents[1] / "data" / "longmemeval" / "tiny.json"
GOOD = TINY.read_bytes()
NAME = FILES["s"]


@pytest.fixture(scope="module")
def server() -> Iterator[FileServer]:
    routes = {
        f"/good/{NAME}": (200, GOOD, None),
        f"/good/{FILES['oracle']}": (200, GOOD, None),
        f"/truncated/{NAME}": (200, GOOD[: len(GOOD) // 2], len(GOOD)),
        f"/cut/{NAME}": (200, GOOD[: len(GOOD) // 2], NO_LENGTH),  # no length said: the connection just ends
        f"/html/{NAME}": (200, b"<html><body>Sign in to continue</body></html>", None),
        f"/shape/{NAME}": (200, b'[{"question": "what?", "answer": 3}]', None),
        f"/empty/{NAME}": (200, b"[]", None),
    }
    with FileServer(routes).serving() as s:
        yield s


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LTM_LONGMEMEVAL_SHA256", raising=False)
    return tmp_path / "cache"


def mirror(monkeypatch, server: FileServer, folder: str) -> str:
    monkeypatch.setenv("LTM_LONGMEMEVAL_URL", f"{server.url}/{folder}/")
    return f"{server.url}/{folder}/{NAME}"


def leftovers(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


def test_first_use_downloads_checks_and_keeps_the_file_then_reads_the_cache(server, cache, monkeypatch, capsys):
    url = mirror(monkeypatch, server, "good")
    before = server.hits.get(f"/good/{NAME}", 0)
    path = data_path("s")
    assert path == cache / "longmemeval" / NAME and path.read_bytes() == GOOD
    assert leftovers(cache) == [f"longmemeval/{NAME}"]
    err = capsys.readouterr().err
    assert f"longmemeval: downloading {url}" in err and f"longmemeval: saved {path}" in err
    assert data_path("s", quiet=True) == path and server.hits[f"/good/{NAME}"] == before + 1  # the cache answers
    assert len(list(iter_questions(path))) == 9
    assert data_path("oracle", quiet=True) == cache / "longmemeval" / FILES["oracle"]  # each variant its own file


def test_a_cached_file_damaged_later_says_to_delete_it(cache):
    path = cache / "longmemeval" / NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD[:-40])
    with pytest.raises(DefinitionError) as err:
        data_path("s", quiet=True)
    assert str(err.value).startswith(f"{path}: ") and str(err.value).endswith("; delete it to download it again")


@pytest.mark.parametrize("folder, message", [
    ("missing", "failed with HTTP 404"),
    ("truncated", "broke off"),
    ("cut", "does not end with the closing ']' of its list of questions; the file is cut"),
    ("html", "not a JSON list"),
    ("shape", "question 0: question_id: Field required"),
    ("empty", "holds no questions"),
])
def test_a_failed_fetch_says_what_to_do_and_leaves_nothing(server, cache, monkeypatch, folder, message):
    url = mirror(monkeypatch, server, folder)
    with pytest.raises(DefinitionError) as err:
        data_path("s", quiet=True)
    text = str(err.value)
    assert message in text and url in text and "\n" not in text
    assert f"put it at {cache / 'longmemeval' / NAME}" in text and "exclude=['longmemeval']" in text
    assert "LTM_LONGMEMEVAL_URL to the URL of a mirror's folder" in text
    assert leftovers(cache) == []


def test_offline_is_one_line_saying_where_to_put_the_file(cache, monkeypatch):
    monkeypatch.setenv("LTM_LONGMEMEVAL_URL", "http://127.0.0.1:9")
    with pytest.raises(DefinitionError) as err:
        data_path("m", quiet=True)
    text = str(err.value)
    assert text.startswith(f"longmemeval: cannot reach http://127.0.0.1:9/{FILES['m']}") and "offline?" in text
    assert "\n" not in text and leftovers(cache) == []


def test_a_local_file_is_used_as_it_is_after_the_check(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("LTM_LONGMEMEVAL_URL", "http://127.0.0.1:9")
    assert data_path("s", data_file=TINY) == TINY and leftovers(cache) == []
    cut = tmp_path / "cut.json"
    cut.write_bytes(GOOD[:-3])
    for bad, message in ((cut, "does not end with the closing ']'"), (tmp_path / "none.json", "does not exist")):
        with pytest.raises(DefinitionError) as err:
            data_path("s", data_file=str(bad))
        assert str(err.value).startswith(str(bad)) and message in str(err.value) and "\n" not in str(err.value)


def test_the_published_files_and_an_unknown_variant(monkeypatch):
    monkeypatch.delenv("LTM_LONGMEMEVAL_URL", raising=False)
    hub = "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/"
    assert {v: remote_file(v).source_url for v in FILES} == {
        "oracle": hub + "longmemeval_oracle.json", "s": hub + "longmemeval_s_cleaned.json",
        "m": hub + "longmemeval_m_cleaned.json"}
    assert all(remote_file(v).expected_sha256 is None for v in FILES)  # the hub publishes none: the check decides
    with pytest.raises(ConfigError, match="variant 'xl' is not one of oracle, s, m"):
        remote_file("xl")


def test_the_check_reads_only_the_first_question(tmp_path):
    path = tmp_path / "f.json"
    first, rest = GOOD.split(b",\n", 1)
    path.write_bytes(first + b',\n{"not": "a question"}]')
    check_file(path)  # the start and the end are right: what lies between is the reader's to find
    with pytest.raises(DefinitionError, match="question 1: question_id: Field required"):
        list(iter_questions(path))
