"""The shipped configs, syllabi, the example suite and an AIQ run still write what they wrote when the goldens were
recorded (tests/golden/expected.json), byte for byte: a change of behaviour or format shows here, file by file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness.testing import load_script

golden = load_script(Path(__file__).with_name("golden.py"), "ltm_golden")


@pytest.mark.slow
def test_outputs_are_byte_identical_to_the_goldens(tmp_path: Path) -> None:
    golden.produce(tmp_path)
    now = golden.digest(tmp_path)
    expected = json.loads(golden.EXPECTED.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(expected), "files written differ from the goldens (python tests/golden/golden.py check)"
    differ = sorted(name for name in expected if now[name] != expected[name])
    assert not differ, f"{len(differ)} files differ from the goldens, e.g. {differ[:5]}"
