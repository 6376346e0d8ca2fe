"""Writing a report: load the runs, build the tables and the page, write them next to each other."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ltm_harness._errors import ConfigError, RunFolderError
from ltm_harness._report.load import RunData, load_run
from ltm_harness._report.lazy import LazyParts
from ltm_harness._report.page import build_page
from ltm_harness._report.index import refresh_index
from ltm_harness._report.compat import Difference, differences, refusal
from ltm_harness._report.tables import Tables, build_tables, entries, write_tables
from ltm_harness._report.stats_section import report_statistics, write_statistics_tables
from ltm_harness._stats import Statistics
from ltm_harness._store.files import write_text
from ltm_harness._store.layout import COMPARE_PREFIX, RunFolder, slug



@dataclass
class ReportFiles:
    html: Path
    tables: list[Path]  # <stem>.agents.csv/.json, .datasets.*, .tests.*
    warnings: list[str]
    tables_data: Tables | None = None  # what the page shows, for a terminal table
    differences: list[Difference] = field(default_factory=list)  # how compared runs differ (with force)
    statistics: Statistics | None = None  # intervals and paired comparisons (ltm_harness/_stats)


def default_compare_path(folders: Sequence[Path]) -> Path:
    """`compare_<run>_<run>.html` beside the first run's folder (shortened with a hash when long)."""
    names = "_".join(slug(f.resolve().name) for f in folders)
    if len(names) > 60:
        digest = hashlib.sha256("\n".join(str(f.resolve()) for f in folders).encode()).hexdigest()[:8]
        names = f"{slug(folders[0].resolve().name)[:30]}_and_{len(folders) - 1}_more_{digest}"
    return folders[0].resolve().parent / f"{COMPARE_PREFIX}{names}.html"


def _title(runs: Sequence[RunData]) -> str:
    if len(runs) == 1:
        return f"ltm-harness report: run {runs[0].name}"
    return "ltm-harness comparison: runs " + ", ".join(r.name for r in runs)


def write_report(folders: Sequence[Path], output: Path | None = None, force: bool = False) -> ReportFiles:
    """Report on the runs in `folders` (one: a run report; several: a comparison) as one HTML file,
    by default `report.html` in the run's folder, with its tables as CSV and JSON beside it.

    Runs whose tests (definitions fingerprint) or judge settings differ from the first run's are refused with a
    ConfigError, or with `force` compared anyway and marked in the page."""
    if not folders:
        raise ConfigError("no run given; name at least one run folder or run name")
    seen: dict[Path, Path] = {}
    for folder in folders:
        key = folder.resolve()
        if key in seen:
            raise ConfigError(f"run {folder} is given twice (also as {seen[key]}); give each run once")
        seen[key] = folder
    runs = [load_run(f) for f in folders]
    if output is None:
        output = RunFolder(folders[0]).report if len(folders) == 1 else default_compare_path(folders)
    if output.suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"report file {output} must end in .html (its tables are written beside it)")
    found = differences(runs)
    if found and not force:
        raise ConfigError(refusal(found))
    all_entries = entries(runs)
    tables = build_tables(all_entries)
    stats = report_statistics(all_entries)
    parts = LazyParts.beside(output)
    page = build_page(_title(runs), runs, all_entries, tables, found, stats=stats, parts=parts)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        parts.write(output)  # before the page that loads them
        write_text(output, page)  # whole or not at all; a failure is one line (RunFolderWriteError)
        written = write_tables(tables, output)
        written += write_statistics_tables(stats, output)
    except OSError as exc:
        raise RunFolderError(f"cannot write the report to {output}: {exc.strerror or exc}; "
                        "give another file with -o") from None
    warnings = [w for r in runs for w in r.warnings]
    for root in dict.fromkeys(f.resolve().parent for f in folders):  # the index links the report, lists the comparison
        if (problem := refresh_index(root)) is not None:
            warnings.append(problem)
    return ReportFiles(output, written, warnings, tables, found, stats)
