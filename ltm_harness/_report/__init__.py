"""Reports: one self-contained HTML page per run or comparison of runs, with CSV and JSON tables beside it.

    write_report([run_folder], out_html)          # `python -m ltm_harness report RUN`
    write_report([run_a, run_b, ...], out_html)   # `python -m ltm_harness compare RUN RUN ...`
    write_index(results_root)                     # results/index.html, also after every run, report and compare

Each name is imported when first used: a run that writes no report refreshes the index (`_report.index`) without
loading the page's modules (and numpy, through the statistics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._report.index import refresh_index, write_index
    from ltm_harness._report.load import AgentData, RunData, load_run, resolve_run
    from ltm_harness._report.write import ReportFiles, default_compare_path, write_report

_LAZY = {  # name -> its module
    **dict.fromkeys(("AgentData", "RunData", "load_run", "resolve_run"), "ltm_harness._report.load"),
    **dict.fromkeys(("refresh_index", "write_index"), "ltm_harness._report.index"),
    **dict.fromkeys(("ReportFiles", "default_compare_path", "write_report"), "ltm_harness._report.write"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ltm_harness._report' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["AgentData", "RunData", "ReportFiles", "default_compare_path", "load_run", "refresh_index", "resolve_run",
           "write_index", "write_report"]
