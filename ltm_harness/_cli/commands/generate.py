"""`generate`: make test sets for a GPT-generated dataset (prompts/*.json) with an LLM."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

NAME = "generate"
ORDER = 40
HELP = "make test sets for a GPT-generated dataset from its prompt file, with an LLM"
DESCRIPTION = ("Ask an LLM (OpenAI-compatible; OPENAI_BASE_URL / OPENAI_API_KEY) for N sets of content, questions "
               "and answers as the prompt file says, check them, and append them to the dataset's examples file, "
               "which runs then reuse.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("prompt_file", metavar="PROMPT_FILE", help="a prompt file, e.g. prompts/delayed_recall.json")
    p.add_argument("--model", required=True, help="the generating model, e.g. gpt-4o (or mock-generator offline)")
    p.add_argument("-n", type=int, default=5, help="number of sets to add (default 5)")
    p.add_argument("--attempts", type=int, default=3, help="tries per set before giving up (default 3)")
    p.add_argument("--base-url", help="endpoint (default: OPENAI_BASE_URL, else OpenAI)")
    p.add_argument("--no-cache", action="store_true", help="do not answer from (or fill) the LLM response cache")
    p.add_argument("--cache-dir", default="results/.llm-cache", help="response cache folder (default results/.llm-cache)")


def main(args: argparse.Namespace) -> int:
    from ltm_harness._errors import ConfigError
    from ltm_harness._authoring.gpt_generated import examples_path, load_prompt_file
    from ltm_harness._llm.endpoint import resolve_endpoint
    from ltm_harness._authoring.generate import generate
    from ltm_harness._llm.runtime import LLMRuntime

    from ltm_harness._guard.limits import MAX_ATTEMPTS, MAX_COUNT
    from ltm_harness._tokens import plural

    if args.n < 1 or args.attempts < 1:
        raise ConfigError(f"-n {args.n} --attempts {args.attempts}: -n and --attempts must be at least 1; give 1 or more")
    if args.n > MAX_COUNT or args.attempts > MAX_ATTEMPTS:
        raise ConfigError(f"-n {args.n} --attempts {args.attempts}: give -n at most {MAX_COUNT:,} and --attempts at "
                          f"most {MAX_ATTEMPTS}")
    path = Path(args.prompt_file)
    prompt = load_prompt_file(path)

    async def go() -> int:
        runtime = LLMRuntime(cache_dir=None if args.no_cache else Path(args.cache_dir))
        try:
            client = runtime.client(resolve_endpoint(f"generate ({args.model})", args.base_url))
            report = await generate(client, args.model, path, prompt, args.n, args.attempts, not args.no_cache)
        finally:
            await runtime.close()
        usage = report.usage
        cost = usage.total_cost
        print(f"added {plural(report.kept, 'set')} to {examples_path(path, prompt)} "
              f"({plural(usage.calls.get('generation', 0), 'call')}, {usage.prompt_tokens.get('generation', 0):,} + "
              f"{usage.completion_tokens.get('generation', 0):,} tokens, "
              f"{'unknown price' if usage.unpriced_models else f'${cost:.4f}'})")
        for line in report.rejected:
            print(f"rejected: {line}")
        return 0

    return asyncio.run(go())
