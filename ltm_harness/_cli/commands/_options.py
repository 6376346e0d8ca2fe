"""Options shared by commands: agents, where results go and what to do with an earlier run there, and the run
settings of commands that build a run from a config (`run`, `estimate`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING, Callable

from ltm_harness._guard.redact import redact
from ltm_harness._errors import ConfigError

if TYPE_CHECKING:  # imported when a command runs: `--help` stays fast
    from rich.console import Console

    from ltm_harness._llm.batch import BatchStatus
    from ltm_harness._api import RunOutput

    from ltm_harness._runner.config import RunConfig, Selection


AGENT_HELP = ("agent, repeatable: a spec (retrieval, recent:2000, openai:gpt-4o-mini@8k, http://127.0.0.1:8080/chat, "
              "my_agent.py:MyAgent), or NAME=SPEC to name it")


def add_agent_arguments(p: argparse.ArgumentParser, default: str | None = None, required: bool = False) -> None:
    p.add_argument("-a", "--agent", action="append", dest="agents", metavar="AGENT", required=required,
                   help=AGENT_HELP + (f" (default: {default})" if default else ""))


def add_results_arguments(p: argparse.ArgumentParser, where: str, option: str = "--results",
                          default: str = "results", definitions: bool = True) -> None:
    """Where outputs go, and --resume / --overwrite for an earlier run there (`where` names the run's folder;
    `definitions`: the run saves test definitions, which --overwrite keeps)."""
    p.add_argument(option, default=default, help=f"folder for the outputs, which go to {where} (default: {default})")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help=f"continue the interrupted run in {where} (given as when it started): agents that finished "
                            "are kept, turns already answered are replayed from the event logs, never asked again "
                            "(with nothing to resume, the run starts)")
    again.add_argument("--overwrite", action="store_true",
                       help=f"discard the results in {where} and run again"
                            + (" (test definitions are reused)" if definitions else ""))


def add_judge_cost_arguments(p: argparse.ArgumentParser) -> None:
    """--judge-batch and --no-cache: how the judge's requests are paid for (run, rescore, import-answers)."""
    p.add_argument("--judge-batch", action="store_true",
                   help="send the judge's requests through the provider's Batch API once the agents have finished (half "
                        "the price; the command waits for the batch, and a stopped one resumes by polling the same "
                        "batch); see docs/paid-runs.md")
    p.add_argument("--no-cache", action="store_true",
                   help="make every judge request again instead of answering it from the judge cache (the new answers "
                        "replace the cached ones)")


def judge_batch_progress(console: "Console") -> "Callable[[BatchStatus], None]":
    """What the commands say of a judge batch after each poll: `judge batch batch_abc: 120/199 done (in_progress)`."""
    from rich.markup import escape

    def said(status: "BatchStatus") -> None:
        console.print(escape(status.line()), soft_wrap=True)

    return said


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", default="default", help="YAML config path or shipped config name (default: default)")
    add_agent_arguments(p)
    p.add_argument("--span", type=int, help="memory span in tokens for every dataset (overrides the config)")
    p.add_argument("--examples", type=int, help="examples per dataset (overrides the config)")
    p.add_argument("--seed", type=int, help="seed for test generation and filler")
    p.add_argument("--isolated", action="store_true", help="each test in its own fresh session, no filler, tests run concurrently")
    p.add_argument("--set", action="append", dest="settings", metavar="KEY=VALUE",
                   help="one value of the config, repeatable: a dotted path as the YAML file spells it, a dataset by "
                        "its name, the value read as YAML (config.seed=3, datasets.args.memory_span=8000, "
                        "datasets.locomo.args.data_file=PATH, datasets.locomo.args.mode=interleaved); see docs/configs.md")
    add_selection_arguments(p)


def add_selection_arguments(p: argparse.ArgumentParser) -> None:
    """--datasets, --exclude and --limit: which of the config's datasets to play, and how many examples of each."""
    p.add_argument("--datasets", action="append", metavar="A,B",
                   help="play only these datasets of the config (comma-separated, repeatable)")
    p.add_argument("--exclude", action="append", metavar="A,B",
                   help="leave these datasets of the config out (comma-separated, repeatable), e.g. --exclude chapterbreak")
    p.add_argument("--limit", type=int, metavar="N", help="at most N examples per dataset")


def selection_of(args: argparse.Namespace) -> Selection:
    """The selection the command line asks for (nothing selected: every dataset, every example), checked as the
    library checks `run`'s datasets, exclude and limit."""
    from ltm_harness._runner.config import Selection

    return Selection.given(args.datasets, args.exclude, args.limit)


def apply_overrides(cfg: RunConfig, args: argparse.Namespace) -> None:
    """The command line's --span, --examples, --seed, --isolated (and --run-name, --judge if present) over the config
    (its --datasets, --exclude and --limit are applied after these, by `run_async` or `select_datasets`)."""
    from ltm_harness._guard.limits import MAX_EXAMPLES, MAX_MEMORY_SPAN, MAX_SEED

    if args.span is not None:
        if args.span < 500:
            raise ConfigError(f"--span {args.span}: the span must be at least 500 tokens; give a larger --span")
        if args.span > MAX_MEMORY_SPAN:
            raise ConfigError(f"--span {args.span}: the span may be at most {MAX_MEMORY_SPAN:,} tokens; give a smaller "
                              "--span")
        _every_dataset(cfg, "memory_span", args.span)
    if args.examples is not None:
        if args.examples < 1:
            raise ConfigError(f"--examples {args.examples}: there must be at least 1 example per dataset; give --examples 1 or more")
        if args.examples > MAX_EXAMPLES:
            raise ConfigError(f"--examples {args.examples}: at most {MAX_EXAMPLES:,} examples per dataset; give a "
                              "smaller --examples")
        _every_dataset(cfg, "dataset_examples", args.examples)
    if args.seed is not None:
        if abs(args.seed) > MAX_SEED:
            raise ConfigError(f"--seed {args.seed}: the seed must fit in 64 bits; give a smaller --seed")
        cfg.config.seed = args.seed
    if getattr(args, "run_name", None):
        cfg.config.run_name = args.run_name
    if args.isolated:
        cfg.config.isolated = True
    if getattr(args, "judge", None):
        cfg.config.judge.model = args.judge
    if getattr(args, "max_cost", None) is not None:
        cfg.config.max_cost = max_cost(args.max_cost)


def add_max_cost_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="stop before the run's paid LLM calls (agents' openai: models, the judge) could cost more than "
                        "USD in all; the run stops resumable, and --resume with a higher --max-cost goes on "
                        "(config.max_cost)")


def max_cost(value: float) -> float:
    """--max-cost checked: a finite number of dollars, 0 or more."""
    import math

    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"--max-cost {value:g}: give a budget in US dollars, 0 or more, e.g. --max-cost 5")
    return value


def configure(cfg: RunConfig, source: str, args: argparse.Namespace) -> tuple[RunConfig, list[str]]:
    """The config as the command line asks for it: its --set values, then --span, --examples, --seed, --isolated
    (and --run-name, --judge); with warnings for settings some of its selected datasets ignore. A setting all of
    them ignore (`--span` with LoCoMo in reference mode) is a ConfigError naming what to set instead."""
    from ltm_harness._runner.config import select_datasets
    from ltm_harness._runner.prepare import build_datasets
    from ltm_harness._runner.settings import apply_settings, dataset_setting_error, given_settings, meaningless

    settings = getattr(args, "settings", None) or []
    cfg = apply_settings(cfg, settings, source)
    apply_overrides(cfg, args)
    selected = select_datasets(cfg.model_copy(deep=True), selection_of(args), source)
    try:
        built = build_datasets(selected, source)
    except ConfigError as exc:
        raise dataset_setting_error(exc, settings, [e.name for e in selected.datasets.datasets]) from None
    names = [entry.name for entry in selected.datasets.datasets]
    error, warnings = meaningless(given_settings(args.span, args.seed, settings),
                                  [(name, d) for name, (d, _) in zip(names, built)])
    if error is not None:
        raise ConfigError(error)
    return cfg, warnings


def _every_dataset(cfg: RunConfig, arg: str, value: int) -> None:
    """`arg` for every dataset: the common value, and no dataset's own."""
    cfg.datasets.set_for_all(arg, value)


def refresh_results_index(results: str | Path) -> None:
    """Rewrite results/index.html after a command wrote a run there; a failure is a warning, never the command's."""
    import sys

    from ltm_harness._report import refresh_index

    problem = refresh_index(Path(results))
    if problem is not None:
        print(f"warning: {redact(problem)}", file=sys.stderr)


def report_after_run(path: Path, console: "Console") -> None:
    """A finished run's report (unless `--no-report`): where it is, or one warning line (redacted) saying why none was
    written; the run's results stand either way."""
    import sys

    from rich.markup import escape

    from ltm_harness._errors import LTMError
    from ltm_harness._report import write_report

    try:
        report = write_report([path])
    except LTMError as exc:
        print(f"warning: no report written: {redact(str(exc))}", file=sys.stderr)
    else:
        console.print(f"report in {escape(str(report.html))}", soft_wrap=True)


def say_causes(output: "RunOutput", command: str = "run") -> None:
    """Each agent's errored and unscored tests grouped by cause, one warning line per kind, with what mends them
    (ltm_harness._results.causes). An agent that stopped early has its errored tests said by its error line (a resume
    does them), so only its unscored ones are said here."""
    import sys

    from ltm_harness._results.causes import cause_lines, group_causes

    for agent in output.summary.agents:
        if not any(d.unscored or d.errored for d in agent.datasets):
            continue  # nothing to say: its results are not read
        groups = group_causes(output.results(agent.agent))
        if agent.agent in output.summary.errors:
            groups = [g for g in groups if g.kind != "errored"]
        for line in cause_lines(groups, command):
            print(f"warning: agent {agent.agent}: {redact(line)}", file=sys.stderr)
