"""The HTML page: self-contained, escaped, and each test's conversation shown as its own lines."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ltm_harness._store.eventlog import read_events

from ltm_harness._store.events import TurnEvent
from ltm_harness._report import write_report
from ltm_harness._report.page import MAX_TEXT

BLOCK = re.compile(r'<script type="application/json" id="([^"]+)">(.*?)</script>', re.S)


def blocks(html: str) -> dict[str, dict]:
    return {m.group(1): json.loads(m.group(2)) for m in BLOCK.finditer(html)}


class Resources(HTMLParser):
    """Collects every attribute and element that could make a browser fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()
        self.csp: str | None = None
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        a = dict(attrs)
        for name in ("src", "href", "action", "data", "poster", "srcset", "xlink:href", "formaction", "background"):
            if name in a:
                self.refs.append((tag, name, a[name] or ""))
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = a.get("content")
        self._in, self._attrs = tag, a

    def handle_data(self, data):
        if self._in == "script" and "type" not in self._attrs:
            self.scripts.append(data)
        if self._in == "style":
            self.styles.append(data)

    def handle_endtag(self, tag):
        self._in = None


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_page_loads_nothing_from_anywhere(small_run: Path):
    html = write_report([small_run]).html.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # not even a namespace URL
    page = Resources()
    page.feed(html)
    assert page.refs and all(name == "href" and value.startswith("#") for _, name, value in page.refs), page.refs
    assert not page.tags & {"link", "img", "iframe", "object", "embed", "base", "audio", "video", "source", "form"}
    assert "url(" not in "".join(page.styles) and "@import" not in "".join(page.styles)
    # The policy forbids every fetch and allows exactly the page's own script and stylesheet.
    assert page.csp is not None and "default-src 'none'" in page.csp
    assert len(page.scripts) == 1 and f"script-src {_sha(page.scripts[0])}" in page.csp
    assert len(page.styles) == 1 and f"style-src {_sha(page.styles[0])}" in page.csp
    assert 'style="' not in html  # inline style attributes would be refused by that policy


def test_agent_replies_are_text_in_the_html_and_in_the_data(evil_run: tuple[Path, str], evil_reply: str):
    folder, spec = evil_run
    html = write_report([folder]).html.read_text(encoding="utf-8")
    for raw in ("<script>document.title", "<img src=x", "<b>bold", "<!-- comment"):
        assert raw not in html
    assert html.count("<script") == html.count("</script>") == len(BLOCK.findall(html)) + 1
    data = blocks(html)
    key = next(a["key"] for a in data["report-index"]["agents"] if a["label"] == spec)
    tests = data[f"data-{key}"]["tests"]
    assert tests and all(t["responses"] == [evil_reply] * len(t["questions"]) for t in tests)
    lines = [item for t in tests for item in t["conv"] if item["t"] == "line"]
    assert lines and all(item["reply"] == evil_reply for item in lines)
    assert f"&lt;script&gt;document.title" not in html  # replies are shown by the script, not pre-rendered
    assert spec in html  # the agent's name, escaped text


def test_each_test_shows_its_own_lines_and_the_statement_its_gap_is_measured_from(small_run: Path):
    html = write_report([small_run]).html.read_text(encoding="utf-8")
    data = blocks(html)
    key = next(a["key"] for a in data["report-index"]["agents"] if a["label"] == "oracle")
    tests = {t["id"]: t for t in data[f"data-{key}"]["tests"]}
    events = [e for e in read_events(small_run / "oracle" / "events.jsonl") if isinstance(e, TurnEvent)]
    results = {f"{r['dataset']}/{r['example_id']}": r for r in json.loads((small_run / "oracle" / "results.json").read_text())}
    assert set(tests) == set(results)
    for uid, t in tests.items():
        own = [e for e in events if e.test == uid]
        lines = [i for i in t["conv"] if i["t"] == "line"]
        assert [(i["turn"], i["user"], i["reply"]) for i in lines] == [(e.i, e.user, e.reply) for e in own]
        # Between two of its lines, the collapsed stretch accounts for every other turn and token.
        for a, gap, b in zip(t["conv"], t["conv"][1:], t["conv"][2:]):
            if gap["t"] == "gap" and a["t"] == b["t"] == "line":
                assert gap["turns"] == b["turn"] - a["turn"] - 1
                assert gap["tokens"] == b["pos"] - a["pos"] - a["ut"] - a["rt"]
                others = [e for e in events if a["turn"] < e.i < b["turn"]]
                assert gap["filler"] == sum(e.kind == "filler" for e in others)
        questions = [i for i in lines if i["role"] == "question"]
        assert [q["gap"] for q in questions if q["gap"]] == [
            {"target": g["target_tokens"], "achieved": g["achieved_tokens"]} for g in results[uid]["gaps"]]
    colours = [i for i in tests["colours/0"]["conv"] if i["t"] == "line"]
    answer = [i for i in colours if i["role"] == "answer"]
    assert len(answer) == 1 and results["colours/0"]["expected"][0] in answer[0]["user"]
    assert colours.index(answer[0]) == 2  # the last of three statements: the colour that counts


def test_filler_text_stays_out_of_the_page_but_for_one_example(small_run: Path):
    html = write_report([small_run]).html.read_text(encoding="utf-8")
    filler = [e.user for e in read_events(small_run / "oracle" / "events.jsonl")
              if isinstance(e, TurnEvent) and e.kind == "filler"]
    assert len(filler) > 10
    unique = [text for text in filler if filler.count(text) == 1]
    shown = [text for text in unique if json.dumps(text)[1:-1] in html or text in html]
    assert len(shown) <= 1


def test_long_texts_are_clipped_with_a_note(small_run: Path):
    log = small_run / "null" / "events.jsonl"
    lines = log.read_text().splitlines()
    out = []
    for line in lines:
        e = json.loads(line)
        if e["type"] == "turn" and e["test"] == "colours/0" and e["question"]:
            e["reply"] = "x" * (MAX_TEXT + 500)
        out.append(json.dumps(e))
    log.write_text("\n".join(out) + "\n")
    html = write_report([small_run]).html.read_text(encoding="utf-8")
    data = blocks(html)
    key = next(a["key"] for a in data["report-index"]["agents"] if a["label"] == "null")
    test = next(t for t in data[f"data-{key}"]["tests"] if t["id"] == "colours/0")
    reply = next(i["reply"] for i in test["conv"] if i["t"] == "line" and i["role"] == "question")
    assert reply.startswith("x" * MAX_TEXT) and "500 more characters" in reply and len(reply) < MAX_TEXT + 100


def test_charts_one_per_dataset_plus_overview_and_score_panels(small_run: Path):
    html = write_report([small_run]).html.read_text(encoding="utf-8")
    charts = re.findall(r'<svg class="chart"[^>]*aria-label="([^"]*)"', html)
    assert charts[:4] == ["benchmark score (share of max)", "colours", "jokes", "kv"]
    # The pooled score panel, then one per dataset; no cost chart, since nothing was priced.
    assert charts[4:8] == ["score against achieved information gap: all datasets", "colours: score vs gap",
                           "jokes: score vs gap", "kv: score vs gap"]
    assert "benchmark score against cost" not in charts and "Score against cost" not in html
    # The results hold memory distances: the same panels against them follow.
    assert charts[8:12] == ["score against memory distance: all datasets", "colours: score vs distance",
                            "jokes: score vs distance", "kv: score vs distance"]
    assert sum(c.endswith(": score against achieved gap") for c in charts) == 3  # one per agent
    # The oracle scores 1 everywhere: its bars are full height, the null agent's a sliver.
    colours_chart = re.search(r'aria-label="colours".*?</svg>', html, re.S)
    assert colours_chart is not None
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', colours_chart.group(0))]
    assert heights[0] == 110 and heights[1] == 1.5


def test_the_matrix_has_every_test_and_agent(small_run: Path):
    data = blocks(write_report([small_run]).html.read_text(encoding="utf-8"))
    index = data["report-index"]
    assert [a["label"] for a in index["agents"]] == ["oracle", "null", "retrieval"]
    ids = [t[0] for t in index["tests"]]
    assert ids == sorted(ids) and len(ids) == 6
    oracle_scores = [t[1][0] for t in index["tests"]]
    assert oracle_scores == [1.0] * 6


def test_score_panels_against_memory_distance_once_the_results_hold_it(small_run: Path):
    """The panels take their x quantity as a parameter: the points' `memory_distance` is their x in the distance
    panels (here changed on the loaded points to tell it from the gap), and results without distances (results
    format 1) get no such panels."""
    from ltm_harness._report.curves import GAP, MEMORY_DISTANCE, dataset_points, xy
    from ltm_harness._report.load import load_run
    from ltm_harness._report.page import build_page
    from ltm_harness._report.tables import build_tables, entries

    run = load_run(small_run)
    for agent in run.agents:
        for d in agent.summary.datasets:
            d.curve = [p.model_copy(update={"memory_distance": 3 * p.achieved_gap}) for p in d.curve]
    points = dataset_points(run.agents[0])
    assert [x for x, _, _ in xy(points, MEMORY_DISTANCE)] == [3 * x for x, _, _ in xy(points, GAP)]
    all_entries = entries([run])
    html = build_page("t", [run], all_entries, build_tables(all_entries))
    charts = re.findall(r'<svg class="chart"[^>]*aria-label="([^"]*)"', html)
    assert "score against memory distance: all datasets" in charts
    assert [c for c in charts if c.endswith(": score vs distance")] == ["colours: score vs distance",
                                                                        "jokes: score vs distance", "kv: score vs distance"]
    assert "memory distance (tokens, log scale)" in html
    for agent in run.agents:  # as a format 1 run would be read: no distances, no distance panels
        for d in agent.summary.datasets:
            d.curve = [p.model_copy(update={"memory_distance": None}) for p in d.curve]
    html = build_page("t", [run], all_entries, build_tables(all_entries))
    assert not any("distance" in c for c in re.findall(r'<svg class="chart"[^>]*aria-label="([^"]*)"', html))


def test_the_ltm_score_shows_the_tests_it_averages_and_says_when_it_ranks_against_the_benchmark(small_run: Path):
    from ltm_harness._report.load import load_run
    from ltm_harness._report.tables import ltm_caution

    assert ltm_caution([("oracle", 1.0, 3000.0), ("retrieval", 0.4, 2000.0), ("null", 0.0, 0.0)]) is None
    line = ltm_caution([("oracle", 1.0, 1502.0), ("recent", 0.1, 1800.0), ("retrieval", 0.4, 1987.0)])
    assert line == ("LTM score (the reference's): the mean gap of an agent's perfectly answered tests, not a ranking: "
                    "retrieval shows a higher one than oracle, which scores more.")
    html = write_report([small_run]).html.read_text()
    for agent in load_run(small_run).agents:
        results = agent.results
        perfect = [r for r in results if r.status == "ok" and r.normalized >= 1.0 and r.achieved_gap is not None]
        assert agent.summary.ltm_tests("gap") == len(perfect)
        assert agent.summary.ltm_score == pytest.approx(sum(r.achieved_gap for r in perfect) / len(perfect) if perfect else 0.0)
        over = f"{len(perfect)} test{'' if len(perfect) == 1 else 's'}"
        assert f'tokens<br><span class="std">over {over}</span>' in html
    table = json.loads((small_run / "report.agents.json").read_text())
    assert {row["agent"]: row["ltm_score_tests"] for row in table} == \
        {a.spec: a.summary.ltm_tests("gap") for a in load_run(small_run).agents}
