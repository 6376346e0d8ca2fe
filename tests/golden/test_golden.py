"""The shipped configs, syllabi, the example suite and an AIQ run still write what they wrote when the goldens were
recorded (tests/golden/expected.json), byte for byte: a change of behaviour or format shows here, file by file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_spec = importlib.util.spec_from_file_location("ltm_golden", Path(__file__).with_name("golden.py"))
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_outputs_are_byte_identical_to_the_goldens(tmp_path: Path) -> None:
    golden.produce(tmp_path)
    now = golden.digest(tmp_path)
    expected = json.loads(golden.EXPECTED.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(expected), "files written differ from the goldens (python tests/golden/golden.py check)"
    differ = sorted(name for name in expected if now[name] != expected[name])
    assert not differ, f"{len(differ)} files differ from the goldens, e.g. {differ[:5]}"
