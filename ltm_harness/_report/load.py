"""Reading a run folder for a report: summary.json, each agent's results.json and event logs.

Files are read tolerantly: fields this version does not know (added by later versions, such as
`cost_split`) are ignored by the pydantic models and picked up from the raw JSON where the report
shows them. A folder that is not a run, or a file that cannot be read, is a RunFolderError naming the path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ltm_harness._authoring.definitions import definitions_fingerprint
from ltm_harness._errors import LTMError
from ltm_harness._report.conversation import CallStats, SessionLog, read_session_log
from ltm_harness._results.check import as_results_say
from ltm_harness._results.models import AgentSummary, RunSummary, TestResult
from ltm_harness._results.outputs import check_finished_run, find_run, read_results
from ltm_harness._store.files import read_run_json, validate_run_data
from ltm_harness._store.formats import check_summary_format
from ltm_harness._store.layout import AgentFolder, RunFolder

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

    @property
    def failed_tries(self) -> int:
        """Tries of turns that got no reply, over every session (from the logs' side files)."""
        return sum(session.failed_tries for session in self.sessions)

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
    return find_run(arg, results_root).path


def _read_summary(path: Path, model: type[_S]) -> tuple[_S, Any]:
    """A summary.json (the run's or an agent's) in a format this version reads, and its raw JSON (for fields this
    version's model does not hold)."""
    data = read_run_json(path)
    check_summary_format(path, data)
    return validate_run_data(path, data, model), data


def _load_agent(folder: AgentFolder, summary: AgentSummary | None, raw: dict[str, Any] | None,
                spec: str, earlier: bool) -> AgentData | None:
    warnings: list[str] = []
    if summary is None:
        if not folder.summary.is_file():
            return None
        summary, data = _read_summary(folder.summary, AgentSummary)
        raw = data if isinstance(data, dict) else {}
    results: list[TestResult] = []
    if folder.results.is_file():
        results = read_results(folder)
        summary, disagreed = as_results_say(summary, results)  # the numbers shown are the results' own
        if disagreed:
            warnings.append(f"{folder.summary if earlier else folder.path.parent / 'summary.json'}: {disagreed}")
    else:
        warnings.append(f"{folder.results} is missing: no per-test results for {spec}")
    logs = list(folder.session_logs().values())
    sessions = []
    for log in logs:
        session, problems = read_session_log(log)
        sessions.append(session)
        warnings.extend(problems)
    if not logs and results:
        warnings.append(f"{folder.path} has no event log: conversations are not shown for {spec}")
    in_sequence = summary.questions.warning(spec) if summary.questions is not None else None
    if in_sequence:
        warnings.append(in_sequence)
    return AgentData(spec, folder.path, summary, raw or {}, results, sessions, earlier, warnings)


def load_run(path: Path) -> RunData:
    """Everything a report shows about the run in `path` (a folder holding summary.json)."""
    folder = RunFolder(path)
    check_finished_run(folder)
    summary, data = _read_summary(folder.summary, RunSummary)
    raw_agents = [a for a in data.get("agents", []) if isinstance(a, dict)] if isinstance(data, dict) else []
    agents: list[AgentData] = []
    known: set[str] = set()
    for i, agent_summary in enumerate(summary.agents):
        raw = raw_agents[i] if i < len(raw_agents) else {}
        agent = folder.agent(agent_summary.agent)
        known.add(agent.name)
        loaded = _load_agent(agent, agent_summary, raw, agent_summary.agent, False)
        if loaded is not None:
            agents.append(loaded)
    known.update(folder.agent(spec).name for spec in summary.errors)
    # Agents run by an earlier invocation on the same definitions keep their folders: show them too.
    skipped: list[str] = []
    for agent in folder.agent_folders():
        if agent.name not in known:
            try:
                loaded = _load_agent(agent, None, None, agent.name, True)
            except LTMError as exc:  # not an agent's folder after all, or a broken one: the run is still shown
                skipped.append(f"{agent.path} is left out: {exc}")
                continue
            if loaded is not None:
                loaded.spec = loaded.summary.agent
                agents.append(loaded)
    warnings = skipped + [w for a in agents for w in a.warnings]
    checked = {a.spec: a.summary for a in agents if not a.earlier}
    summary = summary.model_copy(update={"agents": [checked.get(a.agent, a) for a in summary.agents]})
    return RunData(path, summary, agents, dict(summary.errors), definitions_fingerprint(folder.definitions), warnings)
