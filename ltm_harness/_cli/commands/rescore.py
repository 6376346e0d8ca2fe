"""`rescore`: score a finished run again (e.g. with a judge) without calling its agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

NAME = "rescore"
ORDER = 30
HELP = "score a finished run again, optionally with an LLM judge, without calling the agents"
DESCRIPTION = ("Replay a finished run from its event logs: the agents' recorded replies are scored again by the "
               "datasets' rules, or by the LLM judge given with --judge (responses are cached on disk, so a second "
               "rescore makes no calls). Results and summaries in the run folder are replaced.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="a run folder, or the name of a run under --results")
    p.add_argument("--judge", metavar="MODEL", help="judge model (default: the run's config.judge.model)")
    p.add_argument("--no-judge", action="store_true", help="score by rules only, even if the run had a judge")
    p.add_argument("--results", default="results", help="folder of runs, for RUN given by name (default: results)")


def find_run_dir(run: str, results: str) -> Path:
    from ltm_harness._errors import LTMError, RunFolderError
    from ltm_harness._runner.run import RUN_CONFIG

    candidates = [Path(run), Path(results) / run]
    for path in candidates:
        if (path / RUN_CONFIG).is_file():
            return path
    for path in candidates:
        if path.is_dir():
            raise RunFolderError(f"{path}: not a finished run folder of this harness ({RUN_CONFIG} is missing); "
                            "give the folder `run` wrote, e.g. results/default")
    raise RunFolderError(f"run {run!r} not found (looked for {candidates[0]} and {candidates[1]}); give a run folder or name")


M = TypeVar("M", bound="BaseModel")


def _read_run_file(path: Path, model: type[M]) -> M:
    """A file the run wrote, or one line saying why it cannot be read and what to do."""
    from pydantic import ValidationError

    from ltm_harness._errors import LTMError, RunFolderError
    from ltm_harness._store.files import first_error

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunFolderError(f"{path} is missing: the run did not finish; finish it with `run --resume` "
                        "(or run it again), then re-score") from None
    except OSError as exc:
        raise RunFolderError(f"cannot read {path}: {exc.strerror or exc}; check the file's permissions") from None
    except UnicodeDecodeError:
        raise RunFolderError(f"{path}: not a UTF-8 text file, so not a file this harness wrote; run the run again") from None
    if path.name == "summary.json":
        import json

        from ltm_harness._store.formats import check_summary_format

        try:
            check_summary_format(path, json.loads(text))
        except ValueError:
            pass  # not JSON: said just below
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise RunFolderError(f"{path}: {first_error(exc)}; the file is damaged or from another version of the harness, "
                        "run the run again") from None


def main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ltm_harness._runner.config import RunConfig
    from ltm_harness._errors import LTMError, RunFolderError
    from ltm_harness._results.models import RunSummary
    from ltm_harness._runner.run import RUN_CONFIG, prepare, run_all
    from ltm_harness._cli.tables import print_run

    run_dir = find_run_dir(args.run, args.results)
    cfg = _read_run_file(run_dir / RUN_CONFIG, RunConfig)
    old = _read_run_file(run_dir / "summary.json", RunSummary)
    for section in (cfg.config.openai, cfg.config.judge, cfg.config.test_llm):
        if section.api_key is not None and set(section.api_key.get_secret_value()) <= {"*"}:
            section.api_key = None  # saved masked; the key comes from the environment now
    if args.no_judge:
        cfg.config.judge.model = None
    elif args.judge:
        cfg.config.judge.model = args.judge
    agents = [a.agent for a in old.agents]
    if not agents:
        raise RunFolderError(f"{run_dir}: no agent finished in this run, so there is nothing to re-score")
    prepared = prepare(cfg, run_dir.parent, str(run_dir / RUN_CONFIG), existing_only=True)
    summary = asyncio.run(run_all(prepared, agents, replay=True))
    console = Console(width=None if sys.stdout.isatty() else 120)
    print_run(summary, console)
    judged = f" with judge {summary.judge}" if summary.judge else " by rules"
    console.print(f"re-scored{escape(judged)}: results in {escape(str(run_dir))}/")
    if (run_dir / "report.html").exists():  # the old report shows the old scores: write it again
        from ltm_harness._report import write_report

        try:
            console.print(f"report in {escape(str(write_report([run_dir]).html))}", soft_wrap=True)
        except LTMError as exc:
            print(f"warning: the report was not rewritten: {exc}", file=sys.stderr)
    for error in summary.errors.values():
        print(f"error: {error}", file=sys.stderr)
    return 1 if summary.errors else 0
