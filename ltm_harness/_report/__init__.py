"""Reports: one self-contained HTML page per run or comparison of runs, with CSV and JSON tables beside it.

    write_report([run_folder], out_html)          # `python -m ltm_harness report RUN`
    write_report([run_a, run_b, ...], out_html)   # `python -m ltm_harness compare RUN RUN ...`
    write_index(results_root)                     # results/index.html, also after every run, report and compare
"""

from ltm_harness._report.load import AgentData, RunData, load_run, resolve_run
from ltm_harness._report.index import refresh_index, write_index
from ltm_harness._report.write import ReportFiles, default_compare_path, write_report

__all__ = ["AgentData", "RunData", "ReportFiles", "default_compare_path", "load_run", "refresh_index", "resolve_run",
           "write_index", "write_report"]
