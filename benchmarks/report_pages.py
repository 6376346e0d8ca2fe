"""Page weight and time to first paint of benchmark reports, in headless Chromium (issue 32).

Two runs on generated data of the benchmarks' shapes (never the real data), in a temporary folder:

* LoCoMo: 10 conversations of LoCoMo's shape (benchmarks/locomo_protocol.py: 20 dated sessions and about 200
  questions each, ~2,000 questions), 4 agents (oracle, null, retrieval, recent:2000), the reference protocol;
* BEAM-100K: 20 chats of the 100K shape (benchmarks/beam_data.py, 10 batches of 10 turns of `--beam-words`-word
  messages: about 100k tokens a chat, 20 questions each), the same 4 agents.

For each report: the page's bytes (all that is loaded when it opens), the count and bytes of its parts loaded on
demand (ltm_harness/_report/lazy.py: the histories, loaded when a reader opens one; the agents' tests' details, in files
of their own past 1 MB, loaded when a reader opens an agent), the time to write the report; and in headless Chromium (Debian's
chromium and chromedriver, driven by selenium), from the Performance API: first paint, first contentful paint,
DOMContentLoaded end (the page's script has set up the tables: interactive) and the load event; then the time to open
the first agent's first question (its agent's tests' file loaded first when the page holds them in files) and, with
one click on its evidence, its history at that line (a history file loaded on demand).

    python benchmarks/report_pages.py [--beam-words 190] [--agents oracle,null,retrieval,recent:2000] [--keep DIR]

Targets: each page under 3 MB before its lazy parts, interactive in under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from beam_data import write_chat  # noqa: E402
from locomo_protocol import conversation  # noqa: E402
from report_size import browser  # noqa: E402

from ltm_harness._report import write_report  # noqa: E402
from ltm_harness._store.layout import report_parts  # noqa: E402
from ltm_harness.testing import make_config, run_config  # noqa: E402

PAINT = """const nav = performance.getEntriesByType('navigation')[0];
const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
return {first_paint: paint['first-paint'], first_contentful_paint: paint['first-contentful-paint'],
        interactive: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};"""


def locomo_file(folder: Path, conversations: int = 10, sessions: int = 20, seed: int = 1) -> Path:
    rng = random.Random(seed)
    path = folder / "locomo-shaped.json"
    path.write_text(json.dumps([conversation(k, sessions, rng) for k in range(conversations)]))
    return path


def beam_folder(folder: Path, chats: int, words: int) -> Path:
    for n in range(1, chats + 1):
        write_chat(folder / "chats" / "100K" / str(n), seed=n, batches=10, turns=10, message_words=words)
    return folder


def wait_for(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + 30
    while not (found := driver.find_elements(By.CSS_SELECTOR, css)):
        if time.monotonic() > deadline:
            raise SystemExit(f"nothing shown for {css}")
        time.sleep(0.005)
    return found[0]


def measure_page(driver: Any, page: Path) -> dict[str, float]:
    from selenium.webdriver.common.by import By

    driver.get(page.resolve().as_uri())
    deadline = time.monotonic() + 5  # complete, and painted (the paint entries come a frame later)
    while driver.execute_script("return document.readyState !== 'complete' || "
                                "!performance.getEntriesByType('paint').length") and time.monotonic() < deadline:
        time.sleep(0.01)
    numbers = {k: round(v, 1) for k, v in driver.execute_script(PAINT).items() if v is not None}
    started = time.perf_counter()
    driver.execute_script("document.getElementById('a0').open = true")
    wait_for(driver, "#a0 tr.test").click()
    wait_for(driver, "#a0 .asked")
    numbers["open_question_ms"] = round(1000 * (time.perf_counter() - started), 1)
    links = driver.find_elements(By.CSS_SELECTOR, "#a0 .asked .evidence a.jump")
    for k in range(1, 20):  # the first question citing evidence (BEAM's first may cite none)
        if links:
            break
        rows = driver.find_elements(By.CSS_SELECTOR, "#a0 tr.test")
        if k >= len(rows):
            break
        rows[k].click()
        links = driver.find_elements(By.CSS_SELECTOR, "#a0 .asked .evidence a.jump")
    if links:
        started = time.perf_counter()
        links[0].click()
        wait_for(driver, "#a0 li.hline.focus")
        numbers["open_history_at_evidence_ms"] = round(1000 * (time.perf_counter() - started), 1)
    problems = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if problems:
        raise SystemExit(f"console errors in {page}: {problems[:3]}")
    return numbers


def report(folder: Path, driver: Any) -> dict[str, Any]:
    started = time.perf_counter()
    files = write_report([folder])
    written = time.perf_counter() - started
    parts = list(report_parts(files.html).glob("*.js"))
    tests = [p for p in parts if p.name.startswith("tests-")]
    history = [p for p in parts if p not in tests]
    out: dict[str, Any] = {"page_bytes": files.html.stat().st_size, "history_files": len(history),
                           "history_bytes": sum(p.stat().st_size for p in history), "tests_files": len(tests),
                           "tests_bytes": sum(p.stat().st_size for p in tests), "write_s": round(written, 2),
                           "event_log_bytes": sum(p.stat().st_size for p in folder.rglob("*.jsonl"))}
    if driver is not None:
        out.update(measure_page(driver, files.html))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="oracle,null,retrieval,recent:2000")
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--beam-words", type=int, default=190, help="words per BEAM message (190: ~100k tokens a chat)")
    parser.add_argument("--keep", help="a folder to keep the runs in (default: a temporary one)")
    args = parser.parse_args()
    agents = args.agents.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = work / "results"
        data = locomo_file(work)
        runs = {}
        started = time.perf_counter()
        asyncio.run(run_config(make_config([{"name": "locomo", "args": {"data_file": str(data)}}], span=4000,
                                           examples=10, run_name="locomo-10"), results, agents))
        print(f"locomo: 10 conversations x {len(agents)} agents played in {time.perf_counter() - started:.1f} s")
        beam = beam_folder(work / "beam", args.chats, args.beam_words)
        started = time.perf_counter()
        asyncio.run(run_config(make_config([{"name": "beam", "args": {"data_dir": str(beam), "scale": "100K"}}],
                                           span=32000, examples=args.chats, run_name="beam-100k"), results, agents))
        print(f"beam-100k: {args.chats} chats x {len(agents)} agents played in {time.perf_counter() - started:.1f} s")
        driver = browser(work)
        if driver is None:
            print("Debian's chromium and chromedriver are not installed: sizes only")
        try:
            for name in ("locomo-10", "beam-100k"):
                runs[name] = report(results / name, driver)
                print(name, json.dumps(runs[name]))
        finally:
            if driver is not None:
                driver.quit()
        for name, numbers in runs.items():
            page, interactive = numbers["page_bytes"], numbers.get("interactive")
            print(f"{name}: page {page / 1e6:.2f} MB ({'under' if page < 3e6 else 'OVER'} 3 MB), "
                  f"loaded on demand: {numbers['history_files']} history files {numbers['history_bytes'] / 1e6:.2f} MB, "
                  f"{numbers['tests_files']} files of tests' details {numbers['tests_bytes'] / 1e6:.2f} MB; "
                  + ("" if interactive is None else
                     f"first paint {numbers.get('first_paint', float('nan')):.0f} ms, interactive {interactive:.0f} ms "
                     f"({'under' if interactive < 1000 else 'OVER'} 1 s)"))


if __name__ == "__main__":
    main()
