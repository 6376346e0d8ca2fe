"""Versions of what a run writes to disk, and the check every reader makes before trusting a file.

* `EVENT_FORMAT` is written in each event log's `session_start` event.
  1: the first format. 2: turns carry `failed` and `errors`, judge calls keep their response, and an
  aborted session says so (`session_aborted`). 3: every step of an environment played in the conversation is an
  `env_step` event, and suites and syllabi write event logs too. 4: nothing in an event varies between otherwise
  identical runs: an `llm_call`'s `latency_ms`, `retries` and `cached` go to the log's wall-clock side file
  (`<log>.wall`), its `cost_usd` is the price of its tokens even when the disk cache answered it, and judge verdicts
  no longer say `cached`. 5: history that needs no reply: a turn the agent only took in says `observed: true`
  (left out otherwise); a test scored question by question (a benchmark conversation) ends with `parts`, each
  question's score (left out otherwise). And a turn's failed tries are wall-clock history too: they go to the side
  file, each with its error, start time and latency (`TurnWallFacts`), so that a run whose faults the turn policy
  overcame writes the same log as a run without them; a turn's `errors` keeps the harness's notes on it (lone
  surrogates replaced, a bad cost), and a turn that failed every try keeps `tries` (how many, left out otherwise) and
  its last error first in `errors`, which is what its test's result says. Formats 1 to 4 are still read (report,
  rescore: their turns are replayed as format 5 records them, `TurnEvent.as_format_5`); only format 5 logs can be
  resumed, since a resume checks every event it makes against the recorded one. Added to format 5 without a new
  number (both are left out of the JSON unless set, so every log without them is byte for byte as before): a turn's
  `role` (who said it, when not the user) and `went_back` (an independent question: whether the agent went back to
  its state before it); a log that has them needs this version to be resumed exactly.
* `RESULTS_FORMAT` is written in every `summary.json` (the run's and each agent's).
  1: the first format. 2: memory distances (`memory_distance` on each gap of results.json and each curve point,
  per dataset in the summary, and `ltm_score_memory_distance`). 3: results of benchmarks scored question by
  question (LoCoMo, LongMemEval): `labels` on a result (its category or type), per dataset a `breakdown` by label
  and the benchmark's own `metrics`, and `observed_turns` (history that needed no reply) in each agent's summary.
  4: each dataset's `headline` in the summary: the numbers it is quoted by as it declares them (results/headline.py),
  whether the run was judged, their values (None when nothing was scored) with their counts, and what was played;
  LoCoMo's J and LongMemEval's accuracies moved there from `metrics`.
  5: each dataset's `score` follows the headline's rule: null where nothing was scored (it was 0.0) and null where the
  headline's leading number has no value (BEAM's mean of ten abilities over the one a rule decided: it was the mean
  over those), with `score_covers` saying what it is over when that is not every test ("40 of 400 tests scored"; left
  out otherwise); an agent's `benchmark_score` sums the datasets that have a score.
  Formats 1 to 4 are still read (the new fields missing: None, or 0; no headline: the mean score, None over nothing
  scored; a score of 0.0 over nothing scored is read as None).

The layout and every field are described in docs/run-format.md.
"""

from __future__ import annotations

from pathlib import Path

from ltm_harness._errors import RunFolderError

EVENT_FORMAT = 5
OLDEST_EVENT_FORMAT = 1  # the oldest event format this version still reads
RESUMABLE_EVENT_FORMAT = 5  # the oldest event format a run can be resumed from
FAILED_TRIES_ASIDE = 5  # the first event format whose turns keep their failed tries in the side file
RESULTS_FORMAT = 5


def check_format(path: Path, found: int, newest: int, oldest: int, what: str = "file") -> None:
    """Refuse a file written in a format this version does not read, in one line saying what to do."""
    if found > newest:
        raise RunFolderError(f"{path}: this {what} was written by a newer ltm-harness (format {found}; this version reads "
                        f"formats {oldest} to {newest}); upgrade ltm-harness to read it")
    if found < oldest:
        raise RunFolderError(f"{path}: this {what} was written by an older ltm-harness (format {found}; this version reads "
                        f"formats {oldest} to {newest}); run the benchmark again to get a run this version can read")


def check_summary_format(path: Path, data: object) -> None:
    """A summary.json (already parsed) is in a results format this version reads; a missing `format` is 1."""
    found = data.get("format", 1) if isinstance(data, dict) else 1
    if not isinstance(found, int) or isinstance(found, bool):
        raise RunFolderError(f"{path}: format: {found!r} is not a format number; the file is damaged, run the run again")
    check_format(path, found, RESULTS_FORMAT, 1, "summary")
