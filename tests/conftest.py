from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"


# Data files fetched on first use (chapterbreak, locomo, longmemeval, beam) never come from the internet in tests: the
# cache is a fresh folder and the download URL a closed local port, unless a test serves a file itself
# (tests/datasets/test_fetch.py, test_locomo_fetch.py, test_longmemeval_fetch.py, test_beam_fetch.py).
def _offline_data_files() -> None:
    import atexit
    import os
    import shutil
    import tempfile

    cache = tempfile.mkdtemp(prefix="ltm-test-cache-")
    atexit.register(shutil.rmtree, cache, True)
    os.environ["LTM_HARNESS_CACHE"] = cache
    os.environ["LTM_HARNESS_CONFIG"] = os.path.join(cache, "config")  # the framework stores' signing key
    os.environ["LTM_CHAPTERBREAK_URL"] = "http://127.0.0.1:9/chapterbreak_ctx_8192.zst"
    os.environ["LTM_LOCOMO_URL"] = "http://127.0.0.1:9/locomo10.json"
    os.environ["LTM_LONGMEMEVAL_URL"] = "http://127.0.0.1:9"  # the folder of LongMemEval's files
    os.environ["LTM_BEAM_URL"] = "http://127.0.0.1:9"  # the base of BEAM's repository layout


_offline_data_files()


# No test depends on wall-clock speed: Hypothesis examples have no deadline (a loaded machine made a 15 s one fail);
# a property test that must not hang bounds the work it counts (tests/core/test_properties.py's bounded_work).
def _hypothesis_without_deadlines() -> None:
    from hypothesis import settings

    settings.register_profile("ltm", deadline=None)
    settings.load_profile("ltm")


_hypothesis_without_deadlines()
