"""Results are derivable from the event logs alone (with the definitions): events are the source of truth."""

from __future__ import annotations

import json

import pytest

from ltm_harness._results.derive import results_from_events
from ltm_harness._store.eventlog import read_events
from ltm_harness._results.models import TestResult
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import all_dataset_names, make_config


@pytest.mark.parametrize("isolated", [False, True])
async def test_results_json_equals_what_the_events_say(tmp_path, isolated):
    cfg = make_config(all_dataset_names(), span=2000, examples=2, incompatibilities=[["names", "name_list"]],
                      isolated=isolated)
    prepared = prepare(cfg, tmp_path)
    await run_all(prepared, ["retrieval", "oracle"])
    examples = {e.unique_id: e for exs in prepared.examples.values() for e in exs}
    datasets = {d.name: d for d, _ in prepared.datasets}
    for agent in ("retrieval", "oracle"):
        folder = prepared.run_dir / agent
        logs = sorted((folder / "events").glob("*.jsonl")) if isolated else [folder / "events.jsonl"]
        derived = [r for log in logs for r in results_from_events(read_events(log), examples, datasets)]
        written = [TestResult.model_validate(r) for r in json.loads((folder / "results.json").read_text())]
        key = lambda r: (r.dataset, r.example_id)  # noqa: E731
        assert sorted(derived, key=key) == sorted(written, key=key)
        assert len(written) == sum(len(v) for v in prepared.examples.values())
