"""The wheel works when installed (not editable) in a fresh environment, from any folder.

The wheel is built offline from a copy of the project (setuptools and wheel come with the test extra) and installed
with no dependencies into a fresh venv; the dependencies, HuggingFace `datasets` among them, are the test
environment's, made visible to the fresh venv by a .pth file. Every command then runs from an empty folder, so
nothing of the checkout is on the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "ltm_harness", "datasets", "prompts", "configs",
           "syllabi")
MY_AGENT = textwrap.dedent('''
    from ltm_harness import Agent

    class MyAgent(Agent):
        """Remembers nothing, answers politely."""

        async def reply(self, message, oracle_hint=None):
            return "Thank you, noted."
''')
MY_DATASET = textwrap.dedent('''
    from ltm_harness import Dataset

    class Pets(Dataset):
        name = "pets"
        description = "the user names a pet; later the agent is asked for its name"

        def generate_examples(self, n):
            names = ["Bramble", "Quill", "Pepper"]
            return [self.make_example(i, [f"My cat is called {names[i % 3]}.", "What is my cat called?"],
                                      [False, True], [names[i % 3]], oracle_answers=[names[i % 3]]) for i in range(n)]

        def evaluate_correct(self, questions, responses, expected):
            ok = expected[0].lower() in responses[0].lower()
            return float(ok), 1.0, [f"{expected[0]} {'named' if ok else 'missing'}"]
''')


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (not editable); returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_shipped")
    for name in PROJECT:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(dist), str(source)], check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = dist.glob("ltm_harness-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for kind, example in (("datasets", "colours.py"), ("prompts", "judge/default.json"), ("configs", "default.yml"),
                          ("syllabi", "cl-bandit.json")):
        assert f"ltm_harness/_shipped/{kind}/{example}" in names
    assert not any(n.startswith("tests/") or "chapterbreak_ctx" in n or "__pycache__" in n for n in names)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    return venv / "bin"


def in_empty_folder(bin_dir: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_installed_package_is_the_wheel_and_huggingface_datasets_is_untouched(installed: Path, tmp_path: Path):
    done = in_empty_folder(installed, tmp_path, "python", "-c",
                           "import ltm_harness, datasets; print(ltm_harness.__file__); print(datasets.__file__); "
                           "print(hasattr(datasets, 'load_dataset'))")
    package, hf, is_hf = done.stdout.split()
    assert str(installed.parent) in package and "site-packages" in package
    assert "site-packages" in hf and str(installed.parent) not in hf and is_hf == "True"


@pytest.mark.slow
def test_run_from_an_empty_folder(installed: Path, tmp_path: Path):
    done = in_empty_folder(installed, tmp_path, "ltm-harness", "run", "--quiet", "--no-report")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "results" / "default" / "summary.json").read_text())
    scores = {a["agent"]: a["benchmark_score"] for a in summary["agents"]}
    assert scores["oracle"] == len(summary["agents"][0]["datasets"]) == 17 and scores["null"] == 0.0


def test_list_shows_the_shipped_things(installed: Path, tmp_path: Path):
    done = in_empty_folder(installed, tmp_path, "ltm-harness", "list")
    assert done.returncode == 0, done.stderr
    for name in ("colours", "delayed_recall", "retrieval", "keydoor", "text-envs", "benchmark-v3-32k", "cl-bandit"):
        assert name in done.stdout


def test_a_python_agent_of_the_users_folder(installed: Path, tmp_path: Path):
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    done = in_empty_folder(installed, tmp_path, "ltm-harness", "run", "--quiet", "--no-report", "--span", "1000",
                           "--examples", "1", "-a", "my_agent.py:MyAgent", "-a", "polite=my_agent.py:MyAgent")
    assert done.returncode == 0, done.stderr
    agents = json.loads((tmp_path / "results" / "default" / "summary.json").read_text())["agents"]
    assert [a["agent"] for a in agents] == ["my_agent.py:MyAgent", "polite"]


def test_a_config_with_a_dataset_folder(installed: Path, tmp_path: Path):
    (tmp_path / "my_datasets").mkdir()
    (tmp_path / "my_datasets" / "pets.py").write_text(MY_DATASET)
    (tmp_path / "pets.yml").write_text(textwrap.dedent("""
        config: {run_name: pets, dataset_dirs: [my_datasets], agents: [oracle, "null"]}
        datasets:
          args: {memory_span: 1000, dataset_examples: 2}
          datasets: [{name: pets}, {name: colours}]
    """))
    done = in_empty_folder(installed, tmp_path, "ltm-harness", "run", "-c", "pets.yml", "--quiet", "--no-report")
    assert done.returncode == 0, done.stderr
    agents = json.loads((tmp_path / "results" / "pets" / "summary.json").read_text())["agents"]
    assert {a["agent"]: a["benchmark_score"] for a in agents} == {"oracle": 2.0, "null": 0.0}
