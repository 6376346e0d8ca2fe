import io

from rich.console import Console

from ltm_harness.progress import RunProgress
from ltm_harness.runner import prepare, run_all
from ltm_harness.testing import make_config


async def test_progress_counts_finished_tests_per_agent(tmp_path, monkeypatch):
    monkeypatch.setattr("ltm_harness.progress.UPDATE_EVERY", 0.0)
    prepared = prepare(make_config(["colours", "kv"], span=1500, examples=2, isolated=False), tmp_path)
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with RunProgress(console, ["oracle", "null"], 4) as progress:
        await run_all(prepared, ["oracle", "null"], progress.on_turn)
    tasks = {t.description: t for t in progress._progress.tasks}
    assert tasks["oracle"].completed == 4 and tasks["null"].completed == 4
    assert "mean score 1.00" in tasks["oracle"].fields["detail"]
    assert "mean score 0.00" in tasks["null"].fields["detail"]
