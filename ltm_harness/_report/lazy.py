"""The parts of a report page loaded only when a reader opens them: benchmark conversations' histories, and the
per-test details of a run too big to hold them in the page.

They are script files beside the page (`<stem>.parts/<name>.js`), each one call `ltmPart("<id>", <JSON>)`, loaded by
adding a `<script>` element: that works from a page opened as a local file (file://), where fetch() is refused, and
the page's Content-Security-Policy then allows scripts of its own origin ('self'), nothing else. A file is named by a
hash of its content, so what several agents share (a benchmark's history) is written once; files of an earlier report
at the same place that this one does not use are removed. A page whose parts fit in it (INLINE_TESTS_BYTES) holds them
inline and loads nothing, as before.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ltm_harness._store.files import write_text
from ltm_harness._store.layout import report_parts

INLINE_TESTS_BYTES = 1_000_000  # per-test details of all agents held in the page up to this size; beyond, files


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class LazyParts:
    """The files of one page, collected while it is built and written beside it (`write`)."""

    folder: str  # the folder's name, beside the page: `<stem>.parts`
    files: dict[str, str] = field(default_factory=dict)  # file name -> its text
    outlines: dict[str, dict[str, Any]] = field(default_factory=dict)  # history key -> its outline (in the page)
    tests: dict[str, str] = field(default_factory=dict)  # agent key -> the file of its tests' details

    @classmethod
    def beside(cls, html: Path) -> "LazyParts":
        return cls(report_parts(html).name)

    def add(self, part_id: str, payload: Any, stem: str | None = None) -> str:
        """A file calling ltmPart(part_id, payload); its name (`stem` or a hash of its text, `.js`)."""
        text = f"ltmPart({_json(part_id)},{_json(payload)});\n"
        name = f"{stem or hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}.js"
        self.files[name] = text
        return name

    def add_tests(self, key: str, payload: Any) -> None:
        """An agent's per-test details as a file of their own (the page grew too big to hold them)."""
        text = _json(payload)
        self.tests[key] = self.add(f"tests:{key}", payload, f"tests-{key}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}")

    def block(self) -> dict[str, Any]:
        """What the page holds about its parts: where they are, the histories' outlines, the agents' test files."""
        return {"dir": self.folder, "outlines": self.outlines, "tests": self.tests}

    def write(self, html: Path) -> list[Path]:
        """The files beside `html`; those an earlier report left there that this one does not use are removed."""
        folder = report_parts(html)
        if not self.files and not folder.is_dir():
            return []
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in self.files.items():
            path = folder / name
            if not path.is_file() or path.stat().st_size != len(text.encode("utf-8")):  # named by its content
                write_text(path, text)
            written.append(path)
        for old in folder.glob("*.js"):
            if old.name not in self.files:
                old.unlink()
        if not self.files and not any(folder.iterdir()):
            folder.rmdir()
        return written


# The page's loader (spliced into assets.JS, inside its closure: it uses `data`).
JS = r"""
  // -- parts of the page loaded when opened (ltm_harness/_report/lazy.py) --
  const partsLoaded = new Map();
  const partsWaiting = new Map();
  window.ltmPart = (id, payload) => {
    partsLoaded.set(id, payload);
    const w = partsWaiting.get(id);
    if (w) { partsWaiting.delete(id); w.resolve(payload); }
  };
  function loadPart(id, file) {  // a Promise of the payload of `file` (beside the page), loaded once
    if (partsLoaded.has(id)) return Promise.resolve(partsLoaded.get(id));
    if (!partsWaiting.has(id)) {
      const w = {};
      w.promise = new Promise((resolve, reject) => { w.resolve = resolve; w.reject = reject; });
      partsWaiting.set(id, w);
      const info = data("report-lazy");
      if (!info || !/^[\w.-]+\.js$/.test(file)) w.reject(new Error("this part is not in the page"));
      else {
        const s = document.createElement("script");
        s.src = encodeURIComponent(info.dir) + "/" + file;
        s.onerror = () => { partsWaiting.delete(id);
          w.reject(new Error(`${info.dir}/${file} could not be loaded: the page loads it from its folder ${info.dir}/, kept beside it`)); };
        document.head.append(s);
      }
    }
    return partsWaiting.get(id).promise;
  }
  function agentTests(key) {  // an agent's tests from their file beside the page (a big run's)
    const info = data("report-lazy");
    return info && info.tests[key] ? loadPart("tests:" + key, info.tests[key]) : Promise.reject(new Error("no tests of this agent in the page"));
  }
"""
