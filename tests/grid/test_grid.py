"""A study runs each cell as an ordinary run: its results equal those of `run` given the same cell alone, on the
local executor and on Ray; a Ray worker killed mid-cell and a driver killed mid-study change nothing but time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._grid.index import read_index
from ltm_harness._grid.study import load_study
from ltm_harness._store.layout import StudyFolder

from .grid_fixture import outputs, write_study

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def twelve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12-cell study, written, and run with the local executor into `<it>/local`."""
    folder = tmp_path_factory.mktemp("twelve")
    study = write_study(folder)
    assert main(["grid", str(study), "--results", str(folder / "local"), "--quiet"]) == 0
    return folder


@pytest.fixture(scope="module")
def alone(twelve: Path) -> Path:
    """Each cell of the study run alone with `run` (its agent, --span, --seed, its name), into `<study>/alone`."""
    study = load_study(twelve / "study.yml")
    for cell in study.cells:
        code = main(["run", "-c", str(twelve / "base.yml"), "-a", cell.spec, "--span", str(cell.span), "--seed",
                     str(cell.seed), "--run-name", cell.id, "--results", str(twelve / "alone"), "--quiet",
                     "--no-report"])
        assert code == 0, cell.id
    return twelve / "alone"


def cells(results: Path, study: str = "twelve") -> dict[str, dict[str, bytes]]:
    root = StudyFolder(results / study).cells
    return {p.name: outputs(p) for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".")}


def test_a_study_of_twelve_cells_equals_each_cell_run_alone(twelve: Path, alone: Path):
    got = cells(twelve / "local")
    assert len(got) == 12
    for cell, files in got.items():
        expected = outputs(alone / cell)
        assert sorted(files) == sorted(expected), cell
        assert "retrieval/events.jsonl" in files or any(k.endswith("events.jsonl") for k in files)
        for rel in expected:
            assert files[rel] == expected[rel], f"{cell}/{rel} differs"
    index = read_index(StudyFolder(twelve / "local" / "twelve"))
    assert [e.state for e in index.cells] == ["finished"] * 12
    assert all(e.runs == 1 and e.where and e.score is not None for e in index.cells)


def test_running_a_finished_study_again_skips_every_cell(twelve: Path, capsys: pytest.CaptureFixture[str]):
    before = cells(twelve / "local")
    assert main(["grid", str(twelve / "study.yml"), "--results", str(twelve / "local")]) == 0
    out = capsys.readouterr().out
    assert "12 finished before, 0 to run" in out
    assert cells(twelve / "local") == before
    assert all(e.runs == 1 for e in read_index(StudyFolder(twelve / "local" / "twelve")).cells)


def test_ray_and_the_local_executor_give_identical_cells(twelve: Path, ray_address: str):
    assert main(["grid", str(twelve / "study.yml"), "--results", str(twelve / "ray"), "--ray-address", ray_address,
                 "--quiet", "--no-report"]) == 0
    local, ray = cells(twelve / "local"), cells(twelve / "ray")
    assert sorted(ray) == sorted(local)
    for cell in local:
        assert ray[cell] == local[cell], cell
    index = read_index(StudyFolder(twelve / "ray" / "twelve"))
    assert index.executor == "ray"
    assert all(e.state == "finished" and (e.where or "").startswith("ray ") for e in index.cells)


LONG_STUDY = """
name: long
base: base.yml
agents: [retrieval]
spans: [12000]
seeds: [3]
"""


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def test_killing_a_ray_worker_mid_cell_gives_identical_results(tmp_path: Path, ray_address: str):
    study = write_study(tmp_path, LONG_STUDY)
    assert main(["grid", str(study), "--results", str(tmp_path / "ref"), "--quiet", "--no-report"]) == 0
    reference = cells(tmp_path / "ref", "long")
    (cell,) = reference
    total = reference[cell]["retrieval/events.jsonl"].count(b"\n")
    folder = StudyFolder(tmp_path / "work" / "long").cell(cell)
    killed: list[int] = []

    def kill_mid_cell() -> None:  # once the worker has written a third of the cell's events, SIGKILL it
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if _lines(folder.path / "retrieval" / "events.jsonl") >= total // 3:
                pid = int((folder.path / ".lock").read_text().strip() or 0)
                if pid and pid != os.getpid():
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
            time.sleep(0.005)

    watcher = threading.Thread(target=kill_mid_cell, daemon=True)
    watcher.start()
    code = main(["grid", str(study), "--results", str(tmp_path / "work"), "--ray-address", ray_address, "--quiet",
                 "--no-report"])
    watcher.join(5)
    assert killed, "the worker was never killed"
    assert code == 0
    assert cells(tmp_path / "work", "long") == reference
    entry = read_index(StudyFolder(tmp_path / "work" / "long")).cells[0]
    assert entry.state == "finished" and f"pid {killed[0]}" not in (entry.where or "")


def _kill_driver_mid_cell(study: Path, work: Path, folder: StudyFolder, alone: Path) -> list[str]:
    """Start the study's driver, SIGKILL it once a cell has finished and another is at most half-way (by the event
    lines of the same cell run alone), and return the cells that were unfinished when it died (a cell seen half-way
    could in principle still finish before the signal lands: left out)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ltm_harness", "grid", str(study), "--results", str(work),
                             "--concurrency", "2", "--quiet", "--no-report"], cwd=study.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    mid: list[str] = []
    while time.monotonic() < deadline and proc.poll() is None:  # kill once a cell finished and another is half-way
        try:
            index = json.loads(folder.index.read_text())
        except (OSError, ValueError):
            time.sleep(0.01)
            continue
        done = [c for c in index["cells"] if c["state"] == "finished"]
        mid = [c["cell"]["id"] for c in index["cells"] if c["state"] == "running"
               and 10 <= _lines(folder.path / c["folder"] / c["cell"]["agent"] / "events.jsonl")
               <= _lines(alone / c["cell"]["id"] / c["cell"]["agent"] / "events.jsonl") // 2]
        if done and mid:
            break
        time.sleep(0.002)
    if proc.poll() is not None:  # the study ended before a cell was seen half-way (a fast run): nothing was killed
        _, err = proc.communicate()
        assert proc.returncode == 0, err.decode()
        return []
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()
    entries = {e.cell.id: e for e in read_index(folder).cells}
    return [c for c in mid if not (folder.path / entries[c].folder / entries[c].cell.agent / "results.json").is_file()]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_killing_the_driver_then_running_again_resumes(twelve: Path, alone: Path, tmp_path: Path):
    study = write_study(tmp_path)
    for attempt in range(3):  # the kill races the driver: on a loaded machine the half-way cell may finish first
        work = tmp_path / f"work{attempt}"
        folder = StudyFolder(work / "twelve")
        half_done = _kill_driver_mid_cell(study, work, folder, alone)
        if half_done:
            break
    assert half_done, "no cell was half-way when the driver was killed (3 tries)"
    before = read_index(folder)
    finished_before = {e.cell.id for e in before.cells if e.state == "finished"}
    assert 0 < len(finished_before) < 12
    assert "running" in {e.state for e in before.cells}  # the killed driver could not say more

    assert main(["grid", str(study), "--results", str(work), "--quiet", "--no-report"]) == 0
    after = read_index(folder)
    assert [e.state for e in after.cells] == ["finished"] * 12
    runs = {e.cell.id: e.runs for e in after.cells}
    assert all(runs[c] == 1 for c in finished_before)  # skipped
    assert all(runs[c] == 2 for c in half_done)  # resumed from their event logs
    got = cells(work)
    for cell, files in got.items():
        assert files == outputs(alone / cell), cell
