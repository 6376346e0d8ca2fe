"""Which folder a run writes to, held by this process: the lock, and the rules for a folder that exists."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ltm_harness._errors import ConfigError, RunFolderError, option
from ltm_harness._results.outputs import finished_outputs, folder_state, free_run_name
from ltm_harness._store.layout import AgentFolder, RunFolder, ScenarioFolder, slug, taken_entry
from ltm_harness._store.lock import RunLock
from ltm_harness._tokens import plural


@dataclass
class Claim:
    """A run folder held by this process: which, under what lock, and what was said about it."""

    folder: RunFolder
    run_name: str
    lock: RunLock
    notes: list[str]  # what was done with an existing folder, or found in it
    resuming: str | None = None  # what a resume found: agents finished (kept) and interrupted
    created: bool = False  # the folder did not exist before this claim

    def give_up(self) -> None:
        """Let go of the folder after a run that failed before any agent was called: a folder this claim created
        holds nothing of value then (definitions are made again the same way), so it is removed."""
        if self.created:
            shutil.rmtree(self.folder.path, ignore_errors=True)
        self.lock.release()


def claim_folder(results_root: Path, run_name: str, *, resume: bool = False, overwrite: bool = False,
                 finished: Callable[[AgentFolder], bool] | None = None, retry_errored: bool = False) -> Claim:
    """Lock the run's folder and apply the rules for one that exists: a finished run is kept and the new run goes
    to `<name>-2` (and so on); an interrupted one needs `resume` or `overwrite`. `finished` tells an agent that
    finished (default: as a run's; a suite's agents are finished when their results are written). `retry_errored`
    resumes, and also takes up the errored tests of agents that finished."""
    resume = resume or retry_errored
    if (taken := taken_entry(slug(run_name), in_run=False)) is not None:
        raise ConfigError(f"run name {run_name!r} would write the run to {taken}; give another (--run-name, or "
                          "config.run_name)")
    folder = RunFolder.named(results_root, run_name)
    created = not folder.path.exists()
    lock = folder.lock().acquire()
    notes = [f"a lock left by process {lock.took_over} (no longer running) was taken over"] if lock.took_over else []
    resuming = None
    try:
        if overwrite:
            folder.clear()
        elif not resume:
            state = folder_state(folder, finished)
            if state.interrupted:
                ended = f"; {_ended(lock)}" if lock.took_over else ""
                raise RunFolderError(f"{folder.path} holds an interrupted run ({', '.join(state.interrupted)} did not "
                                     f"finish{ended}); pass {option('resume')} to continue it, or {option('overwrite')} "
                                     "to discard it and start again")
            if state.finished:
                lock.release()
                name = free_run_name(results_root, run_name)
                notes.append(f"{folder.path} holds a finished run, kept as it is; this run writes to "
                             f"{RunFolder.named(results_root, name).path} ({option('overwrite')} replaces the finished run "
                             "instead)")
                folder, run_name = RunFolder.named(results_root, name), name
                created = not folder.path.exists()
                lock = folder.lock().acquire()
        elif resume:
            state = folder_state(folder, finished)
            if not state:
                notes.append(f"{folder.path} holds nothing to resume; the run starts from the beginning")
            else:
                resuming = (f"resuming: {plural(len(state.finished), 'agent')} finished (kept), {len(state.interrupted)} "
                            "interrupted (replayed from their event logs, then continued)")
                if retry_errored:
                    resuming = _retrying(folder, state.finished, state.interrupted)
    except BaseException:
        lock.release()
        raise
    return Claim(folder, run_name, lock, notes, resuming, created)


def claim_scenario(out: Path, syllabus: str, worker: str, *, resume: bool = False,
                   overwrite: bool = False) -> tuple[ScenarioFolder, RunLock, list[str]]:
    """Lock a syllabus run's folder, with the rules of `claim_folder`: a finished one is kept (the new run goes to
    `<syllabus>-<worker>-2`, ...), an interrupted one needs `resume` or `overwrite`."""
    folder = ScenarioFolder.of(out, syllabus, worker)
    lock = folder.lock().acquire()
    notes = [f"a lock left by process {lock.took_over} (no longer running) was taken over"] if lock.took_over else []
    try:
        if overwrite:
            folder.clear()
        elif not resume and folder.agent.has_logs() and not folder.finished():
            ended = f" ({_ended(lock)})" if lock.took_over else ""
            raise RunFolderError(f"{folder.path} holds an interrupted run{ended}; pass {option('resume')} to continue "
                                 f"it, or {option('overwrite')} to discard it and start again")
        elif not resume and folder.finished():
            lock.release()
            n = 2
            while ScenarioFolder.of(out, f"{syllabus}", f"{worker}-{n}").path.exists():
                n += 1
            kept = folder.path
            folder = ScenarioFolder(ScenarioFolder.of(out, syllabus, f"{worker}-{n}").path, worker)
            lock = folder.lock().acquire()
            notes.append(f"{kept} holds a finished run, kept as it is; this run writes to {folder.path} "
                         f"({option('overwrite')} replaces the finished run instead)")
    except BaseException:
        lock.release()
        raise
    return folder, lock, notes


def _retrying(folder: RunFolder, finished: list[str], interrupted: list[str]) -> str:
    """What `--retry-errored` found: the errored tests of the agents that finished, and the agents interrupted."""
    errored: dict[str, int] = {}
    for name in finished:
        outputs = finished_outputs(folder.agent(name))
        count = sum(r.status == "errored" for r in outputs.results) if outputs else 0
        if count:
            errored[name] = count
    kept = len(finished) - len(errored)
    said = ", ".join(f"{n} of {name}" for name, n in errored.items())
    return (f"retrying errored tests: {said or 'none among the agents that finished'}"
            f"{' (each session replayed up to its first failure, then live)' if errored else ''}; "
            f"{plural(kept, 'agent')} finished without errored tests (kept), {len(interrupted)} interrupted (replayed from their event logs, "
            "then continued)")


def _ended(lock: RunLock) -> str:
    """Said of an interrupted run whose process was killed while it held the folder."""
    return f"its process {lock.took_over} ended while it ran"
