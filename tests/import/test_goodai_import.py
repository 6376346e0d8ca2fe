"""`import-goodai`: the reference benchmark's *.def.json definitions become a run this harness runs unchanged.

Most tests use a small reference folder the test writes itself (made-up tests in the reference's file
format, one per dataset folder); one uses the real v3 32k definitions when they are beside the project.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ltm_harness._cli.main import main
from ltm_harness._runner.config import load_config
from ltm_harness._authoring.definitions import Manifest, definitions_match
from ltm_harness._errors import LTMError
from ltm_harness._store.layout import RunFolder
from ltm_harness._authoring.example import TestExample
from ltm_harness._interop.goodai import import_goodai
from ltm_harness._interop.goodai_converters import CONVERTERS
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._results.models import TestResult
from ltm_harness._runner.prepare import build_datasets

SHARED_DEFS = Path(__file__).resolve().parents[3] / "shared" / "goodai-v3-32k-definitions"
Q = "What is my favourite colour?"
JSON_ANSWER = '\nProvide your answer in JSON form with a single word as answer, like this: {"answer": "word"}'


def spread(n: int) -> list[dict]:
    step = 90 / (n - 1)
    return [{"percentage_finished": (i + 1) * step} for i in range(n - 1)] + [{}]


def ref(script, is_question, expected, waits=None, **flags) -> dict:
    return {"script": script, "is_question": is_question, "waits": waits if waits is not None else spread(len(script)),
            "expected_responses": expected, "can_be_interleaved": True, "is_temporal": flags.get("is_temporal", False),
            "uses_callback": flags.get("uses_callback", False)}


ROUTE = ("(Just an example, if exact instructions are followed)\nFrom Old Forge, go 2km North to Weir.\n"
         "From Weir, go 3km East to Chapel.\nFrom Chapel, go 1km South to Granary.")
OPTIONS = [f"Option {k}:\n\n\t4. Chapter four  Made-up opening number {k} of a chapter." for k in range(1, 7)]
TESTS = {
    "Colours": ref(["The name of my favourite colour is Teal.", "Ochre is my favourite colour.",
                    "My favourite colour could be described as Mauve.", Q], [False] * 3 + [True], ["Mauve"]),
    "Names": ref(["Refer to me as Bartholomew.", "My name has changed to Philippa.", "What is my name?"],
                 [False, False, True], ["Philippa"]),
    "NameList": ref(["My name is Odile.", "Florian is my name.", "What have been all of the names that I have "
                     "given you? Express the answer as a JSON list."], [False, False, True], ["Odile", "Florian"]),
    "Shopping": ref(["Please add 2 Kumquat to my shopping list", "Remove 1 Kumquat.", "I want to buy 3 Soap.",
                     "What is on my current shopping list? Express the list of items as a JSON list of objects with "
                     "`item` and `quantity` properties only. Consolidate items that are the same."],
                    [False] * 3 + [True], [["kumquat", 1], ["soap", 3]]),
    # As in the reference: no question line, one more is_question entry than script lines, time waits.
    "Jokes": ref(["A made-up joke about a ladder that went up in the world.", "A made-up joke about a very tired clock."],
                 [False, False, True], ["A made-up joke about a ladder that went up in the world."],
                 waits=[{"time": 3600, "percentage_finished": 45.0}, {"time": 5400, "percentage_finished": 90.0}, {}],
                 is_temporal=True),
    "SallyAnne": ref(["They are broadcasting a program on TV. Okay?", "(On TV) Mia entered the loft.\n",
                      "(On TV) Tom entered the loft.\n", "(On TV) The hat is in the box.\n", "(On TV) Mia exited the loft.\n",
                      "(On TV) Tom moved the hat to the crate.\n",
                      "The TV program has ended for today. Where will Mia look for the hat?" + JSON_ANSWER],
                     [False] * 6 + [True], ["box"]),
    "Prospective Memory": ref(["'Made-up words to live by, said twice.' - Imaginary Author",
                               "After responding to the following unrelated user prompts, please append the quote from "
                               "Imaginary Author to your 2nd response. Count your response to this message as the first response."],
                              [False, True], [["Made-up words to live by, said twice.", "Imaginary Author", 2]],
                              uses_callback=True),
    "Trigger Response": ref(["Whenever I mention rain then say: 'Take the green umbrella'", "It might rain today.",
                             "Looks like rain."], [False, True, True], ["Take the green umbrella"] * 2),
    "Spy Meeting": ref(["You will be given three messages from different people Ann Bee, Cy Dee, and Ed Eff.",
                        "Cy Dee: The time we will meet is when the kettle sings.",
                        "Ed Eff: Bring to the meeting something to dig with.",
                        "Ann Bee: We will rendezvous where the bees are kept.",
                        "Given the clandestine messages you have received, tell me when and where and what to bring."],
                       [False] * 4 + [True], [["teatime", "tea time"], ["spade", "shovel"], ["apiary", "beehives"]]),
    "Locations Directions": ref(["There is a Old Forge in the center of my hometown.",
                                 "About 2 km North of the Old Forge there is a Weir",
                                 "Chapel is a location in my home town, it is 3 KM, East from Weir.",
                                 "And finally there is Granary which is South from Chapel and 1 KM from it.",
                                 "How would I travel from Old Forge to Granary following those interesting points?"],
                                [False] * 4 + [True], [ROUTE]),
    "Locations": ref(["There is a Mill in the center of my hometown.", "I visited Quay, which is 2 KM, West from Mill.",
                      "And finally there is Kiln which is North from Quay and 0 KM from it.",
                      "Please calculate the direction and distance starting from Kiln going directly to Mill."],
                     [False] * 3 + [True], ["2 km East"]),
    "ChapterBreak": ref(["I am going to read you some chapters of a book. Okay?",
                         "1st page:\n\nA made-up page of a story about a lighthouse keeper. " * 3,
                         "2nd and last page:\n\nThe made-up keeper closes the door for the night.",
                         "Now I will give you 6 options for the beginning of the next chapter. Ready?", *OPTIONS,
                         "Which option do you think is the true next-chapter beginning?\nAnswer with a single-digit number."],
                        [False] * 10 + [True], ["3"], waits=[{}] * 11),
    "Delayed Recall": ref(["Take a look at the following facts about a fictional world:\n\nIn Varnholt the rivers run "
                           "uphill.\nThe moons of Varnholt are called Esk and Tull.",
                           "One question about the fictional world. Which way do the rivers of Varnholt run?",
                           "Going back to the fictional world, what are its moons called?"],
                          [False, True, True], ["Uphill.", "Esk and Tull."]),
    "Restaurant": ref([], [], [], waits=[]),  # dynamic in the reference: empty definitions
    "Mystery Quiz": ref(["A test of a dataset nobody converts.", "Well?"], [False, True], ["yes"]),
}
REFERENCE_CONFIG = {
    "config": {"debug": True, "run_name": "Mini Benchmark - 4k",
               "incompatibilities": [["names", "name_list"], ["locations", "locations_directions"]]},
    "datasets": {"args": {"memory_span": 4000, "dataset_examples": 1, "seed": 5}, "datasets": [
        {"name": "colours", "args": {"colour_changes": 3}}, {"name": "shopping", "args": {"item_changes": 3, "bogus": 1}},
        {"name": "locations_directions", "args": {"known_locations": 4}}, {"name": "jokes", "args": {"jokes_told": 2}},
        {"name": "spy_meeting"}, {"name": "chapterbreak"}, {"name": "restaurant"}]},
}


def write_reference(root: Path, tests: dict[str, dict] = TESTS, config: dict | None = REFERENCE_CONFIG) -> Path:
    for folder, test in tests.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "0.def.json").write_text(json.dumps(test, indent=2))
    (root / "Empty Folder").mkdir()
    if config is not None:
        (root / "config.yml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture
def reference(tmp_path) -> Path:
    return write_reference(tmp_path / "ref")


def read_results(run_dir: Path, agent: str) -> dict[str, TestResult]:
    raw = json.loads((run_dir / agent / "results.json").read_text())
    return {r["dataset"]: TestResult.model_validate(r) for r in raw}


def test_import_then_run_unchanged(reference, tmp_path, capsys):
    results = tmp_path / "results"
    assert main(["import-goodai", str(reference), "--results", str(results)]) == 1  # two folders were skipped
    captured = capsys.readouterr()
    assert "warning: Restaurant: skipped (the reference writes these tests during its run" in captured.err
    assert "warning: Mystery Quiz: skipped (no converter for this dataset folder)" in captured.err
    assert "Empty Folder" not in captured.out + captured.err
    assert "datasets.args.seed" in captured.err and "shopping" in captured.err and "bogus" in captured.err
    run_dir = results / "goodai-mini-benchmark-4k"
    config_path = run_dir / "config.yml"
    assert f"run -c {config_path}" in " ".join(captured.out.split())

    manifest = Manifest.model_validate_json((run_dir / "definitions" / "manifest.json").read_text())
    converters = {c.folder: c.dataset for c in CONVERTERS}
    assert manifest.imported_from == str(reference.resolve()) and len(manifest.tests) == 13
    cfg = load_config(config_path)
    names = [d.name for d in cfg.datasets.datasets]
    assert names[:5] == ["colours", "shopping", "locations_directions", "jokes", "spy_meeting"]  # the reference's order
    assert sorted(names) == sorted(converters[f] for f in TESTS if f in converters)
    assert cfg.datasets.args.memory_span == 4000 and cfg.config.run_name == "goodai-mini-benchmark-4k"
    assert cfg.config.incompatibilities == [["names", "name_list"], ["locations", "locations_directions"]]
    assert next(d for d in cfg.datasets.datasets if d.name == "shopping").args == {"item_changes": 3}

    code = main(["run", "-c", str(config_path), "--results", str(results), "-a", "oracle", "-a", "null", "--quiet"])
    assert code == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    scores = {a["agent"]: {d["dataset"]: d["score"] for d in a["datasets"]} for a in summary["agents"]}
    assert scores["oracle"] == {name: 1.0 for name in names}, scores
    assert all(s == 0.0 for s in scores["null"].values()), scores
    oracle = read_results(run_dir, "oracle")
    assert oracle["colours"].expected == ["Mauve"] and oracle["shopping"].expected == [["kumquat", 1], ["soap", 3]]
    assert oracle["jokes"].questions[0].startswith("Which joke did I tell you about ")
    assert oracle["jokes"].questions[0].endswith(" ago?") and "{elapsed}" not in oracle["jokes"].questions[0]
    # Gaps are measured from the right statement: SallyAnne from Mia's exit, ChapterBreak from the last page.
    sally = TestExample.model_validate_json((run_dir / "definitions" / "sallyanne" / "0.def.json").read_text())
    assert sally.extra["answer_line"] == 4
    chapter = TestExample.model_validate_json((run_dir / "definitions" / "chapterbreak" / "0.def.json").read_text())
    assert chapter.extra["answer_line"] == 2 and chapter.extra["options"] == 6
    for result in oracle.values():
        for gap in result.gaps:
            assert gap.target_tokens and abs(gap.achieved_tokens - gap.target_tokens) <= 0.1 * gap.target_tokens


def test_imported_tests_are_kept_whatever_the_seed_and_refused_by_another_config(reference, tmp_path):
    results = tmp_path / "results"
    result = import_goodai(reference, results, run_name="mini")
    definitions = result.run_dir / "definitions"
    before = {p: p.read_bytes() for p in definitions.rglob("*.json")}
    assert main(["run", "-c", str(result.config_path), "--results", str(results), "-a", "oracle", "--seed", "9",
                 "--span", "3000", "--quiet"]) == 0
    assert {p: p.read_bytes() for p in definitions.rglob("*.json")} == before
    # Re-scoring checks that the definitions belong to the config: imported ones do, for their datasets.
    cfg = load_config(result.config_path)
    assert definitions_match(definitions, build_datasets(cfg))
    # A config with other datasets under the same run name is refused, and the imported tests stay.
    other = tmp_path / "other.yml"
    other.write_text(yaml.safe_dump({"config": {"run_name": "mini"}, "datasets": {"datasets": [{"name": "kv"}]}}))
    assert main(["run", "-c", str(other), "--results", str(results), "-a", "oracle", "--quiet", "--overwrite"]) == 2
    assert {p: p.read_bytes() for p in definitions.rglob("*.json")} == before
    with pytest.raises(LTMError, match=r"holds tests imported from .* not this config's; run them with .*config.yml"):
        from ltm_harness._runner.prepare import prepare

        prepare(load_config(other), results)
    assert not definitions_match(definitions, build_datasets(load_config(other)))


def test_an_existing_import_is_replaced_only_with_force(reference, tmp_path):
    result = import_goodai(reference, tmp_path, run_name="x")
    assert main(["run", "-c", str(result.config_path), "--results", str(tmp_path), "-a", "null", "--quiet"]) == 0
    with pytest.raises(LTMError, match="already exists; pass --force"):
        import_goodai(reference, tmp_path, run_name="x")
    (tmp_path / "x" / "definitions" / "colours" / "stale.def.json").write_text("{}")
    assert (tmp_path / "x" / "null" / "results.json").is_file()
    with RunFolder(tmp_path / "x").lock():  # a run is writing there: nothing is replaced under it
        with pytest.raises(LTMError, match="is in use by this process"):
            import_goodai(reference, tmp_path, run_name="x", force=True)
    assert (tmp_path / "x" / "null" / "results.json").is_file()
    import_goodai(reference, tmp_path, run_name="x", force=True)
    assert not (tmp_path / "x" / "definitions" / "colours" / "stale.def.json").exists()
    # The results of the replaced tests go with them.
    assert not (tmp_path / "x" / "null").exists() and not (tmp_path / "x" / "summary.json").exists()


def test_a_single_answer_given_as_a_string(tmp_path):
    """The reference writes a Locations answer of "same place" as a bare string, not a list."""
    same = {**TESTS["Locations"], "expected_responses": "They are in the same location."}
    result = import_goodai(write_reference(tmp_path / "ref", {"Locations": same}), tmp_path / "r", span=2000)
    example = TestExample.model_validate_json((result.run_dir / "definitions" / "locations" / "0.def.json").read_text())
    assert example.expected_responses == ["They are in the same location."] and "distance" not in example.extra
    assert main(["run", "-c", str(result.config_path), "--results", str(tmp_path / "r"), "-a", "oracle", "-a", "null",
                 "--quiet"]) == 0
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert {a["agent"]: a["benchmark_score"] for a in summary["agents"]} == {"oracle": 1.0, "null": 0.0}


def test_without_a_config_the_span_must_be_given(tmp_path):
    source = write_reference(tmp_path / "ref", {"Colours": TESTS["Colours"]}, config=None)
    with pytest.raises(LTMError, match="pass --span N"):
        import_goodai(source, tmp_path / "r")
    result = import_goodai(source, tmp_path / "r", span=2000)
    cfg = load_config(result.config_path)
    assert cfg.datasets.args.memory_span == 2000 and [d.name for d in cfg.datasets.datasets] == ["colours"]
    assert cfg.config.run_name == "goodai-ref" and not result.skipped


@pytest.mark.parametrize("folder, change, message", [
    ("Colours", {"is_question": "yes"}, r"Colours/0.def.json: is_question: Input should be a valid array; it is not a test definition"),
    ("Colours", {"surprise": 1}, r"surprise: Extra inputs are not permitted"),
    ("Colours", {"is_question": [False, True]}, r"cannot be read as a Colours test \(is_question has 2 entries"),
    ("Jokes", {"expected_responses": ["A joke never told."]}, r"must be one of the jokes told"),
    ("Spy Meeting", {"expected_responses": [["x"]]}, r"3 messages but 1 lists"),
    ("Locations Directions", {"expected_responses": ["From A, go 2km North to B."]}, r"the expected route has 1 steps"),
    ("ChapterBreak", {"expected_responses": ["7"]}, r"is not an option number 1..6"),
    ("Shopping", {"expected_responses": [["soap", "three"]]}, r"is not an \[item, quantity\] pair"),
])
def test_broken_definitions_are_reported_with_file_and_field(tmp_path, folder, change, message):
    source = write_reference(tmp_path / "ref", {folder: {**TESTS[folder], **change}})
    with pytest.raises(LTMError, match=message):
        import_goodai(source, tmp_path / "r")


def test_a_folder_with_nothing_importable_is_an_error(tmp_path):
    source = write_reference(tmp_path / "ref", {"Mystery Quiz": TESTS["Mystery Quiz"], "Restaurant": TESTS["Restaurant"]})
    with pytest.raises(LTMError, match=r"no reference dataset folder .*\(known folders: ChapterBreak, Colours"):
        import_goodai(source, tmp_path / "r")
    with pytest.raises(LTMError, match="not a folder"):
        import_goodai(tmp_path / "nowhere", tmp_path / "r")


def test_every_converter_targets_an_existing_dataset():
    registry = known_datasets()
    assert all(c.dataset in registry for c in CONVERTERS)
    assert len({c.folder for c in CONVERTERS}) == len(CONVERTERS)


@pytest.mark.skipif(not SHARED_DEFS.is_dir(), reason=f"the reference's v3 32k definitions are not at {SHARED_DEFS}")
def test_the_published_v3_32k_definitions(tmp_path, capsys):
    results = tmp_path / "results"
    result = import_goodai(SHARED_DEFS, results)
    assert result.tests == 30 and [f.folder for f in result.skipped] == ["Restaurant"]
    cfg = load_config(result.config_path)
    assert cfg.config.run_name == "goodai-benchmark-3-32k" and cfg.datasets.args.memory_span == 32000
    assert [d.name for d in cfg.datasets.datasets] == [
        "colours", "shopping", "locations_directions", "name_list", "jokes", "sallyanne", "prospective_memory",
        "trigger_response", "spy_meeting", "chapterbreak"]
    definitions = result.run_dir / "definitions"
    jokes = TestExample.model_validate_json((definitions / "jokes" / "0.def.json").read_text())
    assert jokes.script[-1] == "Which joke did I tell you about {elapsed} ago?" and len(jokes.waits) == len(jokes.script)
    sally = TestExample.model_validate_json((definitions / "sallyanne" / "0.def.json").read_text())
    assert sally.script[sally.extra["answer_line"]] == "(On TV) Jacob exited the attic.\n"
    spy = TestExample.model_validate_json((definitions / "spy_meeting" / "0.def.json").read_text())
    assert spy.extra["topics"] == ["thing", "place", "time"]
    route = TestExample.model_validate_json((definitions / "locations_directions" / "0.def.json").read_text())
    assert route.extra["moves"] == [[4, "East"], [3, "West"], [3, "South"], [2, "East"], [1, "North"]]
    assert main(["run", "-c", str(result.config_path), "--results", str(results), "-a", "oracle", "-a", "null",
                 "--span", "16000", "--quiet"]) == 0
    summary = json.loads((result.run_dir / "summary.json").read_text())
    for agent in summary["agents"]:
        want = 1.0 if agent["agent"] == "oracle" else 0.0
        assert {d["dataset"]: d["score"] for d in agent["datasets"]} == {d.name: want for d in cfg.datasets.datasets}
