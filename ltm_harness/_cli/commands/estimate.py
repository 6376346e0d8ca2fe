"""`estimate`: agent calls, tokens and price of a run, without calling anything."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING

from ltm_harness._cli.commands._options import add_config_arguments, configure, selection_of
from ltm_harness._guard.redact import redact

if TYPE_CHECKING:
    from ltm_harness._runner.estimate import JudgeEstimate

NAME = "estimate"
ORDER = 15
HELP = "dry run: agent and judge calls, tokens sent and estimated price, without calling anything"
DESCRIPTION = ("Build the run's conversation with the real scheduler and a simulated chat model (no calls) and "
               "print agent calls, tokens sent (full context, and for MAX_CONTEXT when given) and the price from "
               "the price table (config llm.prices adds models). With a judge (--judge MODEL or config judge.model), "
               "the simulated answers are scored by the datasets' own scorers with a judge that counts each request "
               "it would be sent (its prompt filled with the question, the gold answer and the simulated reply) "
               "instead of sending it: the judge's requests, tokens and price get a row of their own, and each "
               "agent's total includes them (--judge-batch: at the Batch API's half price).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--max-context", type=int, help="also estimate for a chat model that keeps only this many tokens")
    p.add_argument("--reply-tokens", type=int, default=8, help="assumed mean length of answers to questions (default 8)")
    p.add_argument("--judge", metavar="MODEL",
                   help="price the LLM judge too: this model judges each agent's answers where datasets use one "
                        "(config.judge.model)")
    p.add_argument("--judge-batch", action="store_true",
                   help="price the judge's requests as the Batch API bills them (half; as run --judge-batch)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._cli.progress import RunProgress, progress_span
    from ltm_harness._engine.progress import TurnProgress
    from ltm_harness._errors import ConfigError
    from ltm_harness._runner.config import load_config, resolve_config_path, select_datasets
    from ltm_harness._runner.estimate import SIMULATION, estimate_many
    from ltm_harness._runner.prepare import PreparedRun
    from ltm_harness._tokens import short_count

    cfg, warnings = configure(load_config(args.config), str(resolve_config_path(args.config)), args)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    select_datasets(cfg, selection_of(args), args.config)
    agents = args.agents or cfg.config.agents
    if not agents:
        raise ConfigError("estimate needs an agent: pass -a openai:MODEL[@MAX_CONTEXT] (the model sets the price)")
    if args.max_context is not None and args.max_context < 100:
        raise ConfigError(f"--max-context {args.max_context}: must be at least 100 tokens; give a larger --max-context")
    from ltm_harness._guard.limits import MAX_MESSAGE_TOKENS

    if not 1 <= args.reply_tokens <= MAX_MESSAGE_TOKENS:
        raise ConfigError(f"--reply-tokens {args.reply_tokens}: must be from 1 to {MAX_MESSAGE_TOKENS:,}; give "
                          "--reply-tokens in that range")
    if args.judge_batch and not cfg.config.judge.model:
        raise ConfigError("--judge-batch needs a judge: give --judge MODEL (or config.judge.model)")
    console = Console(width=None if sys.stdout.isatty() else 120)
    errors = Console(stderr=True)
    progress: RunProgress | None = None

    def prepared_now(prepared: PreparedRun) -> None:
        nonlocal progress
        if args.json:
            return
        n = prepared.results_total()
        span = progress_span(d for d, _ in prepared.datasets)
        progress = RunProgress(errors, [SIMULATION], n, span, scores=False)
        progress.__enter__()

    def on_turn(turn: TurnProgress) -> None:
        if progress is not None:
            progress.on_turn(turn)

    try:
        rows = asyncio.run(estimate_many(cfg, agents, str(resolve_config_path(args.config)), args.max_context,
                                         args.reply_tokens, on_turn=on_turn, on_prepared=prepared_now,
                                         judge_batch=args.judge_batch))
    finally:
        if progress is not None:
            progress.__exit__(None, None, None)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        if rows[0].judge and rows[0].judge.unpriced:
            print(f"warning: {redact(rows[0].judge.unpriced)}", file=sys.stderr)
        return 0
    table = Table(title=f"estimate for {cfg.config.run_name} (nothing was called)", title_justify="left")
    cached = any(r.cost_cached_usd is not None for r in rows)
    judge = rows[0].judge
    table.add_column("agent", no_wrap=True, min_width=min(max(len(r.agent) for r in rows), 40))
    table.add_column("context")
    columns = ["calls (filler)", "tokens sent", "largest prompt", "tokens received", "price"]
    for col in columns + (["of them cached", "price if cached"] if cached else []) + (["total"] if judge else []):
        table.add_column(col, justify="right")
    for r in rows:
        price = "unpriced" if r.cost_usd is None else money(r.cost_usd)
        context = "full" if not r.max_context else short_count(r.max_context)
        largest = short_count(r.largest_prompt) + (" !" if r.warning else "")
        cells = [r.agent, context, f"{r.agent_calls:,} ({r.filler_calls:,})", short_count(r.prompt_tokens), largest,
                 short_count(r.completion_tokens), price]
        if cached:
            cells += [short_count(r.cached_prompt_tokens),
                      "-" if r.cost_cached_usd is None else money(r.cost_cached_usd)]
        if judge:
            cells.append("unpriced" if r.total_usd is None else money(r.total_usd))
        table.add_row(*(escape(c) for c in cells))
    if judge:
        cells = [f"judge {judge.model}", "-", f"{judge.requests:,}", short_count(judge.prompt_tokens), "",
                 short_count(judge.completion_tokens),
                 "unpriced" if judge.cost_usd is None else money(judge.cost_usd)]
        table.add_row(*(escape(c) for c in cells + [""] * (2 * cached + 1)))
    console.print(table)
    console.print(f"assumes answers of {args.reply_tokens} tokens to questions; --json gives exact numbers")
    if judge:
        console.print(escape(judge_line(judge)), soft_wrap=True)
    if cached:
        console.print("cached: prompt tokens a provider that caches repeated prompt prefixes bills at its cached-input "
                      "price (each prompt whose previous prompt is its prefix; OpenAI: prefixes of 1024+ tokens)")
    if any(r.warning for r in rows):
        console.print("!: prompts beyond the model's context (warnings below; config llm.contexts sets a model's size)")
    for r in rows:
        if r.warning:
            print(f"warning: {redact(r.warning)}", file=sys.stderr)
    if judge and judge.unpriced:
        print(f"warning: {redact(judge.unpriced)}", file=sys.stderr)
    return 0


def judge_line(judge: "JudgeEstimate") -> str:
    """What the judge's row covers: its requests by dataset and prompt, how its tokens and price were had."""
    from ltm_harness._tokens import short_count

    if not judge.requests:
        return (f"judge {judge.model}: no request; no dataset of this run asked the judge about the simulated "
                "answers")
    datasets = ", ".join(f"{name} {n:,}" for name, n in judge.by_dataset.items())
    prompts = ", ".join(f"{name} {n:,}" for name, n in judge.by_prompt.items())
    price = "at the Batch API's price (half)" if judge.batch else "at the online price (--judge-batch: half)"
    return (f"judge {judge.model}: {judge.requests:,} requests for each agent's answers ({datasets}; prompts: {prompts}), "
            f"{short_count(judge.prompt_tokens)} tokens sent, the replies counted at each prompt's max_tokens or a "
            f"typical verdict's length, {price}; each one read at once (a verdict asked again is not counted) and "
            f"paid (the judge cache, which answers a request made before, is not counted on)")


def money(usd: float) -> str:
    """$0.39, $45.70, $1,151 (no cents from $1,000 on, so the column stays narrow)."""
    return f"${usd:,.0f}" if usd >= 1000 else f"${usd:,.2f}"
