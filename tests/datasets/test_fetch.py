"""chapterbreak's data file fetched on first use: from a local HTTP server (127.0.0.1) serving a synthetic zstd
file, with the bad cases (404, truncated, corrupt, not JSON, wrong shape, wrong sha256, too large, unreachable):
every failure is one line saying what to do, and leaves no file behind."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Iterator

import pytest
import zstandard

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._authoring.datafiles import RemoteFile, fetch_json
from ltm_harness._cli.main import main
from ltm_harness._errors import DefinitionError
from ltm_harness.testing import FileServer

ChapterBreak = known_datasets()["chapterbreak"]
mod = sys.modules[ChapterBreak.__module__]

DATA = mod.synthetic_data(seed=2, books=2, chapters=2, ctx_tokens=600, option_tokens=40)
GOOD = zstandard.ZstdCompressor().compress(json.dumps(DATA).encode())
# A stream with no content size in its frame header, as `zstd` on a pipe writes it.
STREAMED = zstandard.ZstdCompressor(write_content_size=False).compress(json.dumps(DATA).encode())


@pytest.fixture(scope="module")
def server() -> Iterator[FileServer]:
    routes = {
        "/good.zst": (200, GOOD, None),
        "/streamed.zst": (200, STREAMED, None),
        "/frames.zst": (200, zstandard.ZstdCompressor().compress(json.dumps(DATA).encode()[:1000])
                        + zstandard.ZstdCompressor().compress(json.dumps(DATA).encode()[1000:]), None),
        "/truncated.zst": (200, GOOD[: len(GOOD) // 2], len(GOOD)),
        "/corrupt.zst": (200, b"\x00garbage, not zstd at all" * 40, None),
        "/cut-frame.zst": (200, GOOD[: len(GOOD) // 2], None),  # the server says it is all: the frame is cut
        "/notjson.zst": (200, zstandard.ZstdCompressor().compress(b"<html>a login page</html>"), None),
        "/wrongshape.zst": (200, zstandard.ZstdCompressor().compress(json.dumps({"ao3": {}}).encode()), None),
        "/nosamples.zst": (200, zstandard.ZstdCompressor().compress(b'{"ao3": {}, "pg19": {}}'), None),
        "/badsample.zst": (200, zstandard.ZstdCompressor().compress(
            json.dumps({"ao3": {"b": [{"ctx": "x", "pos": "y"}]}, "pg19": {}}).encode()), None),
    }
    with FileServer(routes, redirects={"/redirect.zst": "/good.zst"}).serving() as s:
        yield s


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_CHAPTERBREAK_SHA256", hashlib.sha256(GOOD).hexdigest())
    return tmp_path / "cache"


def use(monkeypatch, server: FileServer, path: str) -> str:
    url = server.url + path
    monkeypatch.setenv("LTM_CHAPTERBREAK_URL", url)
    return url


def leftovers(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


def test_first_use_downloads_checks_and_keeps_the_file_then_reads_the_cache(server, cache, monkeypatch, capsys):
    use(monkeypatch, server, "/good.zst")
    before = server.hits.get("/good.zst", 0)
    examples = ChapterBreak(memory_span=8000, seed=0, page_tokens=256).generate_examples(2)
    assert len(examples) == 2 and examples[0].script[1].startswith("Page 1 of")
    assert leftovers(cache) == ["chapterbreak/chapterbreak_ctx_8192.zst"]
    assert (cache / "chapterbreak" / "chapterbreak_ctx_8192.zst").read_bytes() == GOOD
    assert "chapterbreak: downloading " + server.url + "/good.zst" in capsys.readouterr().err  # not a terminal: a line
    again = ChapterBreak(memory_span=8000, seed=0, page_tokens=256).generate_examples(2)
    assert server.hits["/good.zst"] == before + 1  # the second use reads the cache
    assert [e.script for e in again] == [e.script for e in examples]


def test_redirects_are_followed_and_streamed_frames_read(server, cache, monkeypatch):
    use(monkeypatch, server, "/redirect.zst")
    assert mod.REMOTE.path.parent == cache / "chapterbreak"
    assert len(ChapterBreak().load_samples()) == 4  # ao3: 2 books x 2 chapters
    (cache / "chapterbreak" / "chapterbreak_ctx_8192.zst").unlink()
    use(monkeypatch, server, "/streamed.zst")
    monkeypatch.setenv("LTM_CHAPTERBREAK_SHA256", "none")
    assert len(ChapterBreak(split="all").load_samples()) == 8
    (cache / "chapterbreak" / "chapterbreak_ctx_8192.zst").unlink()
    use(monkeypatch, server, "/frames.zst")  # a file of two zstd frames
    assert len(ChapterBreak(split="all").load_samples()) == 8


def test_a_cached_file_damaged_later_says_to_delete_it(cache, monkeypatch):
    path = cache / "chapterbreak" / "chapterbreak_ctx_8192.zst"
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD[:-10])
    with pytest.raises(DefinitionError, match=f"{path}: not a complete zstd file .*; delete it to download it again"):
        ChapterBreak().load_samples()


@pytest.mark.parametrize("path, sha, message", [
    ("/missing.zst", None, "failed with HTTP 404"),
    ("/truncated.zst", None, "broke off"),
    ("/corrupt.zst", "none", "is damaged or not the right one (not a complete zstd file"),
    ("/cut-frame.zst", "none", "not a complete zstd file"),
    ("/notjson.zst", "none", "its content is not JSON"),
    ("/wrongshape.zst", "none", "has no 'pg19' section of books"),
    ("/nosamples.zst", "none", "holds no chapter samples"),
    ("/badsample.zst", "none", "ao3.b[0].negs: Field required"),
    ("/good.zst", "0" * 64, "has sha256 " + hashlib.sha256(GOOD).hexdigest() + ", not the expected " + "0" * 64),
])
def test_a_failed_fetch_says_what_to_do_and_leaves_nothing(server, cache, monkeypatch, path, sha, message):
    url = use(monkeypatch, server, path)
    if sha is not None:
        monkeypatch.setenv("LTM_CHAPTERBREAK_SHA256", sha)
    with pytest.raises(DefinitionError) as err:
        ChapterBreak().load_samples()
    text = str(err.value)
    assert message in text and url in text and "\n" not in text
    assert f"put it at {cache / 'chapterbreak' / 'chapterbreak_ctx_8192.zst'}" in text
    assert "exclude=['chapterbreak']" in text  # said to a caller of the library (--exclude on the command line)
    assert leftovers(cache) == []


def test_the_reference_file_is_pinned_by_its_sha256(monkeypatch):
    monkeypatch.delenv("LTM_CHAPTERBREAK_SHA256", raising=False)
    monkeypatch.delenv("LTM_CHAPTERBREAK_URL", raising=False)
    assert mod.REMOTE.source_url.endswith("GoodAI/goodai-ltm-benchmark/releases/download/v1.1/chapterbreak_ctx_8192.zst")
    assert mod.REMOTE.expected_sha256 == "1567de8463149cfb314ab2ccc7e7acc17a3b262bccd70889e2d1e43be09043ed"


def test_too_large_a_download_is_refused(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path))
    remote = RemoteFile(dataset="small", name="f.zst", url=server.url + "/good.zst", sha256=None, max_bytes=100,
                        max_json_bytes=10_000_000, env_prefix="LTM_SMALL")
    with pytest.raises(DefinitionError, match="offers [0-9,]+ bytes, more than the 100"):
        fetch_json(remote, lambda data, path: None, quiet=True)
    remote = remote.model_copy(update={"max_bytes": 10_000_000, "max_json_bytes": 1000})
    with pytest.raises(DefinitionError, match="decompresses to more than 1,000 bytes"):
        fetch_json(remote, lambda data, path: None, quiet=True)
    assert leftovers(tmp_path) == []


def test_offline_a_run_stops_in_one_line_and_leaves_no_folder(cache, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LTM_CHAPTERBREAK_URL", "http://127.0.0.1:9/chapterbreak_ctx_8192.zst")
    code = main(["run", "-c", "benchmark-v3-32k", "-a", "null", "--datasets", "colours,chapterbreak",
                 "--results", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: chapterbreak: cannot reach http://127.0.0.1:9/") and "offline?" in err
    assert "--exclude chapterbreak" in err
    assert not (tmp_path / "results" / "benchmark-v3-32k").exists()  # no orphan definitions/ folder
    assert leftovers(cache) == []


@pytest.mark.slow
def test_the_readme_v3_command_runs_with_the_file_served_and_offline_without_chapterbreak(server, cache, tmp_path,
                                                                                          monkeypatch, capsys):
    """The issue's "done when": `run -c benchmark-v3-32k -a retrieval -a recent:8000` as given, with the file served
    locally, and offline with --exclude chapterbreak."""
    use(monkeypatch, server, "/good.zst")
    results = tmp_path / "results"
    assert main(["run", "-c", "benchmark-v3-32k", "-a", "retrieval", "-a", "recent:8000", "--quiet",
                 "--results", str(results)]) == 0
    summary = json.loads((results / "benchmark-v3-32k" / "retrieval" / "summary.json").read_text())
    assert {d["dataset"]: d["tests"] for d in summary["datasets"]}["chapterbreak"] == 3
    monkeypatch.setenv("LTM_CHAPTERBREAK_URL", "http://127.0.0.1:9/chapterbreak_ctx_8192.zst")
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "empty-cache"))
    assert main(["run", "-c", "benchmark-v3-32k", "-a", "retrieval", "-a", "recent:8000", "--quiet",
                 "--exclude", "chapterbreak", "--results", str(results), "--run-name", "offline"]) == 0
    summary = json.loads((results / "offline" / "recent_8000" / "summary.json").read_text())
    names = {d["dataset"] for d in summary["datasets"]}
    assert "chapterbreak" not in names and len(names) == 10
