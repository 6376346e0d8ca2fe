"""`--set KEY=VALUE` on `run` and `estimate`: dotted paths into the config (a dataset by its name), values read as
YAML, validated by the config's own models, one line naming the --set when wrong; and a flag a dataset's mode makes
meaningless (`--span` with LoCoMo in reference mode) refused in one line naming what to set instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._errors import ConfigError
from ltm_harness._runner.config import load_config
from ltm_harness._runner.settings import apply_settings, parse_setting

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


def test_paths_reach_the_run_section_the_common_args_and_a_dataset_by_name():
    cfg = load_config("default")
    out = apply_settings(cfg, ["config.seed=7", "config.judge.model=gpt-4o-mini", "config.turns.attempts=5",
                               "datasets.args.memory_span=8000", "datasets.colours.args.colour_changes=4",
                               "config.agents=[oracle, retrieval]", "config.judge.temperature=0.5"])
    assert out.config.seed == 7 and out.config.judge.model == "gpt-4o-mini" and out.config.turns.attempts == 5
    assert out.datasets.args.memory_span == 8000 and out.config.agents == ["oracle", "retrieval"]
    assert out.config.judge.temperature == 0.5
    colours = [e for e in out.datasets.datasets if e.name == "colours"]
    assert colours and all(e.args["colour_changes"] == 4 for e in colours)
    assert cfg.config.seed == 0  # the config given is left as it was
    # later settings win; `null` and an empty value are nothing
    assert apply_settings(cfg, ["config.seed=1", "config.seed=2"]).config.seed == 2
    assert apply_settings(cfg, ["config.judge.model=gpt", "config.judge.model="]).config.judge.model is None


@pytest.mark.parametrize("given, value", [("config.seed=3", 3), ("a.b=true", True), ("a.b=text here", "text here"),
                                          ("a.b='3'", "3"), ("a.b=[1, 2]", [1, 2]), ("a.b=~/x.json", "~/x.json"),
                                          ("a.b=a=b", "a=b")])
def test_values_are_read_as_yaml(given, value):
    assert parse_setting(given)[1] == value


@pytest.mark.parametrize("given, message", [
    ("config.sed=3", "--set config.sed=3: config.sed: unknown field; remove it or fix its spelling"),
    ("config.turns.attempts=0", "--set config.turns.attempts=0: config.turns.attempts: Input should be greater than or "
                                "equal to 1 (got 0); fix the value"),
    ("config.seed=three", "--set config.seed=three: config.seed: Input should be a valid integer (got 'three'); fix "
                          "the value"),
    ("datasets.locmo.args.x=1", "--set datasets.locmo.args.x=1: the config has no dataset 'locmo' (it lists"),
    ("datasets.colours.mode=1", "a dataset's settings are its args; give datasets.colours.args.KEY"),
    ("seed=3", "a path starts with config. or datasets."),
    ("config.seed", "give KEY=VALUE"),
    ("config.seed=[1", "the value '[1' is not a YAML value"),
    ("config.seed=&a [*a]", "is not a YAML value"),
    ("config.seed.x=1", "--set config.seed.x=1: seed is a value, not a section; set seed itself"),
])
def test_a_wrong_setting_is_one_line_naming_it(given, message):
    with pytest.raises(ConfigError) as exc:
        apply_settings(load_config("default"), ["config.run_name=x", given])
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_huge_setting_is_refused_before_it_is_read():
    with pytest.raises(ConfigError, match="longer than 10,000 characters"):
        parse_setting("config.run_name=" + "x" * 20_000)


def locomo(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "-c", "locomo", "--limit", "1", "--results", str(tmp_path), "--quiet", "--no-report",
            "--set", f"datasets.locomo.args.data_file={LOCOMO}", *extra]


def test_run_reads_a_data_file_given_with_set_and_its_resume_hint_gives_it_again(tmp_path, capsys):
    assert main(locomo(tmp_path, "-a", "oracle")) == 0
    saved = json.loads((tmp_path / "locomo" / "run_config.json").read_text())
    assert saved["datasets"]["datasets"][0]["args"]["data_file"] == str(LOCOMO)
    from argparse import Namespace

    from ltm_harness._cli.commands.run import resume_command
    args = Namespace(config="locomo", agents=["oracle"], span=None, examples=None, seed=None, judge=None, isolated=False,
                     datasets=None, exclude=None, limit=1, results="results", quiet=False, no_report=False,
                     retry_errored=False, allow_errored=False, settings=[f"datasets.locomo.args.data_file={LOCOMO}"])
    assert f"--set datasets.locomo.args.data_file={LOCOMO}" in resume_command(args, "locomo")


def test_a_dataset_arg_given_with_set_is_refused_naming_the_set(tmp_path, capsys):
    assert main(locomo(tmp_path, "--set", "datasets.locomo.args.mode=fast")) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: --set datasets.locomo.args.mode=fast: Input should be 'reference' or 'interleaved'; fix the "
                   "value")


@pytest.mark.parametrize("extra, line", [
    (["--span", "8000", "-a", "oracle@8000"],
     "error: --span 8000: locomo plays in reference mode (every question after the whole conversation), where no span "
     "is used; add --set datasets.locomo.args.mode=interleaved, or leave --span 8000 out"),
    (["--set", "datasets.locomo.args.distance=3000"],
     "error: --set datasets.locomo.args.distance=3000: locomo plays in reference mode (every question after the whole "
     "conversation), where no distance is used; add --set datasets.locomo.args.mode=interleaved, or leave --set "
     "datasets.locomo.args.distance=3000 out"),
    (["--seed", "4"], "error: --seed 4: locomo plays its conversations in file order with no filler, so no seed "
                      "changes it (args.conversations chooses them); leave --seed 4 out"),
])
def test_a_flag_the_mode_makes_meaningless_is_one_line_naming_what_to_set(tmp_path, capsys, extra, line):
    assert main(locomo(tmp_path, *extra)) == 2
    assert capsys.readouterr().err.strip() == line
    assert not (tmp_path / "locomo").exists()  # nothing was started


def test_the_same_flag_in_interleaved_mode_is_used(tmp_path, capsys):
    code = main(locomo(tmp_path, "--span", "8000", "-a", "oracle", "--set", "datasets.locomo.args.mode=interleaved"))
    assert code == 0, capsys.readouterr().err
    saved = json.loads((tmp_path / "locomo" / "run_config.json").read_text())
    assert saved["datasets"]["args"]["memory_span"] == 8000


def test_a_flag_only_some_datasets_ignore_is_a_warning_naming_them(tmp_path, capsys):
    cfg = tmp_path / "mixed.yml"
    cfg.write_text("config: {run_name: mixed}\ndatasets:\n  args: {memory_span: 2000, dataset_examples: 1}\n"
                   f"  datasets:\n    - {{name: colours}}\n    - {{name: locomo, args: {{data_file: '{LOCOMO}'}}}}\n")
    code = main(["estimate", "-c", str(cfg), "--span", "3000", "-a", "oracle"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ("warning: --span 3000: locomo plays in reference mode (every question after the whole conversation), "
            "where no span is used, so it is not used there; add --set datasets.locomo.args.mode=interleaved to use "
            "it there") in err


def test_estimate_takes_set_too(tmp_path, capsys):
    assert main(["estimate", "-c", "default", "-a", "oracle", "--set", "config.sed=1"]) == 2
    assert "--set config.sed=1: config.sed: unknown field" in capsys.readouterr().err


def test_a_study_crossing_spans_over_a_dataset_that_uses_none_is_one_line(tmp_path):
    from ltm_harness._grid.study import load_study

    base = tmp_path / "base.yml"
    base.write_text(f"config: {{run_name: base}}\ndatasets:\n  args: {{memory_span: 2000, dataset_examples: 1}}\n"
                    f"  datasets:\n    - {{name: locomo, args: {{data_file: '{LOCOMO}'}}}}\n")
    study = tmp_path / "study.yml"
    study.write_text("name: distance\nbase: base.yml\nagents: [oracle]\nspans: [2000, 8000]\n")
    with pytest.raises(ConfigError) as exc:
        load_study(study)
    assert str(exc.value) == (f"{study}: spans: locomo plays in reference mode (every question after the whole "
                              "conversation), where no span is used; add args {mode: interleaved} to locomo in the "
                              "config, or leave spans out")
    base.write_text(base.read_text().replace("args: {data_file:", "args: {mode: interleaved, data_file:"))
    assert len(load_study(study).cells) == 2
