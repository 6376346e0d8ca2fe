"""LoCoMo's Porter stems are kept between runs in the user cache: a run whose words were all stemmed before does not
import NLTK, and the scores are the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ltm_harness._interop.locomo import stems
from ltm_harness._interop.locomo.stems import MAX_WORD, StemMemo

ROOT = Path(__file__).resolve().parents[2]
SCORE = ("import sys; from ltm_harness._interop.locomo.scoring import score_answer; "
         "print(json.dumps([score_answer(4, 'They were running to the parks', 'ran in parks'), "
         "score_answer(1, 'hiking, swimming', 'swims, hikes'), 'nltk' in sys.modules]))")


def _score_in_a_new_process(cache: Path, **env: str) -> list:
    done = subprocess.run([sys.executable, "-c", "import json; " + SCORE], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "LTM_HARNESS_CACHE": str(cache), **env})
    return json.loads(done.stdout)


def test_a_second_run_finds_its_stems_kept_and_does_not_import_nltk(tmp_path: Path):
    first = _score_in_a_new_process(tmp_path)
    assert first[2] is True  # stemmed now: NLTK was imported
    kept = json.loads(next((tmp_path / "stems").glob("porter-nltk-*.json")).read_text())
    assert kept["running"] == "run" and kept["hiking"] == "hike" and kept["swims"] == "swim"
    second = _score_in_a_new_process(tmp_path)
    assert second == first[:2] + [False]  # the same scores, and NLTK not imported
    assert _score_in_a_new_process(tmp_path, LTM_STEM_CACHE="off")[2] is True  # turned off: stemmed again


def test_a_word_not_kept_is_stemmed_by_nltk_and_kept_once_the_process_ends(tmp_path: Path, monkeypatch):
    path = tmp_path / "stems.json"
    path.write_text(json.dumps({"running": "kept-stem"}))
    memo = StemMemo(path)
    asked: list[str] = []
    real = stems.porter()
    monkeypatch.setattr(stems, "porter", lambda: type("P", (), {"stem": lambda _, w: asked.append(w) or real.stem(w)})())
    assert memo.stem("running") == "kept-stem" and asked == []  # from the file, whatever it says
    assert memo.stem("generously") == real.stem("generously") and asked == ["generously"]
    assert memo.stem("generously") and asked == ["generously"]  # once
    long = "x" * (MAX_WORD + 1)
    memo.stem(long)
    other = StemMemo(path)  # another process, which stemmed another word meanwhile
    other.stem("swimming")
    other.save()
    memo.save()
    assert json.loads(path.read_text()) == {"running": "kept-stem", "swimming": "swim",
                                            "generously": real.stem("generously")}  # merged; the long word not kept


@pytest.mark.parametrize("content", [b"{", b"[1, 2]", b'{"a": 1}', b"\xff\xfe", b"[" * 100_000])
def test_a_damaged_file_is_passed_over_and_replaced(tmp_path: Path, content: bytes):
    path = tmp_path / "stems.json"
    path.write_bytes(content)
    memo = StemMemo(path)
    assert memo.stem("cats") == "cat"
    memo.save()
    assert json.loads(path.read_text()) == {"cats": "cat"}


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    memo = StemMemo(blocker / "stems" / "s.json")  # its folder cannot be made
    assert memo.stem("cats") == "cat"
    memo.save()  # no error
    assert memo.new == {"cats": "cat"}
