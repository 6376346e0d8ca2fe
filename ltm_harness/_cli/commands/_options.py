"""Options shared by commands that build a run from a config (`run`, `estimate`)."""

from __future__ import annotations

import argparse

from ltm_harness._runner.config import RunConfig
from ltm_harness._errors import ConfigError


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", default="default", help="YAML config path or shipped config name (default: default)")
    p.add_argument("-a", "--agent", action="append", dest="agents", metavar="AGENT",
                   help="agent spec, repeatable (e.g. retrieval, recent:2000, openai:gpt-4o-mini, http://127.0.0.1:8080/chat)")
    p.add_argument("--span", type=int, help="memory span in tokens for every dataset (overrides the config)")
    p.add_argument("--examples", type=int, help="examples per dataset (overrides the config)")
    p.add_argument("--seed", type=int, help="seed for test generation and filler")
    p.add_argument("--isolated", action="store_true", help="each test in its own fresh session, no filler, tests run concurrently")


def apply_overrides(cfg: RunConfig, args: argparse.Namespace) -> None:
    """The command line's --span, --examples, --seed, --isolated (and --run-name, --judge if present) over the config."""
    if args.span is not None:
        if args.span < 500:
            raise ConfigError(f"--span {args.span}: the span must be at least 500 tokens; give a larger --span")
        cfg.datasets.args.memory_span = args.span
        for entry in cfg.datasets.datasets:
            entry.args.pop("memory_span", None)
    if args.examples is not None:
        if args.examples < 1:
            raise ConfigError(f"--examples {args.examples}: there must be at least 1 example per dataset; give --examples 1 or more")
        cfg.datasets.args.dataset_examples = args.examples
        for entry in cfg.datasets.datasets:
            entry.args.pop("dataset_examples", None)
    if args.seed is not None:
        cfg.config.seed = args.seed
    if getattr(args, "run_name", None):
        cfg.config.run_name = args.run_name
    if args.isolated:
        cfg.config.isolated = True
    if getattr(args, "judge", None):
        cfg.config.judge.model = args.judge
