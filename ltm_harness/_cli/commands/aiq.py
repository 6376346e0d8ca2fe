"""`aiq`: play AIQ-style tests (environments and problem sets) with chat agents; the AIQ score."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ltm_harness._cli.commands._options import add_agent_arguments, add_results_arguments, refresh_results_index
from ltm_harness._cli.exit_codes import add_allow_errored_argument, describe, exit_status
from ltm_harness._errors import ConfigError

NAME = "aiq"
ORDER = 35
HELP = "play AIQ-style tests (environments, problem sets) and report the AIQ score"
DESCRIPTION = ("Play named tests with params, each trial in a fresh session, and report per test the mean "
               "normalised score and the AIQ score (the mean over tests). Example: "
               "aiq -a retrieval --test bandit,horizon=20 --test keydoor,env_name=6x6 --trials 10. An errored "
               "trial counts as the test's minimum score. " + describe())


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_agent_arguments(p, default="retrieval")
    p.add_argument("--test", action="append", dest="tests", metavar="TEST",
                   help="NAME[,KEY=VALUE...], repeatable, e.g. keydoor,env_name=7x7 or my_env.py:MyEnv,steps=5 "
                        "(default: every built-in test)")
    p.add_argument("--trials", type=int, default=10, help="episodes per active test (default 10; passive tests run once)")
    p.add_argument("--seed", type=int, default=0, help="seed the trials' seeds are drawn from (default 0)")
    p.add_argument("--run-name", default="aiq", help="results go to results/<run-name>/ (default aiq)")
    add_results_arguments(p, "results/<run-name>/")
    p.add_argument("--list", action="store_true", help="list the tests, their sub-tests and params, and exit")
    p.add_argument("--quiet", action="store_true", help="print only the final table")
    add_allow_errored_argument(p, "trials")


def _list_tests() -> int:
    from rich.console import Console
    from rich.table import Table

    from ltm_harness.envs import ENVIRONMENTS

    table = Table(title="AIQ tests", title_justify="left")
    for col in ("name", "kind", "env_name", "params"):
        table.add_column(col)
    for name, cls in ENVIRONMENTS.scope().items():
        params = ", ".join(f for f in cls.Params.model_fields if f != "env_name")
        table.add_row(name, cls.kind, ", ".join(cls.sub_tests) or "-", params)
    Console().print(table)
    return 0


def main(args: argparse.Namespace) -> int:
    if args.list:
        return _list_tests()
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ltm_harness._protocols.aiq import run_aiq
    from ltm_harness._store.layout import RunFolder, slug
    from ltm_harness._tokens import plural

    from ltm_harness._guard.limits import MAX_COUNT, MAX_SEED

    if not 1 <= args.trials <= MAX_COUNT:
        raise ConfigError(f"--trials {args.trials}: --trials must be from 1 to {MAX_COUNT:,}; give a number in that range")
    if abs(args.seed) > MAX_SEED:
        raise ConfigError(f"--seed {args.seed}: the seed must fit in 64 bits; give a smaller --seed")
    agents = args.agents or ["retrieval"]
    console = Console(width=None if sys.stdout.isatty() else 120)

    def note(text: str) -> None:
        print(f"note: {text}", file=sys.stderr)

    if args.quiet or not console.is_terminal:
        report = asyncio.run(run_aiq(args.tests, agents, trials=args.trials, seed=args.seed,
                                     results_root=Path(args.results), run_name=args.run_name, resume=args.resume,
                                     overwrite=args.overwrite, on_note=note))
    else:
        from ltm_harness._protocols.aiq import default_tests
        from ltm_harness._envs.catalog import env_class, parse_test_spec
        from ltm_harness._agents.specs import agent_choices
        from ltm_harness._cli.progress import RunProgress

        specs = [parse_test_spec(t) for t in args.tests] if args.tests else default_tests()
        n = sum(args.trials if env_class(s.name).kind == "active" else 1 for s in specs)
        names = [choice.name for choice in agent_choices(agents)]
        with RunProgress(console, names, n) as progress:
            report = asyncio.run(run_aiq(specs, agents, trials=args.trials, seed=args.seed,
                                         results_root=Path(args.results), run_name=args.run_name,
                                         on_turn=progress.on_turn, resume=args.resume, overwrite=args.overwrite,
                                         on_note=note))
    table = Table(title=f"AIQ: mean normalised score per test ({plural(args.trials, 'trial')} per active test)",
                  title_justify="left")
    table.add_column("test")
    table.add_column("kind")
    for a in report.agents:
        table.add_column(escape(a.agent), justify="right")
    for i, test in enumerate(report.tests):
        kind = report.agents[0].tests[i].kind if report.agents else ""
        table.add_row(escape(test), kind, *[f"{a.tests[i].score:.2f} ± {a.tests[i].std:.2f}" for a in report.agents])
    table.add_row("[b]AIQ[/b]", "", *[f"[b]{a.aiq:.3f}[/b]" for a in report.agents])
    console.print(table)
    console.print(f"results in {escape(str(Path(args.results) / slug(report.run_name)))}/ (aiq.json)")
    refresh_results_index(args.results)
    any_errored = False
    for a in report.agents:
        errored = sum(t.errored for t in a.tests)
        if errored and a.agent not in report.errors:
            any_errored = True
            print(f"warning: agent {a.agent}: {plural(errored, 'trial')} errored, each counted as its test's minimum "
                  f"(the reasons are in {RunFolder.named(Path(args.results), report.run_name).agent(a.agent).results})",
                  file=sys.stderr)
    for error in report.errors.values():
        print(f"error: {error}", file=sys.stderr)
    return exit_status(bool(report.errors), any_errored, args.allow_errored)
