"""Config validation, CLI behaviour and the dataset-package name clash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._runner.config import CONFIG_DIR, load_config
from ltm_harness._errors import LTMError
from ltm_harness._runner.prepare import build_datasets

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "c.yml"
    p.write_text(textwrap.dedent(text))
    return p


GOOD = """
config: {run_name: x}
datasets:
  args: {memory_span: 2000, dataset_examples: 1}
  datasets:
    - name: colours
      args: {colour_changes: 2}
"""


@pytest.mark.parametrize("text, message", [
    ("config: {run_name: x\n", "not valid YAML at line"),
    ("- a\n- b\n", "must be a mapping"),
    (GOOD.replace("run_name: x", "run_nam: x"), "config.run_nam: unknown field"),
    (GOOD.replace("memory_span: 2000", "memory_span: lots"), "datasets.args.memory_span"),
    (GOOD.replace("datasets:\n  args", "datasetz:\n  args"), "unknown field"),
    ("config: {run_name: x}\n", "datasets: required field is missing"),
    (GOOD.replace("run_name: x", "run_name: x, incompatibilities: [[colours]]"), "config.incompatibilities"),
])
def test_bad_configs_give_one_clear_line(tmp_path, text, message):
    with pytest.raises(LTMError) as err:
        load_config(write(tmp_path, text))
    assert message in str(err.value)
    assert str(tmp_path / "c.yml") in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("args, message", [
    ({"colour_chnges": 2}, "datasets.datasets[0].args.colour_chnges: Extra inputs are not permitted; remove it"),
    ({"colour_changes": "many"}, "datasets.datasets[0].args.colour_changes"),
])
def test_bad_dataset_args_name_the_field(tmp_path, args, message):
    cfg = load_config(write(tmp_path, GOOD))
    cfg.datasets.datasets[0].args = args
    with pytest.raises(LTMError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_datasets(cfg, "c.yml")


def test_unknown_dataset_lists_the_known_ones(tmp_path):
    cfg = load_config(write(tmp_path, GOOD.replace("name: colours", "name: colors")))
    with pytest.raises(LTMError, match="unknown dataset 'colors'; known datasets: .*colours"):
        build_datasets(cfg)


def test_shipped_configs_are_valid():
    shipped = sorted(CONFIG_DIR.glob("*.yml"))
    assert {p.stem for p in shipped} >= {"default", "benchmark-v3-1k", "benchmark-v3-32k", "benchmark-v3-120k",
                                          "benchmark-v3-200k", "benchmark-v3-500k", "benchmark-v3-32k-isolated"}
    for path in shipped:
        cfg = load_config(path)
        assert build_datasets(cfg, str(path))


def test_cli_errors_are_one_line_without_traceback(tmp_path, capsys):
    assert main(["run", "-c", str(write(tmp_path, GOOD)), "-a", "nobody", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown agent 'nobody'") and "Traceback" not in err
    assert main(["run", "-c", "no-such-config", "--results", str(tmp_path)]) == 2
    assert "config 'no-such-config' not found" in capsys.readouterr().err
    assert main(["run", "-c", str(write(tmp_path, GOOD)), "-a", "recent:abc", "--results", str(tmp_path)]) == 2
    assert "recent:N" in capsys.readouterr().err


def test_cli_run_writes_results_and_prints_tables(tmp_path, capsys):
    code = main(["run", "-c", str(write(tmp_path, GOOD)), "-a", "oracle", "-a", "null", "--span", "1500",
                 "--examples", "2", "--seed", "4", "--run-name", "cli run", "--results", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "benchmark score 1.00/1" in out and "null" in out
    run_dir = tmp_path / "cli_run"
    assert (run_dir / "summary.json").is_file()
    assert (run_dir / "oracle" / "events.jsonl").is_file() and (run_dir / "null" / "results.json").is_file()
    assert len(list((run_dir / "definitions" / "colours").glob("*.def.json"))) == 2


def test_list_shows_datasets_agents_and_configs(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("colours", "oracle", "retrieval", "recent", "openai", "http", "benchmark-v3-32k", "[@max_context]"):
        assert word in out


def test_help_everywhere():
    for args in (["--help"], ["run", "--help"], ["list", "--help"]):
        with pytest.raises(SystemExit) as stop:
            main(args)
        assert stop.value.code == 0


def test_dataset_modules_do_not_clash_with_a_top_level_datasets_package(tmp_path):
    """A `datasets` package (as HuggingFace installs) and our dataset modules load in one process."""
    fake = tmp_path / "site" / "datasets"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("MARKER = 'huggingface-datasets-stand-in'\n")
    code = textwrap.dedent("""
        import datasets
        assert datasets.MARKER == 'huggingface-datasets-stand-in'
        from ltm_harness._authoring.catalog import known_datasets
        found = known_datasets()
        assert 'colours' in found
        import datasets as again
        assert again is datasets and again.MARKER == 'huggingface-datasets-stand-in'
        assert found['colours'].__module__.startswith('ltm_harness_datasets.')
        print('ok')
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    # Run from the project root, where a bare `datasets/` folder sits next to the code.
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    # And the other order: our datasets first, then the package.
    code2 = "from ltm_harness._authoring.catalog import known_datasets; known_datasets(); import datasets; assert datasets.MARKER; print('ok')"
    done = subprocess.run([sys.executable, "-c", code2], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_main_command_with_no_arguments_runs_the_offline_default(tmp_path):
    """`python -m ltm_harness run`, as the README's first command runs it: no arguments, no key, no network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    done = subprocess.run([sys.executable, "-m", "ltm_harness", "run"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for agent in ("oracle", "retrieval", "recent:500", "null"):
        assert agent in done.stdout
    run_dir = tmp_path / "results" / "default"
    assert (run_dir / "summary.json").is_file()
    summary = json.loads((run_dir / "summary.json").read_text())
    scores = {a["agent"]: a["benchmark_score"] for a in summary["agents"]}
    assert scores["oracle"] == len(summary["agents"][0]["datasets"])
    assert scores["oracle"] > scores["retrieval"] > scores["recent:500"] >= scores["null"] == 0
    # the first-run table says what the LTM score averages, and why it ranks retrieval above the oracle here
    ltm = {a["agent"]: a["ltm_score"] for a in summary["agents"]}
    assert ltm["retrieval"] > ltm["oracle"] > 0
    out = " ".join(done.stdout.split())  # the table's caption wraps at the terminal's width
    tests = sum(len(d["curve"]) for d in summary["agents"][0]["datasets"])  # the oracle answers every test perfectly
    assert f"LTM score {ltm['oracle']:,.0f} tokens over {tests} perfect tests" in out
    assert f"LTM score │ {ltm['oracle']:,.0f} │" in out and f"tests it averages │ {tests} │" in out
    assert ("LTM score (the reference's): the mean gap of an agent's perfectly answered tests, not a ranking: "
            "retrieval shows a higher one than oracle, which scores more.") in out


def test_huggingface_datasets_and_our_datasets_load_in_one_process():
    """The real HuggingFace `datasets` package (a test dependency) and the built-in dataset modules."""
    code = textwrap.dedent("""
        import datasets
        assert hasattr(datasets, "load_dataset"), datasets
        from ltm_harness._authoring.catalog import known_datasets
        found = known_datasets()
        assert {"colours", "kv", "jokes"} <= set(found)
        import datasets as again
        assert again is datasets and hasattr(again, "load_dataset")
        print("ok", datasets.__version__)
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")
