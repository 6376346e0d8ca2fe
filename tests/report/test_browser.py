"""The reports in a real browser: Debian's headless Chromium, driven by selenium through the system
chromedriver (never a downloaded one).

Checks that the charts render, that the console stays free of errors (a CSP violation, a script
error), that an agent's <script> reply is shown as text and never runs, and that a 500k-token run's
report opens quickly; saves screenshots in the test's tmp folder. Missing Chromium is a failure with
the command that installs it, not a skip: CI must really run this (.ci/run installs it).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from ltm_harness._report import write_report

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000"]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: the browser tests need Debian's Chromium; install it with "
                    "`apt-get install -y chromium chromium-driver` (.ci/run does this)", pytrace=False)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: install the test extra, `pip install -e '.[test]'`", pytrace=False)
    root = tmp_path_factory.mktemp("browser")
    cache = root / "selenium-cache"
    with pytest.MonkeyPatch.context() as env:
        # Selenium Manager (which can download browsers and drivers) is never used: the driver's path is
        # given, and should it run anyway it is offline, points at no binary (an error) and at an empty cache.
        env.setenv("SE_OFFLINE", "true")
        env.setenv("SE_MANAGER_PATH", str(root / "no-selenium-manager"))
        env.setenv("SE_CACHE_PATH", str(cache))
        options = Options()
        options.binary_location = str(CHROMIUM)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={tempfile.mkdtemp(dir=root)}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        browser = webdriver.Chrome(service=Service(str(CHROMEDRIVER), log_output=str(root / "chromedriver.log")),
                                   options=options)
        try:
            version = subprocess.run([str(CHROMIUM), "--version"], capture_output=True, text=True, timeout=30).stdout
            assert browser.capabilities["browserVersion"] in version  # the system's Chromium, no other
            yield browser
        finally:
            browser.quit()
        assert not cache.exists()  # nothing was fetched or cached by selenium


def _open(driver: Any, page: Path) -> float:
    """Load the page; milliseconds until its script finished setting up (DOMContentLoaded handlers ran)."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(page.resolve().as_uri())
    deadline = time.monotonic() + 20
    while driver.execute_script("return document.body && document.body.dataset.ready") != "1":
        assert time.monotonic() < deadline, "the page's script never finished setting up"
        time.sleep(0.05)
    return float(driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n.domContentLoadedEventEnd;"))


def _problems(driver: Any) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def _check_charts(driver: Any) -> int:
    charts = driver.execute_script("""
        return [...document.querySelectorAll('svg.chart')].map(svg => {
          const box = svg.getBoundingClientRect();
          const marks = [...svg.querySelectorAll('rect, circle, polyline')].filter(m => {
            const b = m.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length;
          return [svg.getAttribute('aria-label'), box.width, box.height, marks];
        });""")
    assert charts
    for label, width, height, marks in charts:
        assert width > 100 and height > 100 and marks > 0, (label, width, height, marks)
    return len(charts)


def test_report_renders_and_shows_a_script_reply_as_text(driver: Any, evil_run: tuple[Path, str], evil_reply: str,
                                                           tmp_path: Path):
    from selenium.webdriver.common.by import By

    folder, spec = evil_run
    page = write_report([folder], tmp_path / "evil.html").html
    _open(driver, page)
    assert _check_charts(driver) >= 6
    # Open the HTTP agent's first test from the matrix, with real clicks.
    headers = driver.find_elements(By.CSS_SELECTOR, "#matrix table.matrix tr:first-child th")
    column = next(i for i, th in enumerate(headers) if th.get_attribute("title") == spec)
    driver.find_element(By.CSS_SELECTOR, f"#matrix table.matrix tr:nth-child(2) td:nth-child({column + 1}) a").click()
    replies = driver.find_elements(By.CSS_SELECTOR, "details.agent[open] tr.detail-row pre.agent-reply")
    assert len(replies) >= 2  # in the questions table and in the conversation
    for reply in replies:
        assert reply.get_attribute("textContent") == evil_reply
        assert reply.is_displayed()
    shown = driver.execute_script("""return {title: document.title, pwned: typeof window.__pwned,
        imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script:not([type])').length,
        bold: [...document.querySelectorAll('b')].filter(b => b.textContent.includes('bold')).length,
        requests: performance.getEntriesByType('resource').length};""")
    assert shown == {"title": "ltm-harness report: run evil", "pwned": "undefined", "imgs": 0, "scripts": 1, "bold": 0,
                     "requests": 0}
    # The collapsed stretches between a test's lines open.
    stretch = driver.find_element(By.CSS_SELECTOR, "details.agent[open] li.gap details")
    stretch.find_element(By.TAG_NAME, "summary").click()
    assert stretch.get_attribute("open") is not None
    driver.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _problems(driver) == []
    # The console is really being read: a logged error shows up.
    driver.execute_script("console.error('probe')")
    assert any("probe" in e["message"] for e in _problems(driver))


def test_compare_page_renders_without_console_errors(driver: Any, evil_run: tuple[Path, str], small_run: Path,
                                                     tmp_path: Path):
    from selenium.webdriver.common.by import By

    page = write_report([small_run, evil_run[0]], tmp_path / "compare.html").html
    _open(driver, page)
    assert _check_charts(driver) >= 8
    rows = driver.find_elements(By.CSS_SELECTOR, "#matrix table.matrix tr")
    assert len(rows) == 1 + 6  # the header, and the small run's 6 tests (the other run's 4 have the same ids)
    search = driver.find_element(By.CSS_SELECTOR, "#matrix input[type=search]")
    search.send_keys("colours/1")  # typed key by key: the box keeps its focus and caret while the table follows
    assert search.get_attribute("value") == "colours/1"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#matrix table.matrix tr")) == 2
    driver.find_element(By.CSS_SELECTOR, "#matrix input[type=checkbox]").click()
    assert len(driver.find_elements(By.CSS_SELECTOR, "#matrix table.matrix tr")) == 2  # oracle 1, null 0: they differ
    driver.save_screenshot(str(tmp_path / "compare.png"))
    assert _problems(driver) == []


def test_a_500k_run_report_is_small_and_opens_fast(driver: Any, run_500k: Path, tmp_path: Path):
    from selenium.webdriver.common.by import By

    started = time.perf_counter()
    files = write_report([run_500k], tmp_path / "500k.html")
    write_seconds = time.perf_counter() - started
    size = files.html.stat().st_size
    events = sum(p.stat().st_size for p in run_500k.rglob("*.jsonl"))
    ready_ms = _open(driver, files.html)
    _check_charts(driver)
    started = time.perf_counter()
    driver.execute_script("document.getElementById('a0').open = true")
    driver.find_element(By.CSS_SELECTOR, "#a0 tr.test").click()
    assert driver.find_elements(By.CSS_SELECTOR, "#a0 tr.detail-row li.line")
    expand_ms = 1000 * (time.perf_counter() - started)
    # The null agent's tests, filtered by status with the section's own select.
    from selenium.webdriver.support.ui import Select

    driver.execute_script("document.getElementById('a1').open = true")
    status = Select(driver.find_element(By.CSS_SELECTOR, "#a1 .controls select"))
    status.select_by_value("imperfect")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#a1 tr.test")) == 21
    status.select_by_value("errored")
    assert driver.find_elements(By.CSS_SELECTOR, "#a1 tr.test") == []
    driver.save_screenshot(str(tmp_path / "500k.png"))
    assert _problems(driver) == []
    numbers = {"html_bytes": size, "event_log_bytes": events, "write_seconds": round(write_seconds, 3),
               "ready_ms": round(ready_ms, 1), "expand_test_ms": round(expand_ms, 1)}
    (tmp_path / "500k-numbers.json").write_text(json.dumps(numbers))
    print("500k report:", numbers)
    assert size < 1_000_000 and size < events / 10  # the filler is counted, not copied
    assert ready_ms < 3000 and write_seconds < 5


def test_selenium_manager_is_not_what_found_the_driver():
    """The driver fixture gives the path of the system chromedriver, so selenium never looks for one."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.driver_finder import DriverFinder

    if not CHROMEDRIVER.is_file():
        pytest.fail(f"{CHROMEDRIVER} not found: install it with `apt-get install -y chromium chromium-driver`",
                    pytrace=False)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SE_MANAGER_PATH", "/nonexistent/selenium-manager")  # any use of the manager would fail
        assert DriverFinder(Service(str(CHROMEDRIVER)), Options()).get_driver_path() == str(CHROMEDRIVER)
