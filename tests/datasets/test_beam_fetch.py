"""BEAM's files fetched on first use, file by file, from a local HTTP server (127.0.0.1) laid out like the repository
(`LTM_BEAM_URL`), never the real data: only the files a chat needs (the truncated conversation where the commit has
one), each checked against the git blob id the pinned commit records, kept in the cache and read from there after;
a run of `--limit 2` fetches two chats; a wrong file or no network is one line and leaves nothing behind."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from ltm_harness._api import run_async
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.beam import fetch
from ltm_harness._interop.beam.fetch import fetched_source, git_blob_id, pinned_files
from ltm_harness.testing import FileServer, load_script, make_config

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "beam_data.py")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return gen.write_dataset(tmp_path_factory.mktemp("beam"), "100K", 3)


@pytest.fixture(scope="module")
def server(tree) -> Iterator[FileServer]:
    routes = {f"/mirror/{p.relative_to(tree).as_posix()}": (200, p.read_bytes(), None)
              for p in tree.rglob("*.json")}
    with FileServer(routes).serving() as s:
        yield s


@pytest.fixture
def pinned(tree, monkeypatch) -> dict[str, tuple[str, int | None]]:
    """The generated files as the pinned commit's (their blob ids), as the real table lists the real ones."""
    table = {p.relative_to(tree / "chats").as_posix(): (git_blob_id(p), p.stat().st_size)
             for p in (tree / "chats").rglob("*.json")}
    monkeypatch.setattr(fetch, "pinned_files", lambda: table)
    return table


@pytest.fixture
def cache(tmp_path, monkeypatch, server) -> Path:
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_BEAM_URL", f"{server.url}/mirror")
    monkeypatch.delenv("LTM_BEAM_SHA1", raising=False)
    return tmp_path / "cache"


def cached(cache: Path) -> list[str]:
    """The data files in the cache (the test definitions runs keep there are not data: `definitions/`)."""
    return sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")
                  if p.is_file() and p.relative_to(cache).parts[0] != "definitions") if cache.exists() else []


def test_the_real_table_pins_every_chat_of_every_scale():
    files = pinned_files()
    for scale, n in fetch.CHATS.items():
        assert all(f"{scale}/{k}/{fetch.PROBING}" in files for k in range(1, n + 1))
        assert all(f"{scale}/{k}/chat.json" in files for k in range(1, n + 1))
    assert sum(p.startswith("100K/") and p.endswith("chat_trunecated.json") for p in files) == 10
    assert sum(p.startswith("1M/") and p.endswith("chat_trunecated.json") for p in files) == 16
    assert sum(p.startswith("10M/") and p.endswith("chat_trunecated.json") for p in files) == 10


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_blob_id_is_gits(tmp_path):
    path = tmp_path / "f.json"
    path.write_bytes(b'[{"x": "\xc3\xa9"}]\n')
    assert git_blob_id(path) == subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True,
                                               check=True).stdout.strip()


def test_a_chat_fetches_only_its_questions_and_the_file_the_reference_plays(pinned, cache, server, capsys):
    source = fetched_source("100K", 1)
    assert source.kind == "truncated"
    assert cached(cache) == ["beam/chats/100K/1/chat_trunecated.json",
                             "beam/chats/100K/1/probing_questions/probing_questions.json"]
    assert "beam: downloading" in capsys.readouterr().err
    hits = dict(server.hits)
    again = fetched_source("100K", 1)  # from the cache, checked again, not downloaded
    assert again.files == source.files and server.hits == hits
    assert fetched_source("100K", 2).kind == "full"


def test_a_file_that_is_not_the_pinned_one_is_refused_and_not_kept(pinned, cache, monkeypatch):
    pinned["100K/2/chat.json"] = ("0" * 40, None)
    with pytest.raises(DefinitionError) as err:
        fetched_source("100K", 2)
    text = str(err.value)
    assert "git blob id is not 0000000000" in text and "LTM_BEAM_SHA1=none" in text and "\n" not in text
    assert "beam/chats/100K/2/chat.json" not in cached(cache)
    monkeypatch.setenv("LTM_BEAM_SHA1", "none")  # another version: the structure alone decides
    assert fetched_source("100K", 2).kind == "full"


def test_offline_is_one_line_saying_what_to_do(pinned, cache, monkeypatch):
    monkeypatch.setenv("LTM_BEAM_URL", "http://127.0.0.1:9/mirror")
    with pytest.raises(DefinitionError) as err:
        fetched_source("100K", 3)
    text = str(err.value)
    assert "offline?" in text and "data_dir" in text and "--exclude beam" in text and "\n" not in text
    assert cached(cache) == []


def test_a_chat_the_commit_does_not_have_is_one_line(pinned, cache):
    with pytest.raises(DefinitionError, match="100K has chats 1 to 20"):
        fetched_source("100K", 4)


async def test_a_run_with_limit_2_fetches_two_chats(pinned, cache, server):
    cfg = make_config([{"name": "beam", "args": {"scale": "100K"}}], span=32000, examples=3)
    out = await run_async(cfg, ["null"], results=cache.parent / "results", limit=2)
    assert len(out.results("null")) == 40
    assert sorted({p.split("/")[3] for p in cached(cache)}) == ["1", "2"]
