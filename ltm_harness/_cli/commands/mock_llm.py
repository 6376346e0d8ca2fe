"""`mock-llm`: the shipped OpenAI-compatible mock server (for offline demos and tests)."""

from __future__ import annotations

import argparse
import asyncio

NAME = "mock-llm"
ORDER = 80
HELP = "serve the offline OpenAI-compatible mock LLM (models: mock, mock-judge, mock-generator, ...)"
DESCRIPTION = ("Serve an OpenAI-compatible /v1/chat/completions on this machine, with deterministic behaviours "
               "chosen by model name and optional fault injection. Point OPENAI_BASE_URL at the printed URL.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default: 8765; 0 picks a free one)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every request")
    p.add_argument("--rate-429", type=float, default=0.0, help="share of requests answered 429 with Retry-After")
    p.add_argument("--retry-after", type=float, default=0.05, help="seconds sent in Retry-After (default 0.05)")
    p.add_argument("--rate-500", type=float, default=0.0, help="share of requests answered 500")
    p.add_argument("--rate-drop", type=float, default=0.0, help="share of requests whose connection is dropped")
    p.add_argument("--rate-malformed", type=float, default=0.0, help="share of requests answered with a broken body")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    for name, what in (("502", "answered 502"), ("503", "answered 503"), ("cut", "whose response is cut in the middle"),
                       ("content-filter", "finished by the content filter"), ("refusal", "answered with a refusal")):
        p.add_argument(f"--rate-{name}", type=float, default=0.0, help=f"share of requests {what}")
    p.add_argument("--rpm", type=int, help="a rate limit: requests per --limit-window per model (429 past it)")
    p.add_argument("--tpm", type=int, help="a rate limit: tokens per --limit-window per model (429 past it)")
    p.add_argument("--limit-window", type=float, default=60.0, help="seconds the rate limits count over (default 60)")
    p.add_argument("--context", type=int, help="tokens a prompt may hold (400 context_length_exceeded past it)")
    p.add_argument("--prompt-cache", action="store_true", help="report repeated leading messages as cached input")


def main(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ltm_harness._errors import ConfigError
    from ltm_harness._llm.mock_server import EMBEDDING_MODELS, MODELS, FaultSettings, MockLLMServer

    try:
        faults = FaultSettings(rate_429=args.rate_429, retry_after=args.retry_after, rate_500=args.rate_500,
                               rate_drop=args.rate_drop, rate_malformed=args.rate_malformed,
                               latency_ms=args.latency_ms, seed=args.seed, rate_502=args.rate_502,
                               rate_503=args.rate_503, rate_cut=args.rate_cut,
                               rate_content_filter=args.rate_content_filter, rate_refusal=args.rate_refusal,
                               rpm=args.rpm, tpm=args.tpm, limit_window=args.limit_window, context=args.context,
                               prompt_cache=args.prompt_cache)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"--{str(err['loc'][0]).replace('_', '-')}: {err['msg']}") from None

    async def serve() -> None:
        server = MockLLMServer(faults)
        try:
            url = await server.start(args.host, args.port)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; pick another --port") from None
        print(f"mock LLM serving at {url}  (models: {', '.join(MODELS)}; embeddings: {', '.join(EMBEDDING_MODELS)})",
              flush=True)
        print(f"try: OPENAI_BASE_URL={url} python -m ltm_harness run -a openai:mock", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    asyncio.run(serve())
    return 0
