"""An agent's and a run's results in the run folder: written when they finish, read back (by resume, rescore,
reports) through one reader, and what they say about the folder's state.

An agent folder whose summary and results can be read, and whose summary has no `error`, is finished. One whose
files are damaged, or that stopped early (watchdog, agent down), counts as interrupted: `run --resume` continues it
from its event logs. Any problem reading them is one `RunFolderError` naming the file and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from ltm_harness._errors import RunFolderError, option
from ltm_harness._results.models import AgentSummary, RunSummary, TestResult
from ltm_harness._store.files import first_error, read_run_file, read_run_json, write_model, write_text
from ltm_harness._store.layout import AgentFolder, RunFolder

_RESULTS = TypeAdapter(list[TestResult])
_RESULT = TypeAdapter(TestResult)


def write_agent_outputs(folder: AgentFolder, results: list[TestResult], summary: AgentSummary) -> None:
    write_text(folder.results, "[\n" + ",\n".join(r.model_dump_json() for r in results) + "\n]\n")
    write_model(folder.summary, summary)


def read_summary(folder: AgentFolder) -> AgentSummary:
    return read_run_file(folder.summary, AgentSummary)


def read_results(folder: AgentFolder) -> list[TestResult]:
    data = read_run_json(folder.results)
    if not isinstance(data, list):
        raise RunFolderError(f"{folder.results}: expected a list of test results; run the run again to rewrite it")
    results = []
    for i, item in enumerate(data):
        try:
            results.append(_RESULT.validate_python(item))
        except ValidationError as exc:
            raise RunFolderError(f"{folder.results}: test {i}: {first_error(exc)}; run the run again to rewrite "
                                 "it") from None
    return results


@dataclass
class AgentOutputs:
    """A finished agent's summary and results, as read back from its folder."""

    summary: AgentSummary
    results: list[TestResult]


def finished_outputs(folder: AgentFolder) -> AgentOutputs | None:
    """The outputs of an agent that finished (None: it did not, its files are damaged, or it stopped early)."""
    if not (folder.summary.is_file() and folder.results.is_file()):
        return None
    try:
        summary = read_summary(folder)
        results = _RESULTS.validate_python(read_run_json(folder.results))
    except (RunFolderError, ValueError):
        return None  # damaged: the agent is resumed from its events instead
    if summary.error:
        return None  # stopped early (watchdog, agent down): resumed from where it stopped
    return AgentOutputs(summary, results)


@dataclass
class FolderState:
    """The agent folders of a run folder that finished, and those that were interrupted (or stopped early)."""

    finished: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.finished or self.interrupted)


def folder_state(run: RunFolder, finished: Callable[[AgentFolder], bool] | None = None) -> FolderState:
    """Which agents of the folder finished and which were interrupted. `finished` tells a finished agent (default:
    its summary and results can be read, and it did not stop early)."""
    state = FolderState()
    for agent in run.agent_folders():
        if finished(agent) if finished is not None else finished_outputs(agent) is not None:
            state.finished.append(agent.name)
        elif agent.has_logs():
            state.interrupted.append(agent.name)
    return state


def free_run_name(results_root: Path, name: str) -> str:
    """`name`, or `name-2`, `name-3`, ... : the first whose folder holds no agent outputs."""
    candidate, n = name, 1
    while RunFolder.named(results_root, candidate).agent_folders():
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def read_run_summary(run: RunFolder) -> RunSummary:
    return read_run_file(run.summary, RunSummary)


def write_run_summary(run: RunFolder, summary: RunSummary) -> None:
    write_model(run.summary, summary)


def check_finished_run(folder: RunFolder) -> None:
    """`folder` holds a run that finished (its summary.json); else one line saying what it is and what to do."""
    if folder.summary.is_file():
        return
    if folder.definitions.is_dir():
        raise RunFolderError(f"{folder.path} has no summary.json: the run did not finish; finish it by resuming it "
                             f"({option('resume')}), or run it again ({option('overwrite')}: its definitions are "
                             "reused), to write summary.json")
    runs = [RunFolder(p).name for p in sorted(folder.path.iterdir()) if p.is_dir() and RunFolder(p).is_run()] \
        if folder.path.is_dir() else []
    if runs:
        raise RunFolderError(f"{folder.path} holds runs ({', '.join(runs[:5])}{', ...' if len(runs) > 5 else ''}), "
                             f"not one run; give one of them, such as {folder.path / runs[0]}")
    raise RunFolderError(f"{folder.path} is not a run folder: it has no summary.json (a run writes "
                         "results/<run-name>/summary.json); give a run folder or run name")


def find_run(arg: str | Path, results_root: Path = Path("results")) -> RunFolder:
    """The finished run RUN names: a path to its folder, or a run name under `results_root`."""
    direct = Path(arg)
    candidates = [direct] + ([results_root / direct] if not direct.is_absolute() else [])
    for path in candidates:
        if path.is_dir():
            check_finished_run(RunFolder(path))
            return RunFolder(path)
    tried = " and ".join(str(p) for p in dict.fromkeys(candidates))
    raise RunFolderError(f"run {str(arg)!r} not found: there is no folder {tried}; give a run folder "
                         f"(such as {results_root}/<run-name>) or the name of a run under {results_root}/")
