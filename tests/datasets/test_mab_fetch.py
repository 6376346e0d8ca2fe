"""MemoryAgentBench's files: the parquet splits streamed row by row (never a whole split; only row groups holding a
wanted source are read), a local copy of the hub's layout (`data_dir`), and the download on first use from a local
HTTP server laid out like the hub's repository (`LTM_MAB_URL`, never the real data): kept in the cache only when its
sha256 is the pinned one and it reads as a split, read from the cache after; offline or wrong is one line."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

import pytest

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.mab import fetch, pinned, rows
from ltm_harness._interop.mab.rows import iter_rows, sources_in
from ltm_harness.testing import FileServer, load_script

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "mab_data.py")
AR = "Accurate_Retrieval"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return gen.write_dataset(tmp_path_factory.mktemp("mab"), rows=2, questions=3, tokens=800)


def test_rows_are_streamed_in_file_order_with_the_schema_read(data):
    path = data / "data" / f"{AR}-00000-of-00001.parquet"
    assert sources_in(path) == [("ruler_qa1_197K", 2), ("ruler_qa2_421K", 2), ("longmemeval_s*", 2),
                                ("eventqa_full", 2)]
    got = list(iter_rows(path, AR, {"longmemeval_s*"}))
    assert [(r.source, r.index) for r in got] == [("longmemeval_s*", 4), ("longmemeval_s*", 5)]
    row = got[0]
    assert len(row.questions) == 3 and row.answers[0] == [row.answers[0][0]]
    assert row.metadata.question_types and row.metadata.question_ids and row.metadata.qa_pair_ids
    assert row.pairs()[1] == (row.questions[1], row.answers[1])


def test_only_row_groups_with_a_wanted_source_are_decoded(data, monkeypatch):
    path = data / "data" / f"{AR}-00000-of-00001.parquet"
    seen: list[list[int]] = []
    real = rows.open_parquet

    def spy(p):
        f = real(p)
        original = f.iter_batches

        def iter_batches(*a, **k):
            seen.append(list(k.get("row_groups") or []))
            return original(*a, **k)

        f.iter_batches = iter_batches
        return f

    monkeypatch.setattr(rows, "open_parquet", spy)
    assert len(list(iter_rows(path, AR, {"eventqa_full"}))) == 2
    assert seen == [[6], [7]]  # the generator writes one row a group: groups 0-5 hold other sources


def test_a_single_question_row_has_every_answer_as_its_golds():
    row = rows.MabRow(split="x", index=0, context="c", questions=["Summarize"], answers=[["a", "b"]],
                      metadata=rows.MabMetadata(source="infbench_sum_eng_shots2"))
    assert row.pairs() == [("Summarize", ["a", "b"])]


def test_a_file_that_is_not_a_split_is_one_line(tmp_path):
    bad = tmp_path / "data" / f"{AR}-00000-of-00001.parquet"
    bad.parent.mkdir()
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(DefinitionError, match="not a readable parquet file") as err:
        fetch.split_file(AR, tmp_path)
    assert "\n" not in str(err.value)
    with pytest.raises(DefinitionError, match="data_dir must be laid out like the hub's repository"):
        fetch.split_file("Conflict_Resolution", tmp_path)


def test_a_row_shaped_otherwise_names_the_row_and_field(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_pylist([{"context": "c", "questions": ["q"], "answers": [["a"]],
                                          "metadata": {"source": None}}]), path)
    with pytest.raises(DefinitionError, match=r"x.parquet row 0: metadata.source"):
        list(iter_rows(path, AR))


@pytest.fixture
def server(data) -> Iterator[FileServer]:
    routes = {f"/mirror/{p.relative_to(data).as_posix()}": (200, p.read_bytes(), None)
              for p in data.rglob("*") if p.is_file()}
    with FileServer(routes).serving() as s:
        yield s


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_a_split_is_downloaded_once_checked_by_its_pinned_sha256_then_read_from_the_cache(data, server, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_MAB_URL", f"{server.url}/mirror")
    rel = fetch.split_path("Conflict_Resolution")
    monkeypatch.setitem(pinned.SHA256, rel, sha(data / rel))
    path = fetch.split_file("Conflict_Resolution", quiet=True)
    assert path == tmp_path / "cache" / "memoryagentbench" / rel and sha(path) == sha(data / rel)
    assert [r.source for r in iter_rows(path, "Conflict_Resolution")] == ["factconsolidation_sh_262k"] * 2 + \
        ["factconsolidation_mh_262k"] * 2
    assert server.hits[f"/mirror/{rel}"] == 1
    assert fetch.split_file("Conflict_Resolution", quiet=True) == path and server.hits[f"/mirror/{rel}"] == 1
    movies = fetch.entity2id(quiet=True)
    assert movies["<http://dbpedia.org/resource/Movie_Title_3_(1913)>"] == 3


def test_a_download_with_another_sha256_is_not_kept(data, server, tmp_path, monkeypatch):
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_MAB_URL", f"{server.url}/mirror")
    monkeypatch.setitem(pinned.SHA256, fetch.split_path(AR), "0" * 64)
    with pytest.raises(DefinitionError, match="not the expected 0000") as err:
        fetch.split_file(AR, quiet=True)
    assert "\n" not in str(err.value)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_offline_is_one_line_naming_the_file_and_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LTM_MAB_URL", "http://127.0.0.1:9/mirror")  # nothing listens on the discard port
    with pytest.raises(DefinitionError) as err:
        fetch.split_file(AR, quiet=True)
    line = str(err.value)
    assert "\n" not in line and "Accurate_Retrieval-00000-of-00001.parquet" in line and "data_dir" in line


def test_the_hub_url_names_the_pinned_revision(monkeypatch):
    monkeypatch.delenv("LTM_MAB_URL", raising=False)
    monkeypatch.delenv("LTM_MAB_REVISION", raising=False)
    assert fetch.remote("entity2id.json").source_url == \
        f"https://huggingface.co/datasets/ai-hyz/MemoryAgentBench/resolve/{pinned.REVISION}/entity2id.json"
    monkeypatch.setenv("LTM_MAB_REVISION", "abc123")
    assert "/resolve/abc123/data/" in fetch.remote(fetch.split_path(AR)).source_url


def test_a_missing_extra_is_one_line_naming_the_install(data, monkeypatch):
    import sys

    from ltm_harness._interop.mab.recsys import Movies

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if pyarrow were not installed
    with pytest.raises(DefinitionError, match=r"needs pyarrow; pip install 'ltm-harness\[mab\]'$"):
        fetch.split_file(AR, data)
    monkeypatch.setitem(sys.modules, "rapidfuzz", None)
    with pytest.raises(DefinitionError, match=r"needs rapidfuzz; pip install 'ltm-harness\[mab\]'$"):
        Movies.from_entity2id({"Up": 1}).nearest("up")


def test_an_entity_map_that_is_not_one_is_one_line(tmp_path):
    (tmp_path / "entity2id.json").write_text('{"Up": "one"}')
    with pytest.raises(DefinitionError, match="not MemoryAgentBench's entity2id.json") as err:
        fetch.entity2id(tmp_path)
    assert "\n" not in str(err.value)
