"""The reports in a real browser: Debian's headless Chromium, driven by selenium through the system
chromedriver (never a downloaded one).

Checks that the charts render, that the console stays free of errors (a CSP violation, a script
error), that an agent's <script> reply is shown as text and never runs, and that a 500k-token run's
report opens quickly; that the report, a comparison and the results index fit 1400 and 1000 px wide screens
without scrolling sideways; that agents keep their colours from page to page. Screenshots (whole pages) go to the
test's tmp folder, or to $LTM_SCREENSHOTS when set (to look at them). Missing Chromium is a failure with
the command that installs it, not a skip: CI must really run this (.ci/run installs it).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from ltm_harness._report import write_index, write_report

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
        from selenium.common.exceptions import WebDriverException

        try:
            browser = webdriver.Chrome(service=Service(str(CHROMEDRIVER), log_output=str(root / "chromedriver.log")),
                                       options=options)
        except WebDriverException as exc:  # installed but cannot start: said in one line, a failure, never a skip
            reason = (exc.msg or str(exc)).strip().splitlines()[0] if (exc.msg or str(exc)).strip() else type(exc).__name__
            pytest.fail(f"{CHROMIUM} could not be started by {CHROMEDRIVER}: {reason} (the driver's log: "
                        f"{root / 'chromedriver.log'})", pytrace=False)
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

    page = write_report([small_run, evil_run[0]], tmp_path / "compare.html", force=True).html  # other tests
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
    assert ready_ms > 0 and write_seconds > 0  # measured and printed; no bound on the clock (a loaded machine)


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


WIDTHS = (1400, 1000)  # a laptop's screen, and a narrower window
OVERFLOW = """
const out = [];
const de = document.documentElement;
if (de.scrollWidth > de.clientWidth) out.push(['page', de.scrollWidth, de.clientWidth]);
for (const el of document.querySelectorAll('.scroll, table, svg.chart')) {
  if (!el.offsetParent) continue;  // not shown (a closed section)
  const box = el.getBoundingClientRect();
  if (el.scrollWidth > el.clientWidth + 1 || box.right > de.clientWidth + 0.5)
    out.push([el.tagName + '.' + el.getAttribute('class'), (el.closest('section') || {}).id, el.scrollWidth, el.clientWidth,
              Math.round(box.right), de.clientWidth]);
}
return out;"""


def _screens() -> Path | None:
    where = os.environ.get("LTM_SCREENSHOTS")
    return Path(where) if where else None


def _at_width(driver: Any, width: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})


def _shoot(driver: Any, path: Path) -> None:
    """The whole page (not just the window) as a PNG."""
    width, height = driver.execute_script(
        "return [document.documentElement.clientWidth, document.documentElement.scrollHeight]")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                             "clip": {"x": 0, "y": 0, "width": width,
                                                                      "height": min(height, 16_000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _check_fits(driver: Any, page: Path, name: str, out: Path, prepare: Any = None) -> None:
    """At each width: nothing wider than the window, no console problem; a screenshot of the whole page."""
    try:
        for width in WIDTHS:
            _at_width(driver, width)
            _open(driver, page)
            if prepare is not None:
                prepare(driver)
            assert driver.execute_script(OVERFLOW) == [], (name, width)
            _shoot(driver, out / f"{name}-{width}.png")
            assert _problems(driver) == []
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def open_a_test(driver: Any) -> None:
    """The first agent's section and its first test, opened as a reader would."""
    from selenium.webdriver.common.by import By

    driver.execute_script("document.getElementById('a0').open = true")
    deadline = time.monotonic() + 10
    while not driver.find_elements(By.CSS_SELECTOR, "#a0 tr.test"):
        assert time.monotonic() < deadline, "the agent's tests were never shown"
        time.sleep(0.05)
    driver.find_element(By.CSS_SELECTOR, "#a0 tr.test").click()
    assert driver.find_elements(By.CSS_SELECTOR, "#a0 tr.detail-row li.line")


@pytest.mark.slow
def test_report_comparison_and_index_fit_the_screen(driver: Any, wide_runs: list[Path], tmp_path: Path):
    out = _screens() or tmp_path
    out.mkdir(parents=True, exist_ok=True)
    wide, more, seed1 = wide_runs
    report = write_report([wide], tmp_path / "report.html").html
    _open(driver, report)
    charts = driver.execute_script("return [...document.querySelectorAll('svg.chart')].map(s => s.getAttribute('aria-label'))")
    assert charts.count("score against achieved information gap: all datasets") == 1
    assert sum(c.endswith(": score vs gap") for c in charts) == 11  # a panel per dataset
    _check_fits(driver, report, "report", out, open_a_test)
    compare = write_report([wide, more, seed1], tmp_path / "compare.html", force=True).html
    _open(driver, compare)
    assert len(driver.find_elements("css selector", "header .badge.mark")) == 1  # the run whose tests differ ...
    assert len(driver.find_elements("css selector", "#summary .badge.mark")) == 2  # ... and its two agents
    _check_fits(driver, compare, "compare", out, open_a_test)
    root = wide.parent
    (root / "damaged").mkdir(exist_ok=True)
    (root / "damaged" / "summary.json").write_text('{"run_name": ')
    _check_fits(driver, write_index(root), "index", out)


def test_the_category_section_renders_and_fits_the_screen(driver: Any, quiz_runs: list[Path], tmp_path: Path):
    out = _screens() or tmp_path
    out.mkdir(parents=True, exist_ok=True)
    for name, folders in (("categories", quiz_runs[:1]), ("categories-compare", quiz_runs)):
        page = write_report(folders, tmp_path / f"{name}.html").html
        _open(driver, page)
        _check_charts(driver)  # every panel (one per scored category, one for abstention) has its marks
        panels = driver.execute_script(
            "return [...document.querySelectorAll('#breakdown svg.chart')].map(s => s.getAttribute('aria-label'))")
        assert panels == ["quiz_bench · category " + c for c in ("single-hop", "multi-hop", "temporal", "adversarial")] \
            + ["quiz_bench · abstention yes"]
        _check_fits(driver, page, name, out)


def _swatches(driver: Any) -> dict[str, str]:
    """Label -> colour of the legend's swatch."""
    pairs = driver.execute_script("""
        return [...document.querySelectorAll('#charts .legend .item')].map(item =>
          [item.textContent.trim(), getComputedStyle(item.querySelector('.swatch')).backgroundColor]);""")
    return dict(pairs)


def test_agents_keep_their_colours_from_report_to_report(driver: Any, wide_runs: list[Path], tmp_path: Path):
    from ltm_harness._report.colours import page_slots, slot_colour

    def rgb(hex_colour: str) -> str:
        return "rgb({}, {}, {})".format(*(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)))

    wide, more, seed1 = wide_runs
    pages = {}
    for folder in wide_runs:
        _open(driver, write_report([folder], tmp_path / f"{folder.name}.html").html)
        pages[folder.name] = _swatches(driver)
    first, second, third = pages["wide"], pages["wide-more"], pages["wide-seed1"]
    # in the run's order, except that retrieval (tests left unscored: a protocol mark) comes after the others
    assert list(first) == ["oracle", "recent:1000", "null", "retrieval"] and len(set(first.values())) == 4
    # retrieval is the second agent of one run and the first of the other: the same colour, by its name.
    assert "retrieval" in second and first["retrieval"] == second["retrieval"]
    assert first["oracle"] == third["oracle"] and first["recent:1000"] == third["recent:1000"]
    assert first == {name: rgb(slot_colour(slot)) for name, slot in page_slots(first).items()}
    # A comparison: one colour per agent name (so retrieval of both runs alike), the charts in the legend's colours;
    # the agent's second appearance is striped in the legend and drawn lighter.
    _open(driver, write_report([more, wide], tmp_path / "both.html").html)
    both = _swatches(driver)
    assert len(both) == 7 and len(set(both.values())) == 6  # six names
    assert both["oracle · wide"] == first["oracle"] and both["retrieval · wide"] == both["retrieval · wide-more"]
    striped = driver.execute_script("""
        return [...document.querySelectorAll('#charts .legend .item')].filter(item =>
          getComputedStyle(item.querySelector('.swatch')).backgroundImage !== 'none').map(item => item.textContent.trim());""")
    assert striped == ["retrieval · wide"]
    fills = driver.execute_script("""
        return [...document.querySelectorAll('svg.chart[aria-label="colours"] g.bar')].map(g =>
          { const t = g.querySelector('title').textContent; const r = g.querySelector('rect');
            return [t.slice(0, t.lastIndexOf(': ')), getComputedStyle(r).fill, getComputedStyle(r).fillOpacity]; });""")
    assert len(fills) == 7 and all(both[label] == fill for label, fill, _ in fills)
    assert {label for label, _, opacity in fills if opacity != "1"} == {"retrieval · wide"}


def test_cost_chart_labels_do_not_overlap_in_the_browser(driver: Any, evil_run: tuple[Path, str], tmp_path: Path):
    folder, _ = evil_run
    page = write_report([folder], tmp_path / "cost.html").html
    _open(driver, page)
    boxes = driver.execute_script("""
        const svg = [...document.querySelectorAll('svg.chart')].find(s => s.getAttribute('aria-label') === 'benchmark score against cost');
        if (!svg) return null;
        return [...svg.querySelectorAll('text.label')].map(t => { const b = t.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; });""")
    assert boxes is not None and len(boxes) == 2  # priced (the HTTP agent reports its cost): drawn, both labelled
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_the_index_lists_runs_sorts_and_filters(driver: Any, wide_runs: list[Path], tmp_path: Path):
    from selenium.webdriver.common.by import By

    root = tmp_path / "results"
    for run in wide_runs:
        shutil.copytree(run, root / run.name)
    (root / "broken").mkdir()
    (root / "broken" / "summary.json").write_text("[]")
    (root / "stopped" / "definitions").mkdir(parents=True)
    write_report([root / "wide", root / "wide-more"])  # a comparison, listed too; and the index rewritten
    page = root / "index.html"
    _open(driver, page)

    def rows() -> list[list[str]]:
        return driver.execute_script("""return [...document.querySelectorAll('table.list tbody tr')]
            .filter(r => !r.classList.contains('hidden'))
            .map(r => [...r.cells].map(c => (c.querySelector('a') || c).textContent.trim()));""")

    listed = rows()
    runs = {r[1]: r for r in listed if len(r) > 2}
    assert set(runs) >= {"wide", "wide-more", "wide-seed1", "broken", "stopped"}
    assert runs["broken"][2] == "damaged" and runs["stopped"][2] == "unfinished" and runs["wide"][2] == "finished"
    assert "oracle 11.00/11" in runs["wide"][4]
    assert any(r[1] == "compare_wide_wide-more.html" for r in listed)
    links = driver.execute_script("return [...document.querySelectorAll('table.list a')].map(a => a.href)")
    assert all(Path(href.removeprefix("file://")).exists() for href in links)
    search = driver.find_element(By.ID, "filter")
    search.send_keys("recent:500")
    assert [r[1] for r in rows() if len(r) > 2] == ["wide-more"]
    from selenium.webdriver.common.keys import Keys

    search.send_keys(Keys.BACKSPACE * len("recent:500"))  # typed away key by key: every run again
    assert len([r for r in rows() if len(r) > 2]) == len(runs)
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "state")).select_by_value("damaged")
    assert [r[1] for r in rows() if len(r) > 2] == ["broken"]
    Select(driver.find_element(By.ID, "state")).select_by_value("all")
    headers = driver.find_elements(By.CSS_SELECTOR, "table.list:first-of-type thead th")
    headers[1].click()  # by run name, z to a
    names = [r[1] for r in rows() if len(r) > 2]
    headers[1].click()  # a to z
    assert [r[1] for r in rows() if len(r) > 2] == list(reversed(names)) == sorted(names)
    assert _problems(driver) == []


# -- the pages of real runs (tests/report/conftest.py: real_results), as a reader opens them --------------------------
ARTEFACTS = Path(__file__).resolve().parents[2] / "results" / "ci-screenshots"
VIEWPORT = 1280
LEGENDLESS = """
// Charts drawing several series (colours of dots, lines, bars) with no legend in sight: none in the chart, none in
// its section. A chart of one series is named by its title.
const visible = (el) => !!el && el.getClientRects().length > 0;
return [...document.querySelectorAll('svg.chart')].filter(visible).filter(svg => {
  const colours = new Set([...svg.querySelectorAll('circle, polyline, path, g.bar rect')].filter(m => !m.closest('.legend'))
    .map(m => m.tagName === 'polyline' ? getComputedStyle(m).stroke : getComputedStyle(m).fill).filter(c => c !== 'none'));
  if (colours.size < 2) return false;
  if ([...svg.querySelectorAll('.legend')].some(visible)) return false;
  const scope = svg.parentElement.closest('section, details');
  return !scope || ![...scope.querySelectorAll('.legend')].some(visible);
}).map(svg => svg.getAttribute('aria-label'));"""


def artefacts() -> Path:
    """Where the screenshots of the pages are kept (a CI artefact): $LTM_SCREENSHOTS, else results/ci-screenshots/
    of the checkout (the results folder is not committed)."""
    where = Path(os.environ.get("LTM_SCREENSHOTS") or ARTEFACTS)
    where.mkdir(parents=True, exist_ok=True)
    return where


def _load(driver: Any, page: Path) -> None:
    """Open a page at 1280 px and wait until its scripts ran (the load event comes after DOMContentLoaded)."""
    _at_width(driver, VIEWPORT)
    driver.get_log("browser")
    driver.get(page.resolve().as_uri())
    deadline = time.monotonic() + 20
    while driver.execute_script("return document.readyState") != "complete":
        assert time.monotonic() < deadline, f"{page} never finished loading"
        time.sleep(0.05)


def docs_shot(driver: Any, name: str, css: str | None = None) -> None:
    """With $LTM_DOCS_SCREENSHOTS set (docs/img, for docs/reports.md): a small picture of the window, at the element
    `css` when given (else the page's top), scaled to 3/4."""
    where = os.environ.get("LTM_DOCS_SCREENSHOTS")
    if not where:
        return
    driver.execute_script("for (const n of document.querySelectorAll('nav')) n.style.position = 'static';")  # not sticky
    top = 0 if css is None else driver.execute_script(
        f"const e = document.querySelector({json.dumps(css)}); return e.getBoundingClientRect().top + window.scrollY - 8;")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                             "clip": {"x": 0, "y": top, "width": VIEWPORT, "height": 760,
                                                                      "scale": 0.75}})
    Path(where).mkdir(parents=True, exist_ok=True)
    (Path(where) / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))


def _look(driver: Any, name: str) -> None:
    """What every page must be: no console error or warning, every chart with its legend in sight, nothing wider
    than the window; then its screenshot is kept."""
    assert _problems(driver) == [], name
    assert driver.execute_script(LEGENDLESS) == [], f"{name}: charts without a visible legend"
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= VIEWPORT, f"{name}: the page is {width} px wide in a {VIEWPORT} px window"
    assert driver.execute_script(OVERFLOW) == [], name
    _shoot(driver, artefacts() / f"{name}.png")


def _open_first_test(driver: Any) -> None:
    driver.execute_script("document.getElementById('a0').open = true")
    deadline = time.monotonic() + 10
    while not driver.find_elements("css selector", "#a0 tr.test"):
        assert time.monotonic() < deadline, "the agent's tests were never shown"
        time.sleep(0.05)
    driver.find_element("css selector", "#a0 tr.test").click()


def _wait_for(driver: Any, css: str) -> list[Any]:
    deadline = time.monotonic() + 10
    while not (found := [e for e in driver.find_elements("css selector", css) if e.is_displayed()]):
        assert time.monotonic() < deadline, f"nothing shown for {css}"
        time.sleep(0.05)
    return found


@pytest.mark.parametrize("name, page", [("goodai-report", "default/report.html"), ("locomo-report", "locomo/report.html"),
                                        ("beam-report", "beam/report.html"), ("compare", "compare_locomo_locomo-more.html"),
                                        ("study", "study/report.html"), ("index", "index.html")])
def test_every_page_of_real_runs_reads_well_at_1280_px(driver: Any, real_results: Path, name: str, page: str):
    _load(driver, real_results / page)
    docs_shot(driver, name)
    if name.endswith("report") or name == "compare":
        _open_first_test(driver)  # and a test's view fits too
        _wait_for(driver, "#a0 tr.detail-row .detail")
    if name == "index":  # the folders of parts beside the reports are no runs
        assert ".parts" not in driver.find_element("tag name", "body").text
    _look(driver, name)


def test_a_locomo_question_shows_its_evidence_line_and_the_history_it_was_asked_from(driver: Any, real_results: Path):
    _load(driver, real_results / "locomo" / "report.html")
    _open_first_test(driver)  # locomo/synthetic-1.q0: "What is the name of Ada's cat?", evidence D1:1
    asked = _wait_for(driver, "#a0 tr.detail-row .asked")[0]
    assert "What is the name of Ada's cat?" in asked.text and "expected\nPepper" in asked.text
    assert "Asked from the memory the history left: turn 5" in asked.text  # the end of the history: it went back
    quoted = asked.find_element("css selector", ".evidence li.evline")
    assert "Her name is Pepper." in quoted.text  # the evidence line, quoted with the question
    assert driver.execute_script("return document.querySelectorAll('li.hline').length") == 0  # not loaded yet
    quoted.find_element("css selector", "a.jump").click()  # one click: the history is loaded and opened at the line
    line = _wait_for(driver, "#a0 li.hline.evidence.focus")[0]
    assert line.text.startswith("turn 0 ·") and "Ada: Hi Bruno! I finally adopted a cat last weekend." in line.text
    assert "evidence" in line.find_element("css selector", ".badge").text
    sessions = driver.find_elements("css selector", "#a0 details.hist details.session > summary")
    assert [s.text.split(" · ")[0] for s in sessions] == ["session 1", "session 2"]  # folded by session, dated
    assert "2023-05-08 13:56:00" in sessions[0].text and "1 evidence" in sessions[0].text
    loaded = driver.execute_script("return [...document.scripts].map(s => s.src).filter(Boolean)")
    assert len(loaded) == 1 and "/report.parts/" in loaded[0]  # one file of the conversation, on demand
    assert _problems(driver) == []
    _shoot(driver, artefacts() / "locomo-question.png")
    docs_shot(driver, "locomo-question", "#a0 tr.test.open")


def test_a_missing_history_file_is_said_in_the_page(driver: Any, real_results: Path, tmp_path: Path):
    """A page mailed without its history folder still shows the question and its evidence, and says what is missing."""
    page = tmp_path / "alone.html"
    shutil.copy(real_results / "locomo" / "report.html", page)
    _load(driver, page)
    _open_first_test(driver)
    _wait_for(driver, "#a0 .asked .evidence a.jump")[0].click()
    error = _wait_for(driver, "#a0 details.session p.err")[0]
    assert "could not be loaded" in error.text and "report.parts/" in error.text
    assert "Her name is Pepper." in driver.find_element("css selector", "#a0 .asked .evidence").text


def test_a_big_run_s_tests_load_from_their_files_when_a_score_is_clicked(driver: Any, real_results: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "locomo"
    shutil.copytree(real_results / "locomo", folder)
    monkeypatch.setattr("ltm_harness._report.page.INLINE_TESTS_BYTES", 0)  # as a run too big for one page
    page = write_report([folder], tmp_path / "big.html").html
    _load(driver, page)
    assert driver.execute_script("return document.getElementById('data-a1')") is None
    column = [th.get_attribute("title") for th in driver.find_elements("css selector", "#matrix table.matrix tr:first-child th")].index("null")
    driver.find_element("css selector", f"#matrix table.matrix tr:nth-child(2) td:nth-child({column + 1}) a").click()
    asked = _wait_for(driver, "#a1 tr.detail-row .asked")[0]
    assert "What is the name of Ada's cat?" in asked.text
    loaded = driver.execute_script("return [...document.scripts].map(s => s.src).filter(Boolean)")
    assert len(loaded) == 1 and "/big.parts/tests-a1-" in loaded[0]  # only that agent's tests
    assert _problems(driver) == []


@pytest.mark.parametrize("what", ["missing", "broken"])
def test_a_browser_missing_or_unable_to_start_is_a_one_line_failure(what: str, tmp_path: Path,
                                                                     tmp_path_factory: pytest.TempPathFactory,
                                                                     monkeypatch: pytest.MonkeyPatch):
    import sys

    fake = tmp_path / "chromium"
    if what == "broken":
        fake.write_text("#!/bin/sh\necho 'chromium: cannot open display' >&2\nexit 1\n")
        fake.chmod(0o755)
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", fake)
    with pytest.raises(pytest.fail.Exception) as failed:
        next(driver.__wrapped__(tmp_path_factory))  # type: ignore[attr-defined]
    message = str(failed.value)
    assert "\n" not in message and str(fake) in message
    assert ("not found" in message and "apt-get install" in message) if what == "missing" else "could not be started" in message
