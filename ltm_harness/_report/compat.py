"""Whether runs can be compared test by test: the same tests (the fingerprint of their definitions) and the same
judge settings (model, judge prompt, temperature). Every run is checked against the first one given.

`compare` refuses runs that differ (one line naming them and how), or, with --force, puts them side by side and
marks them in the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ltm_harness._errors import LTMError
from ltm_harness._report.load import RunData
from ltm_harness._store.files import read_run_json
from ltm_harness._store.layout import RunFolder


@dataclass(frozen=True)
class Difference:
    """How one run differs from the first run of a comparison."""

    run: RunData
    what: str  # "tests" or "judge"
    detail: str  # a sentence: "its tests differ from run a's (...)"


def judge_settings(run: RunData) -> str:
    """The run's judge settings in words ("no judge", or "judge gpt-4o, prompt default (hash 1a2b...), temperature 0")."""
    model = run.summary.judge
    if not model:
        return "no judge"
    parts = [f"judge {model}"]
    judge = _saved_judge(run)
    hashes = sorted({v.prompt_hash for a in run.agents for r in a.results for v in r.verdicts if v.prompt_hash})
    prompt = judge.get("prompt")
    if isinstance(prompt, str) or hashes:
        parts.append("prompt " + (prompt if isinstance(prompt, str) else "?")
                     + (f" ({', '.join(hashes)})" if hashes else ""))
    temperature = judge.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        parts.append(f"temperature {temperature:g}")
    return ", ".join(parts)


def _saved_judge(run: RunData) -> dict[str, Any]:
    """`config.judge` of the config saved with the run (empty when there is none or it cannot be read)."""
    folder = RunFolder(run.folder)
    if not folder.run_config.is_file():
        return {}
    try:
        data = read_run_json(folder.run_config)
    except LTMError:
        return {}
    config = data.get("config") if isinstance(data, dict) else None
    judge = config.get("judge") if isinstance(config, dict) else None
    return judge if isinstance(judge, dict) else {}


def differences(runs: Sequence[RunData]) -> list[Difference]:
    """How each run after the first differs from the first: its tests, its judge settings."""
    if len(runs) < 2:
        return []
    first = runs[0]
    first_judge = judge_settings(first)
    out = []
    for run in runs[1:]:
        if first.fingerprint is None or run.fingerprint is None:
            which = first if first.fingerprint is None else run
            out.append(Difference(run, "tests", f"run {run.name}: its tests cannot be checked against run {first.name}'s "
                                               f"({which.folder / 'definitions'} holds no readable manifest)"))
        elif run.fingerprint != first.fingerprint:
            out.append(Difference(run, "tests", f"run {run.name}: its tests differ from run {first.name}'s (other "
                                               "datasets, parameters or seed: a test id such as colours/0 names "
                                               "another test)"))
        judge = judge_settings(run)
        if judge != first_judge:
            out.append(Difference(run, "judge", f"run {run.name}: {judge}; run {first.name}: {first_judge}"))
    return out


def refusal(found: Sequence[Difference]) -> str:
    """The one line `compare` refuses with."""
    return ("these runs cannot be compared test by test: " + "; ".join(d.detail for d in found)
            + "; compare runs of the same tests and judge, or pass --force to compare them anyway (the page marks "
              "the runs that differ)")
