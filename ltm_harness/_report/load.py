"""Reading a run folder for a report: summary.json, each agent's results.json and event logs.

Files are read tolerantly: fields this version does not know (added by later versions, such as
`cost_split`) are ignored by the pydantic models and picked up from the raw JSON where the report
shows them. A folder that is not a run, or a file that cannot be read, is a RunFolderError naming the path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ltm_harness._errors import LTMError, RunFolderError
from ltm_harness._store.formats import check_summary_format
from ltm_harness._report.conversation import CallStats, SessionLog, read_session_log
from ltm_harness._results.models import AgentSummary, RunSummary, TestResult
from ltm_harness._runner.run import slug

_S = TypeVar("_S", AgentSummary, RunSummary)


@dataclass
class AgentData:
    """One agent of a run: its summary, its tests' results and its event logs (one per session)."""

    spec: str
    folder: Path
    summary: AgentSummary
    raw_summary: dict[str, Any]
    results: list[TestResult]
    sessions: list[SessionLog]
    earlier: bool = False  # found in the folder but not in summary.json: left by an earlier invocation
    warnings: list[str] = field(default_factory=list)

    @property
    def cost_split(self) -> dict[str, float]:
        """USD per role (agent, judge, generation, test), when the run recorded it."""
        raw = self.raw_summary.get("cost_split")
        if not isinstance(raw, dict):
            return {}
        return {str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float))}


    def calls(self) -> dict[str, CallStats]:
        """LLM calls per role: from the `llm_call` events (with latencies), else from the summary's `usage`."""
        total: dict[str, CallStats] = {}
        for session in self.sessions:
            for role, stats in session.calls.items():
                total.setdefault(role, CallStats()).merge(stats)
        return total or _usage_calls(self.raw_summary.get("usage"))


def _usage_calls(usage: Any) -> dict[str, CallStats]:
    """CallStats per role from a summary's `usage` (sums per role: calls, prompt_tokens, ... retries, cached)."""
    if not isinstance(usage, dict) or not isinstance(usage.get("calls"), dict):
        return {}
    out: dict[str, CallStats] = {}
    for role, calls in usage["calls"].items():
        if not isinstance(calls, int) or calls <= 0:
            continue

        def get(name: str) -> Any:
            values = usage.get(name)
            return values.get(role) if isinstance(values, dict) else None

        stats = CallStats(calls=calls)
        stats.add_totals(prompt_tokens=get("prompt_tokens"), completion_tokens=get("completion_tokens"),
                         cost_usd=get("cost_usd"), retries=get("retries"), cached=get("cached"))
        out[str(role)] = stats
    return out


@dataclass
class RunData:
    folder: Path
    summary: RunSummary
    agents: list[AgentData]
    errors: dict[str, str]
    fingerprint: str | None = None  # of the run's test definitions (definitions/manifest.json)
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.summary.run_name


def resolve_run(arg: str, results_root: Path = Path("results")) -> Path:
    """The folder of RUN: a path to a run folder, or a run name under `results_root`."""
    direct = Path(arg)
    candidates = [direct] + ([results_root / arg] if not direct.is_absolute() else [])
    for path in candidates:
        if path.is_dir():
            check_run_folder(path)
            return path
    tried = " and ".join(str(p) for p in dict.fromkeys(candidates))
    raise RunFolderError(f"run {arg!r} not found: there is no folder {tried}; give a run folder "
                    f"(such as {results_root}/<run-name>) or the name of a run under {results_root}/")


def _run_like(path: Path) -> bool:
    return (path / "summary.json").is_file() or (path / "definitions").is_dir()


def check_run_folder(path: Path) -> None:
    if (path / "summary.json").is_file():
        return
    if (path / "definitions").is_dir():
        raise RunFolderError(f"{path} has no summary.json: the run did not finish; finish it with `run --resume` "
                        "(or run it again with --overwrite: its definitions are reused) to write summary.json")
    runs = sorted(p.name for p in path.iterdir() if p.is_dir() and _run_like(p)) if path.is_dir() else []
    if runs:
        raise RunFolderError(f"{path} holds runs ({', '.join(runs[:5])}{', ...' if len(runs) > 5 else ''}), "
                        f"not one run; give one of them, such as {path / runs[0]}")
    raise RunFolderError(f"{path} is not a run folder: it has no summary.json "
                    "(a run writes results/<run-name>/summary.json); give a run folder or run name")


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RunFolderError(f"cannot read {path}: {exc.strerror or exc}; check the file's permissions") from None
    except UnicodeDecodeError:
        raise RunFolderError(f"{path} is not a UTF-8 text file, so not a result of this harness; run the run again "
                        "to rewrite it") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFolderError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); "
                        "run the run again to rewrite it") from None


def _invalid(path: Path, exc: ValidationError) -> RunFolderError:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return RunFolderError(f"{path}: {where}: {err['msg']}; the file is not a result of this harness version, "
                     "run the run again to rewrite it")


def _read_summary(path: Path, model: type[_S]) -> tuple[_S, Any]:
    """A summary.json (the run's or an agent's) in a format this version reads, and its raw JSON."""
    data = _read_json(path)
    check_summary_format(path, data)
    try:
        return model.model_validate(data), data
    except ValidationError as exc:
        raise _invalid(path, exc) from None


def _load_agent(folder: Path, summary: AgentSummary | None, raw: dict[str, Any] | None,
                spec: str, earlier: bool) -> AgentData | None:
    warnings: list[str] = []
    if summary is None:
        path = folder / "summary.json"
        if not path.is_file():
            return None
        summary, data = _read_summary(path, AgentSummary)
        raw = data if isinstance(data, dict) else {}
    results: list[TestResult] = []
    results_path = folder / "results.json"
    if results_path.is_file():
        data = _read_json(results_path)
        if not isinstance(data, list):
            raise RunFolderError(f"{results_path}: expected a list of test results; run the run again to rewrite it")
        for i, item in enumerate(data):
            try:
                results.append(TestResult.model_validate(item))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise RunFolderError(f"{results_path}: test {i}: {where}: {err['msg']}; run the run again to rewrite it") from None
    else:
        warnings.append(f"{results_path} is missing: no per-test results for {spec}")
    logs = sorted((folder / "events").glob("*.jsonl")) if (folder / "events").is_dir() else []
    if (folder / "events.jsonl").is_file():
        logs.insert(0, folder / "events.jsonl")
    sessions = []
    for log in logs:
        session, problems = read_session_log(log)
        sessions.append(session)
        warnings.extend(problems)
    if not logs and results:
        warnings.append(f"{folder} has no event log: conversations are not shown for {spec}")
    return AgentData(spec, folder, summary, raw or {}, results, sessions, earlier, warnings)


def load_run(folder: Path) -> RunData:
    """Everything a report shows about the run in `folder` (a folder holding summary.json)."""
    check_run_folder(folder)
    path = folder / "summary.json"
    summary, data = _read_summary(path, RunSummary)
    raw_agents = [a for a in data.get("agents", []) if isinstance(a, dict)] if isinstance(data, dict) else []
    agents: list[AgentData] = []
    known: set[str] = set()
    for i, agent_summary in enumerate(summary.agents):
        raw = raw_agents[i] if i < len(raw_agents) else {}
        folder_name = slug(agent_summary.agent)
        known.add(folder_name)
        loaded = _load_agent(folder / folder_name, agent_summary, raw, agent_summary.agent, False)
        if loaded is not None:
            agents.append(loaded)
    known.update(slug(spec) for spec in summary.errors)
    # Agents run by an earlier invocation on the same definitions keep their folders: show them too.
    skipped: list[str] = []
    for child in sorted(folder.iterdir()):
        if child.is_dir() and child.name != "definitions" and child.name not in known:
            try:
                loaded = _load_agent(child, None, None, child.name, True)
            except LTMError as exc:  # not an agent's folder after all, or a broken one: the run is still shown
                skipped.append(f"{child} is left out: {exc}")
                continue
            if loaded is not None:
                loaded.spec = loaded.summary.agent
                agents.append(loaded)
    warnings = skipped + [w for a in agents for w in a.warnings]
    return RunData(folder, summary, agents, dict(summary.errors), _fingerprint(folder), warnings)


def _fingerprint(folder: Path) -> str | None:
    try:
        manifest = json.loads((folder / "definitions" / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    value = manifest.get("fingerprint") if isinstance(manifest, dict) else None
    return value if isinstance(value, str) else None
