"""Size and opening time of the HTML report of long runs.

Runs the offline datasets of the benchmark-v3 configs (their published parameters) at each span with
offline agents, in a temporary folder, then writes the report and measures: the event logs' size, the
HTML file's size, the time to write it, and, when Debian's Chromium is installed (/usr/bin/chromium and
/usr/bin/chromedriver, driven by selenium), the time until the page is ready in headless Chromium and the
time to open one test's details.

    python benchmarks/report_size.py [--spans 32k,500k] [--examples 3] [--agents oracle,null,recent:2000]

Targets: the report of a 500k-token run opens in well under a second and stays far smaller than the logs.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from ltm_harness._report import write_report
from ltm_harness.testing import make_config, run_config

V3_OFFLINE: list[dict[str, Any]] = [
    {"name": "colours", "args": {"colour_changes": 3}}, {"name": "shopping", "args": {"item_changes": 6}},
    {"name": "name_list", "args": {"name_changes": 5}}, {"name": "jokes", "args": {"jokes_told": 4}},
    {"name": "sallyanne", "args": {"question_type": "theory_of_mind"}}, {"name": "prospective_memory"},
    {"name": "trigger_response"},
]
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def span_tokens(text: str) -> int:
    text = text.lower()
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def browser(tmp: Path) -> Any:
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        return None
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # the driver's path is given: selenium manager is not used, and never fetches
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={tmp / 'profile'}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def open_times(driver: Any, page: Path) -> tuple[float, float]:
    """Milliseconds until the page's script is set up, and to open the first agent's first test."""
    from selenium.webdriver.common.by import By

    driver.get(page.resolve().as_uri())
    while driver.execute_script("return document.body && document.body.dataset.ready") != "1":
        time.sleep(0.01)
    ready = float(driver.execute_script(
        "return performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
    def first(css: str) -> Any:  # a page whose tests are a file beside it shows them once loaded
        while not (found := driver.find_elements(By.CSS_SELECTOR, css)):
            time.sleep(0.005)
        return found[0]

    started = time.perf_counter()
    driver.execute_script("document.getElementById('a0').open = true")
    first("#a0 tr.test").click()
    first("#a0 tr.detail-row li.line")
    return ready, 1000 * (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", default="32k,500k")
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--agents", default="oracle,null,recent:2000")
    args = parser.parse_args()
    agents = args.agents.split(",")
    print(f"{'span':>6} {'agents':>6} {'tests':>6} {'turns':>7} {'log MB':>7} {'html KB':>8} {'write s':>8} "
          f"{'ready ms':>9} {'open test ms':>12}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        driver = browser(tmp)
        try:
            for span in args.spans.split(","):
                cfg = make_config(V3_OFFLINE, span=span_tokens(span), examples=args.examples, run_name=f"v3-{span}",
                                  incompatibilities=[["names", "name_list"]])
                summary = asyncio.run(run_config(cfg, tmp, agents))
                folder = tmp / f"v3-{span}"
                started = time.perf_counter()
                files = write_report([folder])
                written = time.perf_counter() - started
                logs = sum(p.stat().st_size for p in folder.rglob("*.jsonl"))
                tests = sum(d.tests for a in summary.agents for d in a.datasets)
                turns = sum(a.turns for a in summary.agents)
                ready = opened = "-"
                if driver is not None:
                    r, o = open_times(driver, files.html)
                    ready, opened = f"{r:.0f}", f"{o:.0f}"
                print(f"{span:>6} {len(agents):>6} {tests:>6} {turns:>7} {logs / 1e6:>7.1f} "
                      f"{files.html.stat().st_size / 1e3:>8.0f} {written:>8.2f} {ready:>9} {opened:>12}")
        finally:
            if driver is not None:
                driver.quit()
    if driver is None:
        print("(no /usr/bin/chromium and /usr/bin/chromedriver: opening times not measured)")


if __name__ == "__main__":
    main()
