"""Definitions kept in the user cache: a new run folder with the same settings, data and code copies them instead of
generating them again; another data file, other settings, a damaged copy or `LTM_DEFINITIONS_CACHE=off` make them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ltm_harness._authoring import definitions_cache
from ltm_harness._runner.prepare import prepare
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LTM_HARNESS_CACHE", str(folder))
    monkeypatch.delenv(definitions_cache.ENV, raising=False)
    return folder


def config(data: Path, name: str, **args):
    return make_config([{"name": "locomo", "args": {"data_file": str(data), **args}}], span=4000, examples=2,
                       run_name=name)


def definitions(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def locomo_class():
    from ltm_harness._authoring.catalog import known_datasets

    return known_datasets()["locomo"]


def test_a_new_run_folder_copies_the_definitions_kept_from_an_earlier_run(cache, tmp_path, monkeypatch):
    first = prepare(config(DATA, "one"), tmp_path / "results")
    made = definitions(first.folder.definitions)
    assert [p.name for p in (cache / "definitions").iterdir()] != []
    monkeypatch.setattr(locomo_class(), "generate_examples", lambda self, n: (_ for _ in ()).throw(
        AssertionError("generated again")))
    second = prepare(config(DATA, "two"), tmp_path / "results")
    assert definitions(second.folder.definitions) == made  # byte for byte, manifest included
    assert [e.example_id for e in second.examples["locomo"]] == ["synthetic-1", "synthetic-2"]


def test_another_data_file_other_settings_or_the_cache_turned_off_generate_them_again(cache, tmp_path, monkeypatch):
    prepare(config(DATA, "one"), tmp_path / "results")
    calls: list[int] = []
    original = locomo_class().generate_examples

    def counted(self, n):
        calls.append(n)
        return original(self, n)

    monkeypatch.setattr(locomo_class(), "generate_examples", counted)
    edited = tmp_path / "edited.json"
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    raw[0]["conversation"]["session_1"][0]["text"] += " (edited)"
    edited.write_text(json.dumps(raw), encoding="utf-8")
    prepare(config(edited, "edited"), tmp_path / "results")
    assert len(calls) == 1  # the data file is part of the key (LoCoMo names it in source_files)
    prepare(config(DATA, "hint", not_mentioned_hint="all"), tmp_path / "results")
    assert len(calls) == 2
    kept = sorted(p.name for p in (cache / "definitions").iterdir())
    monkeypatch.setenv(definitions_cache.ENV, "off")
    prepare(config(DATA, "off"), tmp_path / "results")
    assert len(calls) == 3 and sorted(p.name for p in (cache / "definitions").iterdir()) == kept
    monkeypatch.delenv(definitions_cache.ENV)
    prepare(config(DATA, "on"), tmp_path / "results")
    assert len(calls) == 3


def test_a_damaged_copy_in_the_cache_is_passed_over_and_made_again(cache, tmp_path):
    first = prepare(config(DATA, "one"), tmp_path / "results")
    made = definitions(first.folder.definitions)
    kept, = (cache / "definitions").iterdir()
    (kept / "manifest.json").write_text('{"fingerprint": "0000", "tests": []}', encoding="utf-8")
    second = prepare(config(DATA, "two"), tmp_path / "results")
    assert definitions(second.folder.definitions) == made
    shutil.rmtree(cache / "definitions")
    (cache / "definitions").mkdir()
    (cache / "definitions" / kept.name).write_text("not a folder", encoding="utf-8")
    third = prepare(config(DATA, "three"), tmp_path / "results")
    assert definitions(third.folder.definitions) == made


def test_at_most_keep_sets_are_kept_the_least_recently_used_going_first(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(definitions_cache, "KEEP", 2)
    for k, hint in enumerate(["adversarial", "all"]):
        prepare(config(DATA, f"r{k}", not_mentioned_hint=hint), tmp_path / "results")
    prepare(config(DATA, "again-adversarial"), tmp_path / "results")  # used again: now the most recent
    prepare(config(DATA, "c", categories=[1, 2]), tmp_path / "results")
    assert len(list((cache / "definitions").iterdir())) == 2
    calls: list[int] = []
    original = locomo_class().generate_examples
    monkeypatch.setattr(locomo_class(), "generate_examples", lambda self, n: calls.append(n) or original(self, n))
    prepare(config(DATA, "adversarial-kept"), tmp_path / "results")
    assert calls == []
    prepare(config(DATA, "all-forgotten", not_mentioned_hint="all"), tmp_path / "results")
    assert calls == [2]
