"""Agent colours: one per agent name on a whole page (the results index, a comparison, a study), the same on every
page, and never shared by two names of one page."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path

import pytest

from ltm_harness._grid.report import build_study_page
from ltm_harness._grid.results import ScoreRow
from ltm_harness._report import write_report
from ltm_harness._report.colours import PALETTE, colour_css, home_slot, page_slots, preferences, slot_colour, variants
from ltm_harness._report.index import write_index
from ltm_harness.testing import make_config, run_config

# retrieval and oracle rank the same colour first, so a run holding both gives retrieval its second colour, and a
# run without oracle its first: chosen per run, retrieval had two colours in one index.
RUNS = {"run-a": ["oracle", "retrieval", "null"], "run-b": ["retrieval", "recent:1000"], "run-c": ["null", "retrieval"]}


def test_a_name_has_the_same_colour_in_any_order_and_collisions_go_to_the_name_sorted_first():
    names = ["oracle", "retrieval", "recent:1000", "null", "openai:gpt-4o"]
    base = page_slots(names)
    for order in itertools.permutations(names):
        assert page_slots(order) == base  # the page's order does not matter
    assert len(set(base.values())) == len(names)
    assert preferences("oracle")[0] == preferences("retrieval")[0] == base["oracle"]
    assert base["retrieval"] == preferences("retrieval")[1]
    for name in ("recent:1000", "null", "openai:gpt-4o"):
        assert base[name] == home_slot(name) == page_slots([name])[name]
    assert page_slots(["retrieval", "null", "retrieval"]) == page_slots(["null", "retrieval"])  # one per name


def test_more_names_than_palette_colours_still_never_share_a_colour():
    many = [f"agent-{i}" for i in range(3 * len(PALETTE))]
    slots = page_slots(many)
    assert sorted(slots.values()) == list(range(len(many)))  # the palette first, then generated slots
    colours = [slot_colour(s) for s in slots.values()]
    assert len(set(colours)) == len(many) and all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colours)
    assert slots == page_slots(reversed(many))
    css = colour_css(slots.values())
    assert all(f".c{s} {{ background-color: {slot_colour(s)}; }}" in css for s in slots.values())


def test_variants_count_the_earlier_appearances_of_a_name():
    assert variants(["a", "b", "a", "a", "b"]) == [0, 0, 1, 2, 1]


CSS = re.compile(r"\.(c\d+) \{ background-color: (#[0-9A-F]{6}); \}")


def _swatches(page: str, css_of: str | None = None) -> list[tuple[str, str, bool]]:
    """(agent name, colour, striped) of every swatch of a page (the index's agents; a report's legend, summary and
    per-agent sections; a study's legend), the colours read from the page's (or `css_of`'s) style."""
    css = dict(CSS.findall(css_of or page))
    found = re.findall(r'<span class="swatch (c\d+)( alt)?"></span>([^<]+?)(?: <b| ·|</span>)', page)
    return [(name.strip(), css[cls], bool(alt)) for cls, alt, name in found]


def _colours(page: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, colour, _ in _swatches(page):
        out.setdefault(name, set()).add(colour)
    return out


@pytest.fixture(scope="module")
def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("colours") / "results"
    for name, agents in RUNS.items():
        asyncio.run(run_config(make_config(["colours", "kv"], span=1500, examples=1, run_name=name), root, agents))
    return [root / name for name in RUNS]


def test_each_agent_has_one_colour_on_the_index_the_comparison_and_the_study(shared_runs: list[Path], tmp_path: Path):
    index = write_index(shared_runs[0].parent).read_text()
    compare = write_report(shared_runs, tmp_path / "compare.html").html.read_text()
    rows = [ScoreRow(agent=agent, config=config, dataset="all datasets", span=span, seeds=1, mean=0.5, std=0.0,
                     ci_low=None, ci_high=None, level=0.95, scores=[0.5], seed_list=[0])
            for agent in ("oracle", "retrieval", "null", "recent:1000") for config in ("a", "b") for span in (1000, 2000)]
    study = build_study_page("study", rows, [], [], [], 0.95)
    pages = {"index": _colours(index), "compare": _colours(compare), "study": _colours(study)}
    for page, colours in pages.items():
        assert set(colours) == {"oracle", "retrieval", "null", "recent:1000"}, page
        assert all(len(c) == 1 for c in colours.values()), (page, colours)  # one colour per name on the page
        assert len({next(iter(c)) for c in colours.values()}) == 4, page  # and no two names share one
    assert pages["index"] == pages["compare"] == pages["study"]  # the same colours on every page
    assert len([s for s in _swatches(index) if s[0] == "retrieval"]) == 3  # retrieval is in all three runs
    # the same agent's later appearances are striped in the legends (and drawn dashed or lighter in the charts)
    legend = re.search(r'<p class="legend">.*?</p>', compare)
    assert legend and [alt for name, _, alt in _swatches(legend.group(), compare) if name == "retrieval"] == [False, True, True]
    assert [alt for name, _, alt in _swatches(study) if name == "null"] == [False, True]
    bars = re.findall(r'<g class="bar"><title>([^:]+?) · [^<]*</title><rect [^>]*fill="(#[0-9A-F]{6})"', compare)
    assert bars and all({colour} == pages["compare"][name] for name, colour in bars)  # charts in the legend's colours


def test_every_page_of_a_results_folder_gives_a_name_one_colour_whatever_the_runs_order(tmp_path: Path):
    """Two runs with agents in different orders, each with its report written as it finishes (as `run` does), then
    the index, a comparison and a study of the same folder: one colour per name on all of them. Before, each page
    chose among its own names, so retrieval (which ranks oracle's colour first) changed colour from a run's report
    without oracle to the index with it."""
    from ltm_harness._store.layout import colours_file

    root = tmp_path / "results"
    reports = {}
    for name, agents in (("first", ["retrieval", "null"]), ("second", ["null", "oracle", "recent:1000", "retrieval"])):
        asyncio.run(run_config(make_config(["colours"], span=1500, examples=1, run_name=name), root, agents))
        reports[name] = _colours(write_report([root / name]).html.read_text())
    index = _colours(write_index(root).read_text())
    compare = _colours(write_report([root / "second", root / "first"], root / "compare.html").html.read_text())
    rows = [ScoreRow(agent=agent, config=None, dataset="all datasets", span=1000, seeds=1, mean=0.5, std=0.0,
                     ci_low=None, ci_high=None, level=0.95, scores=[0.5], seed_list=[0])
            for agent in ("oracle", "retrieval")]
    study = _colours(build_study_page("study", rows, [], [], [], 0.95, root=root))
    pages = [reports["first"], reports["second"], index, compare, study]
    colour = {}
    for page in pages:
        for label, colours in page.items():
            name = label.split(" — ")[0]  # a run's report says "retrieval — benchmark 1.00/1" in places
            assert len(colours) == 1, (name, colours)
            assert colour.setdefault(name, next(iter(colours))) == next(iter(colours)), name  # the same on every page
    assert set(colour) == {"retrieval", "null", "oracle", "recent:1000"}
    assert len(set(colour.values())) == 4  # no two names of the folder share a colour
    # retrieval came first, so it has its own first colour; oracle, which ranks the same colour first, another one
    assert colour["retrieval"] == slot_colour(home_slot("retrieval")) != colour["oracle"]
    assert colours_file(root).is_file()


def test_a_folder_that_cannot_keep_colours_gives_the_page_its_own(tmp_path: Path):
    from ltm_harness._report.colours import folder_slots

    missing = tmp_path / "file"
    missing.write_text("not a folder")
    assert folder_slots(missing, ["oracle", "retrieval"]) == page_slots(["oracle", "retrieval"])
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".colours.json").write_text('{"slots": {"oracle": "red", "null": 2, "x": true, "y": -1}}')
    slots = folder_slots(broken, ["oracle", "null"])
    assert slots["null"] == 2 and slots["oracle"] != 2  # the readable entry kept, the others given again
