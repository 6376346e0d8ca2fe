"""`estimate`: agent calls, tokens and price of a run, without calling anything."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ltm_harness._cli.commands._options import add_config_arguments, apply_overrides

NAME = "estimate"
ORDER = 15
HELP = "dry run: agent calls, tokens sent and estimated price, without calling any agent"
DESCRIPTION = ("Build the run's conversation with the real scheduler and a simulated chat model (no calls) and "
               "print agent calls, tokens sent (full context, and for MAX_CONTEXT when given) and the price from "
               "the price table (config llm.prices adds models).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--max-context", type=int, help="also estimate for a chat model that keeps only this many tokens")
    p.add_argument("--reply-tokens", type=int, default=8, help="assumed mean length of answers to questions (default 8)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from ltm_harness._runner.config import load_config, resolve_config_path
    from ltm_harness._errors import ConfigError
    from ltm_harness._runner.estimate import estimate

    cfg = load_config(args.config)
    apply_overrides(cfg, args)
    agents = args.agents or cfg.config.agents
    if not agents:
        raise ConfigError("estimate needs an agent: pass -a openai:MODEL[@MAX_CONTEXT] (the model sets the price)")
    if args.max_context is not None and args.max_context < 100:
        raise ConfigError(f"--max-context {args.max_context}: must be at least 100 tokens; give a larger --max-context")
    from ltm_harness._guard.limits import MAX_MESSAGE_TOKENS

    if not 1 <= args.reply_tokens <= MAX_MESSAGE_TOKENS:
        raise ConfigError(f"--reply-tokens {args.reply_tokens}: must be from 1 to {MAX_MESSAGE_TOKENS:,}; give "
                          "--reply-tokens in that range")
    rows = []
    for agent in agents:
        rows += asyncio.run(estimate(cfg, agent, str(resolve_config_path(args.config)), args.max_context, args.reply_tokens))
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 0
    console = Console(width=None if sys.stdout.isatty() else 120)
    table = Table(title=f"estimate for {cfg.config.run_name} (nothing was called)", title_justify="left")
    for col in ("agent", "context", "agent calls", "of them filler", "tokens sent", "tokens received", "price"):
        table.add_column(col, justify="left" if col in ("agent", "context") else "right")
    for r in rows:
        price = "unknown model price" if r.cost_usd is None else f"${r.cost_usd:,.4f}"
        table.add_row(r.agent, f"{r.max_context:,}" if r.max_context else "full", f"{r.agent_calls:,}",
                      f"{r.filler_calls:,}", f"{r.prompt_tokens:,}", f"{r.completion_tokens:,}", price)
    console.print(table)
    console.print(f"assumes answers of {args.reply_tokens} tokens to questions; judge calls are not included")
    return 0
