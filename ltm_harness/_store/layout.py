"""The run folder: every name a run writes, and what state a folder is in. No other module spells a file name.

    results/<run-name>/                    RunFolder (`run`, `aiq`, `import-goodai`)
        .lock                              held while a process writes here (its pid inside)
        run_config.json                    the config the run was made with (secrets masked)
        config.yml                         an imported run's config (import-goodai)
        definitions/manifest.json          the tests, and <dataset>/<id>.def.json for each (.def.json.zst: a big one)
        summary.json                       the run's summary
        judge-batch.json                   a run judged in batches (--judge-batch) while verdicts wait, its batch
        spend.jsonl                        the ledger of spend: one line per paid LLM call (role, model, USD billed)
        report.html, report.*              the report and its tables
        report.parts/                      what the report loads when opened (benchmark histories, a big run's tests)
        aiq.json                           an AIQ run's scores
        <agent>/                           AgentFolder
            events.jsonl                   its one conversation, or events/<session>.jsonl, one per session
            events.wall                    wall-clock and cache facts of its LLM calls (a side file of each log)
            state/<session>/               the agent's own memory files, per conversation (framework adapters)
            results.json, summary.json     written when it finished
    results/index.html                     every run of the folder, listed (rewritten after each run, report, compare)
    results/suites/<suite-id>/             a suite run: a RunFolder whose agents have one session per case
        <agent>.json                       the agent's results in the aiVLE schema
    results/<study-name>/                  StudyFolder: a grid of runs (`grid`)
        .lock                              held by the process driving the study
        study.json                         the index: every cell, its state and where it ran
        cells/<cell-id>/                   each cell an ordinary RunFolder (one agent, span, seed, ...)
        report.html, report.*              the study's report and its tables
    <out>/<syllabus>-<worker>/             ScenarioFolder: a syllabus run, in the l2logger layout
        logger_info.json, scenario_info.json, metrics.json
        <worker>/data-log.tsv, <worker>/events.jsonl

A folder is *fresh* (no agent outputs), *interrupted* (an agent has event logs but did not finish), or *finished*.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ltm_harness._errors import RunFolderError
from ltm_harness._store.files import writing
from ltm_harness._guard.names import check_name, inside
from ltm_harness._store.lock import RunLock

LOCK = ".lock"
RUN_CONFIG = "run_config.json"
IMPORTED_CONFIG = "config.yml"
DEFINITIONS = "definitions"
MANIFEST = "manifest.json"
DEFINITION_SUFFIX = ".def.json"
COMPRESSED_SUFFIX = ".zst"  # <id>.def.json.zst: a definition too big to keep as plain JSON (a benchmark's haystack)
SUMMARY = "summary.json"
JUDGE_BATCH = "judge-batch.json"
SPEND = "spend.jsonl"  # the run's ledger of spend (ltm_harness._llm.ledger)
RESULTS = "results.json"
EVENTS = "events.jsonl"
EVENTS_DIR = "events"
IMPORTED_DIR = "imported"  # <run>/imported/<agent>.json: how an imported answers file met the questions (import-answers)
STATE_DIR = "state"  # <agent>/state/<session>/: an adapter's own memory files (Agent.state_dir)
WALL_SUFFIX = ".wall"  # beside each event log: its LLM calls' latency, retries and cache hits (varying run to run)
REPORT = "report.html"
PARTS_SUFFIX = ".parts"  # <stem>.parts/ beside a report: what the page loads when a reader opens it
AIQ_REPORT = "aiq.json"
RESCORING = ".rescoring"  # suffix of an agent folder being re-scored (swapped in when complete)
LLM_CACHE = ".llm-cache"  # beside the run folders
SUITES = "suites"  # results/suites/<suite-id>/
RESULTS_INDEX = "index.html"  # beside the run folders
COLOURS = ".colours.json"  # beside the run folders: the colour each agent name has on every page (report/colours.py)
COMPARE_PREFIX = "compare_"  # compare_<runs>.html beside the first run's folder
MAIN_SESSION = "main"
# The l2logger layout of a syllabus run
LOGGER_INFO = "logger_info.json"
SCENARIO_INFO = "scenario_info.json"
DATA_LOG = "data-log.tsv"
METRICS = "metrics.json"
L2METRICS = "l2metrics.json"  # `syllabus metrics --compat l2metrics`: the metrics in l2metrics' own shape
# A study (grid of runs)
STUDY_INDEX = "study.json"
CELLS = "cells"


class _File:
    """A file (or folder) of a folder by its name: `summary = _File(SUMMARY)` reads as `folder.summary`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, folder: Any, owner: Any = None) -> Path:
        return Path(folder.path) / self.name


SLUG_MAX = 100


def slug(text: str) -> str:
    """A safe folder name: no separators, no leading dots (so never `.` or `..`), at most SLUG_MAX characters (a
    longer one keeps its start and gets a short hash of the whole, so two long names stay apart)."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", text).lstrip("._").rstrip("_") or "run"
    if len(out) > SLUG_MAX:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        out = f"{out[:SLUG_MAX - 13].rstrip('._-')}-{digest}"
    return out


# What a folder named by a user (an agent in a run folder, a run or a study in a results folder) must never be: an
# entry the layout gives to something else. Compared case-folded (a case-insensitive disk makes `Definitions` the
# definitions).
_RUN_ENTRIES = {DEFINITIONS, IMPORTED_DIR, SUMMARY, RUN_CONFIG, IMPORTED_CONFIG, REPORT, AIQ_REPORT, LOCK, SPEND}
_ROOT_ENTRIES = {RESULTS_INDEX, SUITES, LLM_CACHE, COLOURS}


def taken_entry(name: str, in_run: bool = True) -> str | None:
    """Why a folder called `name` would coincide with an entry of the layout in a run folder (`in_run`: an agent's
    folder) or in a results folder (a run's or a study's): the entry's description, else None. Agents: the run's own
    files and folders, its report's files (`report.*`), a re-scoring in progress (`*.rescoring`) and a suite's
    `<agent>.json`; runs: the index, the suites, the cache and the colours beside them, and `compare_*.html`."""
    folded = name.casefold()
    if in_run:
        if folded in _RUN_ENTRIES:
            return f"the run folder's own {name!r}"
        for pattern, fits in (("report.*", folded.startswith("report.")), (f"*{RESCORING}", folded.endswith(RESCORING)),
                              ("*.json", folded.endswith(".json"))):
            if fits:
                return f"a name the run folder keeps for its own files ({pattern})"
        return None
    if folded in _ROOT_ENTRIES:
        return f"the results folder's own {name!r}"
    if folded.startswith(COMPARE_PREFIX) and folded.endswith((".html", PARTS_SUFFIX)):
        return f"a name the results folder keeps for comparison pages ({COMPARE_PREFIX}*.html, {COMPARE_PREFIX}*{PARTS_SUFFIX})"
    return None


def suites_root(results_root: Path) -> Path:
    """Where suite runs go: one folder per suite, named by its id."""
    return results_root / SUITES


def wall_log(event_log: Path) -> Path:
    """The side file of an event log that holds what varies from run to run (`events.jsonl` -> `events.wall`)."""
    return event_log.with_suffix(WALL_SUFFIX)


def results_index(results_root: Path) -> Path:
    """The page listing every run under `results_root`."""
    return results_root / RESULTS_INDEX


def colours_file(results_root: Path) -> Path:
    """The results folder's colours: each agent name's colour, the same on every page written there."""
    return results_root / COLOURS


def results_root_of(run_folder: Path) -> Path:
    """The results folder a run folder is in: its parent, or, for a study's cell (`<study>/cells/<cell>/`), the
    folder holding the study."""
    parent = run_folder.parent
    if parent.name == CELLS and (parent.parent / STUDY_INDEX).is_file():
        return parent.parent.parent
    return parent


def definition_path(definitions: Path, dataset: str, example_id: str) -> Path:
    """Where a test's definition lives. The dataset name and example id must be safe names (`check_name`: no
    separators, no `..`), and the path must stay inside `definitions` (a symlink out of it is refused too):
    otherwise UnsafeName / OutsideFolder (ValueErrors)."""
    check_name(dataset, "dataset name")
    check_name(example_id, "example id")
    path = definitions / dataset / f"{example_id}{DEFINITION_SUFFIX}"
    if definitions.exists():
        inside(definitions, path)
    return path


def report_parts(html: Path) -> Path:
    """The folder beside a report page holding the parts it loads on demand (`report.parts/`)."""
    return html.with_suffix(PARTS_SUFFIX)


def compressed(path: Path) -> Path:
    """The zstd-compressed form of a file's name (`<id>.def.json` -> `<id>.def.json.zst`)."""
    return path.with_name(path.name + COMPRESSED_SUFFIX)


@dataclass(frozen=True)
class _Folder:
    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    def lock(self) -> RunLock:
        return RunLock(self.path / LOCK, self.path)


@dataclass(frozen=True)
class AgentFolder(_Folder):
    """One agent's outputs: its event logs (one per session), and its results and summary once it finished."""

    results = _File(RESULTS)
    summary = _File(SUMMARY)
    events_dir = _File(EVENTS_DIR)

    def session_log(self, session_id: str) -> Path:
        """The event log of a session: `events.jsonl` for the one conversation, else `events/<session>.jsonl`."""
        if session_id == MAIN_SESSION:
            return self.path / EVENTS
        return self.path / EVENTS_DIR / f"{slug(session_id)}.jsonl"

    def state_dir(self, session_id: str) -> Path:
        """Where an agent keeps its own memory files for a session (`Agent.state_dir`); made before the session's
        first turn."""
        return self.path / STATE_DIR / slug(session_id)

    def session_logs(self) -> dict[str, Path]:
        """Session id -> its event log, for the logs that exist: the one conversation's (`main`), and those of the
        sessions of their own (isolated tests, suite cases, a benchmark's conversations)."""
        logs = {MAIN_SESSION: self.path / EVENTS} if (self.path / EVENTS).is_file() else {}
        logs.update({p.stem: p for p in sorted((self.path / EVENTS_DIR).glob("*.jsonl"))})
        return logs

    def has_logs(self) -> bool:
        return (self.path / EVENTS).is_file() or (self.path / EVENTS_DIR).is_dir()

    def has_outputs(self) -> bool:
        return any((self.path / f).exists() for f in (EVENTS, EVENTS_DIR, RESULTS, SUMMARY))

    def rescoring(self) -> "AgentFolder":
        return AgentFolder(self.path.with_name(self.path.name + RESCORING))

    def clear(self) -> None:
        if self.path.exists():
            with writing(self.path):
                shutil.rmtree(self.path)

    def forget_results(self) -> None:
        """Drop a damaged or early-stopped agent's results: they are made again when it finishes. The summary goes
        first, so a crash in between leaves an agent that counts as interrupted."""
        for path in (self.summary, self.results):
            with writing(path):
                path.unlink(missing_ok=True)

    def swap_in(self, target: "AgentFolder") -> None:
        """Replace `target` by this folder (a complete re-scoring takes the place of the old outputs); the agent's own
        memory files (`state/`), which a re-scoring does not touch, move along."""
        state = target.path / STATE_DIR
        if state.is_dir() and not (self.path / STATE_DIR).exists():
            with writing(self.path):
                state.rename(self.path / STATE_DIR)
        target.clear()
        with writing(target.path):
            self.path.rename(target.path)


@dataclass(frozen=True)
class RunFolder(_Folder):
    """A run's folder (see the module's docstring for its layout)."""

    @classmethod
    def named(cls, results_root: Path, run_name: str) -> "RunFolder":
        return cls(results_root / slug(run_name))

    definitions = _File(DEFINITIONS)
    run_config = _File(RUN_CONFIG)
    imported_config = _File(IMPORTED_CONFIG)
    summary = _File(SUMMARY)
    judge_batch = _File(JUDGE_BATCH)
    spend = _File(SPEND)
    report = _File(REPORT)
    aiq_report = _File(AIQ_REPORT)

    @property
    def llm_cache(self) -> Path:
        return self.path.parent / LLM_CACHE

    def suite_results(self, agent: str) -> Path:
        """An agent's results of a suite, in the aiVLE schema."""
        return self.path / f"{slug(agent)}.json"

    def agent(self, name: str) -> AgentFolder:
        """The folder of agent `name`; never one of the run folder's own entries (RunFolderError: a name a run
        refuses before it starts, so found only in a folder written otherwise)."""
        folder = slug(name)
        if (taken := taken_entry(folder)) is not None:
            raise RunFolderError(f"{self.path}: agent {name!r} would have its outputs in {taken}; an agent's name "
                                 "must not be one of the run folder's own entries")
        return AgentFolder(self.path / folder)

    def imported(self, agent: str) -> Path:
        """Where `import-answers` keeps how an agent's imported file met the questions, and the publisher's scores."""
        return self.path / IMPORTED_DIR / f"{slug(agent)}.json"

    def agent_folders(self) -> list[AgentFolder]:
        """The folders holding an agent's outputs (not the definitions, nor a re-scoring in progress)."""
        if not self.path.is_dir():
            return []
        return [AgentFolder(child) for child in sorted(self.path.iterdir())
                if child.is_dir() and child.name != DEFINITIONS and not child.name.endswith(RESCORING)
                and AgentFolder(child).has_outputs()]

    def is_run(self) -> bool:
        """A folder a run wrote (finished or not)."""
        return self.summary.is_file() or self.definitions.is_dir()

    def clear(self) -> None:
        """Remove agent outputs, the summary, the saved config and the report of earlier runs in this folder, never
        anything else: the definitions stay (reused if they match)."""
        with writing(self.path):
            self._clear()

    def _clear(self) -> None:
        for path in (self.summary, self.run_config, self.aiq_report, self.judge_batch, self.spend):
            path.unlink(missing_ok=True)
        for report in self.path.glob("report.*") if self.path.is_dir() else []:  # the report of those results
            if report.is_dir() and not report.is_symlink():  # report.parts/
                shutil.rmtree(report)
            else:
                report.unlink()
        for agent in self.agent_folders():
            agent.clear()
        for child in self.path.glob(f"*{RESCORING}") if self.path.is_dir() else []:
            shutil.rmtree(child)
        for suite_json in self.path.glob("*.json") if self.path.is_dir() else []:
            if (self.path / suite_json.stem).is_dir():  # <agent>.json beside <agent>/ in a suite folder
                suite_json.unlink()


@dataclass(frozen=True)
class ScenarioFolder(_Folder):
    """A syllabus run for one agent, in the l2logger layout."""

    worker: str

    @classmethod
    def of(cls, out: Path, syllabus: str, worker: str) -> "ScenarioFolder":
        return cls(out / f"{syllabus}-{worker}", worker)

    logger_info = _File(LOGGER_INFO)
    scenario_info = _File(SCENARIO_INFO)
    metrics = _File(METRICS)

    @property
    def data_log(self) -> Path:
        return self.path / self.worker / DATA_LOG

    @property
    def agent(self) -> AgentFolder:
        """The worker's folder, holding its conversation's event log beside its data log."""
        return AgentFolder(self.path / self.worker)

    def finished(self) -> bool:
        return self.data_log.is_file()

    def clear(self) -> None:
        with writing(self.path):
            for path in (self.logger_info, self.scenario_info, self.metrics):
                path.unlink(missing_ok=True)
        self.agent.clear()


@dataclass(frozen=True)
class StudyFolder(_Folder):
    """A study's folder: its index and one run folder per cell under `cells/`."""

    @classmethod
    def named(cls, results_root: Path, study: str) -> "StudyFolder":
        return cls(results_root / slug(study))

    index = _File(STUDY_INDEX)
    cells = _File(CELLS)
    report = _File(REPORT)

    def cell(self, cell_id: str) -> RunFolder:
        return RunFolder.named(self.cells, cell_id)

    def is_study(self) -> bool:
        return self.index.is_file()
