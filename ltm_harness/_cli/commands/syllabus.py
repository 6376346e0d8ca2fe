"""`syllabus`: validate an L2M-style syllabus, run it against agents, compute lifelong-learning metrics."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ltm_harness._cli.commands._options import add_agent_arguments, add_results_arguments
from ltm_harness._cli.exit_codes import add_allow_errored_argument, describe, exit_status
from ltm_harness._errors import ConfigError, DefinitionError, LTMError
from ltm_harness._tokens import plural

if TYPE_CHECKING:
    from ltm_harness._protocols.l2m.runner import RunOutcome
    from ltm_harness._protocols.l2m.syllabus import Syllabus, SyllabusType
    from ltm_harness._protocols.l2m.validate import Violation

NAME = "syllabus"
ORDER = 30
HELP = "L2M-style syllabi: validate, run against agents, compute lifelong-learning metrics"
DESCRIPTION = ("Lifelong-learning runs in the L2M style: a syllabus of train and test phases is played to an "
               "agent as one conversation, logged in the l2logger format and scored with lifelong-learning "
               "metrics (docs/l2m.md).")
TYPES = ("CL", "ANT_A", "ANT_B", "ANT_C")


def _syllabus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="syllabus JSON file, or the name of a shipped syllabus in syllabi/")
    p.add_argument("--type", choices=TYPES, help="syllabus type whose rules apply (default: the file's \"type\")")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="syllabus_command", metavar="ACTION", required=True)
    v = sub.add_parser("validate", help="check a syllabus against the L2M rules",
                       description="Check a syllabus; prints every broken rule, one per line (exit 1 if any).")
    _syllabus_arguments(v)
    v.add_argument("--no-tasks", action="store_true",
                   help="check the structure only, not that each task is a known environment with params it takes "
                        "(for syllabi written for another harness)")

    r = sub.add_parser("run", help="run a syllabus against agents; writes logs and metrics",
                       description="Play a syllabus to each agent (one conversation per agent), write l2logger "
                                   "logs and metrics.json, and print a summary. A turn the agent fails after every "
                                   "retry stops its syllabus (exit 1), so a finished syllabus has no errored "
                                   "episodes and 3 is never given. " + describe())
    _syllabus_arguments(r)
    add_agent_arguments(r, required=True)
    add_results_arguments(r, "<out>/<syllabus>-<agent>/", option="--out", default="results/l2m",
                          definitions=False)
    r.add_argument("--seed", type=int, default=0, help="seed of the episodes (default: 0)")
    r.add_argument("--ste", metavar="DIR", help="folder of single-task-expert logs for relative performance "
                                                "and sample efficiency")
    r.add_argument("--run-ste", action="store_true",
                   help="also run a fresh agent on each trained task alone (its training episodes only) and "
                        "use those runs as single-task experts")
    r.add_argument("--perf-measure", choices=("reward", "score"), default="reward",
                   help="metric column the metrics use: reward (sum of rewards) or score (the task's own "
                        "episode score); default: reward")
    add_allow_errored_argument(r, "episodes")

    m = sub.add_parser("metrics", help="compute metrics from l2logger logs",
                       description="Compute the lifelong-learning metrics of every scenario log under LOGDIR "
                                   "and write metrics.json next to each.")
    m.add_argument("logdir", metavar="LOGDIR", help="a scenario folder, or a folder holding scenario folders")
    m.add_argument("--ste", metavar="DIR", help="folder of single-task-expert logs")
    m.add_argument("--perf-measure", help="metric column to use (default: reward, or the --settings file's)")
    m.add_argument("--compat", choices=("l2metrics",),
                   help="compute the metrics as l2metrics 3.1.0 does (its smoothing, normalisation, maintenance, "
                        "transfer and STE rules; docs/l2m.md) and write them in its JSON shape to l2metrics.json "
                        "(default: the harness's own rules, metrics.json)")
    m.add_argument("--settings", metavar="FILE",
                   help="with --compat l2metrics: an l2metrics settings JSON (its --load-settings file or the "
                        "_settings.json it saves): perf_measure, maintenance_method, transfer_method, "
                        "ste_averaging_method, aggregation_method, window_length")
    for action in (v, r, m):
        action.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                            help="show tracebacks for errors")


def main(args: argparse.Namespace) -> int:
    command = {"validate": _validate, "run": _run, "metrics": _metrics}[args.syllabus_command]
    return command(args)


def _load(args: argparse.Namespace) -> tuple[Syllabus, SyllabusType | None, list[Violation]]:
    """The syllabus, the type whose rules apply (--type, else the file's) and the rules it breaks."""
    from ltm_harness._protocols.l2m.syllabus import SyllabusType, load_syllabus
    from ltm_harness._protocols.l2m.tasks import env_task_factory
    from ltm_harness._protocols.l2m.validate import validate

    syllabus = load_syllabus(args.file)
    kind = SyllabusType(args.type) if args.type else syllabus.declared_type
    return syllabus, kind, validate(syllabus, kind, tasks=None if getattr(args, "no_tasks", False) else env_task_factory)


def _validate(args: argparse.Namespace) -> int:
    from ltm_harness._protocols.l2m.syllabus import expand

    syllabus, kind, found = _load(args)
    label = kind.value if kind else "general rules only; give --type for CL or ANT rules"
    for violation in found:
        print(f"{syllabus.source}: {violation}")
    violations = [v for v in found if not v.warning]
    if violations:
        print(f"{plural(len(violations), 'problem')} ({label})", file=sys.stderr)
        return 1
    regimes = expand(syllabus)
    tasks = list(dict.fromkeys(r.task for r in regimes))
    blocks = len({r.block_num for r in regimes})
    print(f"{syllabus.source}: valid ({label}): {plural(blocks, 'block')}, {plural(len(regimes), 'regime')}, "
          f"{plural(sum(r.count for r in regimes), 'episode')}, {'task' if len(tasks) == 1 else 'tasks'} {', '.join(tasks)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ltm_harness._agents.specs import agent_choices
    from ltm_harness._protocols.l2m.logger import read_scenario, worker_slug
    from ltm_harness._protocols.l2m.metrics import compute_metrics, load_ste, write_metrics
    from ltm_harness._protocols.l2m.runner import RunSettings, run_syllabus
    from ltm_harness._protocols.l2m.summary import print_report
    from ltm_harness._protocols.l2m.syllabus import expand, single_task_syllabus
    from ltm_harness._runner.claim import claim_scenario
    from ltm_harness._runner.modes import Fresh, Resume, RunMode
    from ltm_harness._store.layout import ScenarioFolder
    from ltm_harness._store.lock import RunLock

    syllabus, kind, found = _load(args)
    for warning in (v for v in found if v.warning):
        print(f"{syllabus.source}: {warning}", file=sys.stderr)
    violations = [v for v in found if not v.warning]
    if violations:
        lines = "\n".join(f"{syllabus.source}: {v}" for v in violations)
        raise DefinitionError(f"the syllabus breaks {plural(len(violations), 'rule')}; fix them and run again "
                              f"(`syllabus validate` lists them):\n{lines}")
    scenario_type = kind.value if kind else "custom"
    if args.ste and args.run_ste:
        raise ConfigError("give either --ste DIR (existing expert logs) or --run-ste (run them now), not both")
    ste_given = load_ste(Path(args.ste), args.perf_measure) if args.ste else None
    factories = {c.name: c.factory(None, {}) for c in agent_choices(args.agents)}
    settings = RunSettings(seed=args.seed)
    mode: RunMode = Resume() if args.resume else Fresh()
    out = Path(args.out)
    trained = list(dict.fromkeys(r.task for r in expand(syllabus) if r.block_type == "train"))
    console = Console(width=None if sys.stdout.isatty() else 120)
    started = time.perf_counter()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console,
                        disable=not console.is_terminal)
    bars = {spec: progress.add_task(escape(spec), total=None) for spec in factories}
    claims: dict[str, tuple[ScenarioFolder, RunLock, list[str]]] = {}
    try:
        for spec in factories:
            claims[spec] = claim_scenario(out, syllabus.name, worker_slug(spec), resume=args.resume,
                                          overwrite=args.overwrite)
    except BaseException:  # one folder refused: let go of those already held
        for _, lock, _ in claims.values():
            lock.release()
        raise
    for _, _, notes in claims.values():
        for note in notes:
            print(f"note: {note}", file=sys.stderr)

    async def one(spec: str) -> _AgentRun:
        make = factories[spec]
        folder = claims[spec][0]
        run = _AgentRun(spec=spec, scenario=folder.path)

        def tick(done: int, total: int) -> None:
            progress.update(bars[spec], completed=done, total=total)

        try:
            run.outcome = await run_syllabus(syllabus, make(), folder, settings, scenario_type=scenario_type,
                                             on_experience=tick, mode=mode, name=spec)
            if args.run_ste:
                run.ste_dir = folder.path.with_name(f"{folder.path.name}-ste")
                for task in trained:
                    expert = ScenarioFolder(run.ste_dir / task, folder.worker)
                    with expert.lock():
                        await run_syllabus(single_task_syllabus(syllabus, task), make(), expert, settings,
                                           scenario_type="STE", mode=mode, name=spec)
        except LTMError as exc:  # an agent that fails (or its folder) must not take the others down
            run.error = str(exc)
        return run

    async def all_agents() -> list[_AgentRun]:
        return list(await asyncio.gather(*(one(spec) for spec in factories)))

    try:
        with progress:
            runs = asyncio.run(all_agents())
    finally:
        for _, lock, _ in claims.values():
            lock.release()
    for run in runs:
        if run.outcome is None:
            continue
        ste = load_ste(run.ste_dir, args.perf_measure) if run.ste_dir is not None else ste_given
        report = compute_metrics(read_scenario(run.scenario), args.perf_measure, ste)
        folder = claims[run.spec][0]
        write_metrics(report, folder.metrics)
        o = run.outcome
        console.print(f"[b]{escape(o.agent)}[/b] on {escape(o.syllabus)}: {plural(o.experiences, 'episode')}, "
                      f"{plural(o.turns, 'turn')}, {plural(o.invalid_replies, 'reply', 'replies')} without a valid "
                      f"move, {plural(o.incomplete_episodes, 'episode')} stopped")
        print_report(report, console)
        experts = f"  (experts in {escape(str(run.ste_dir))}/)" if run.ste_dir else ""
        console.print(f"logs and {folder.metrics.name} in {escape(str(run.scenario))}/{experts}")
    console.print(f"({time.perf_counter() - started:.1f} s)")
    failed = [run for run in runs if run.error]
    for run in failed:
        print(f"error: {run.error}", file=sys.stderr)
    return exit_status(bool(failed), False, args.allow_errored)  # a syllabus that finished has no errored episode


@dataclass
class _AgentRun:
    spec: str
    scenario: Path
    outcome: RunOutcome | None = None
    ste_dir: Path | None = None
    error: str | None = None


def _metrics(args: argparse.Namespace) -> int:
    if args.compat == "l2metrics":
        return _l2metrics(args)
    if args.settings:
        raise ConfigError("--settings is read with --compat l2metrics; add --compat l2metrics or drop --settings")
    args.perf_measure = args.perf_measure or "reward"
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._protocols.l2m.logger import read_scenario
    from ltm_harness._protocols.l2m.metrics import METRICS_FILE, compute_metrics, load_ste, scenario_dirs, write_metrics
    from ltm_harness._protocols.l2m.summary import print_report

    console = Console(width=None if sys.stdout.isatty() else 120)
    ste = load_ste(Path(args.ste), args.perf_measure) if args.ste else None
    for folder in scenario_dirs(Path(args.logdir)):
        report = compute_metrics(read_scenario(folder), args.perf_measure, ste)
        write_metrics(report, folder / METRICS_FILE)
        console.print(f"[b]{escape(str(folder))}[/b]")
        print_report(report, console)
        console.print(f"metrics in {escape(str(folder / METRICS_FILE))}")
    return 0


def _l2metrics(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._protocols.l2m.l2metrics import L2MetricsSettings, compute_l2metrics, load_settings
    from ltm_harness._protocols.l2m.l2metrics_regimes import load_ste_runs
    from ltm_harness._protocols.l2m.logger import read_scenario
    from ltm_harness._protocols.l2m.metrics import scenario_dirs
    from ltm_harness._store.files import write_text
    from ltm_harness._store.layout import L2METRICS
    import json

    settings = load_settings(Path(args.settings)) if args.settings else L2MetricsSettings()
    if args.perf_measure:
        settings = settings.model_copy(update={"perf_measure": args.perf_measure})
    console = Console(width=None if sys.stdout.isatty() else 120)
    ste = load_ste_runs(Path(args.ste), settings.perf_measure) if args.ste else None
    for folder in scenario_dirs(Path(args.logdir)):
        result = compute_l2metrics(read_scenario(folder), settings, ste)
        data = result.to_json_data()
        write_text(folder / L2METRICS, json.dumps(data, indent=2) + "\n")
        console.print(f"[b]{escape(str(folder))}[/b]")
        table = Table(title=f"lifetime metrics, l2metrics rules ({escape(settings.perf_measure)})",
                      title_justify="left")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for name, value in data.items():
            if name == "run_id":
                break
            table.add_row(name, f"{value:.4f}" if isinstance(value, (int, float)) else "-")
        console.print(table)
        console.print(f"metrics in {escape(str(folder / L2METRICS))}")
    return 0
