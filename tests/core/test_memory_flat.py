"""Memory flat in the number of conversations (issue 35): a benchmark's conversation of its own (a BEAM chat can be
10M tokens) is read from its definition once, when its session starts, and nothing of it is held once the session
ended: not the test (which the results builder held until the run's end), nor its lines' text (which each finished
session kept in its table of line counts), nor read again for the results or the headline."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from ltm_harness._authoring import definitions
from ltm_harness._runner import run
from ltm_harness.testing import make_config, run_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"


async def test_each_conversation_is_read_once_and_none_is_held_after_its_session(tmp_path, monkeypatch):
    reads: list[tuple[str, weakref.ref]] = []
    real_read = definitions.read_definition

    def read(folder, uid):
        example = real_read(folder, uid)
        reads.append((uid, weakref.ref(example)))
        return example

    at_the_end: list[object] = []
    real_summarize = run.summarize_sessions

    def summarize(spec, results, sessions, *args, **kwargs):
        gc.collect()
        at_the_end.append(sorted(uid for uid, ref in reads if ref() is not None))
        at_the_end.append(sum(len(s._shapes) for s in sessions))
        return real_summarize(spec, results, sessions, *args, **kwargs)

    monkeypatch.setattr(definitions, "read_definition", read)
    monkeypatch.setattr(run, "summarize_sessions", summarize)
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                      isolated_concurrency=1)
    summary = await run_config(cfg, tmp_path, ["null"])
    # once each for its session; the first once more for LoCoMo's own summary (the data file's quirks it carries)
    assert sorted(uid for uid, _ in reads) == ["locomo/synthetic-1", "locomo/synthetic-1", "locomo/synthetic-2"]
    assert at_the_end == [[], 0]  # no test, and no table of its lines, outlives its session
    headline = summary.agents[0].datasets[0]
    assert headline.tests == 11  # the results and the headline's counts came from the sessions, read once
