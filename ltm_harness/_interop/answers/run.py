"""What `import-answers` needs around a run: the benchmark's config (found as `run` finds it), the file read and
matched to the questions once the run is prepared, the agent that answers from it, and the match report kept in the
run folder (`<run>/imported/<agent>.json`) for the report's "their scores vs the reference rules"."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ltm_harness._agents.base import Agent
from ltm_harness._errors import ConfigError
from ltm_harness._interop.answers.agent import ImportedAnswersAgent, Table
from ltm_harness._interop.answers.formats import AnswersFile, read_answers
from ltm_harness._interop.answers.matching import AskedQuestion, MatchReport, match_answers
from ltm_harness._runner.config import RunConfig, load_config, resolve_config_path
from ltm_harness._store.files import read_run_file, write_model
from ltm_harness._store.layout import RunFolder, slug

Kind = Literal["locomo", "longmemeval", "memoryagentbench"]
KINDS: tuple[Kind, ...] = ("locomo", "longmemeval", "memoryagentbench")
DEFAULT_CONFIGS = {"locomo": "locomo", "longmemeval": "longmemeval-s", "memoryagentbench": "mab"}


def answers_config(benchmark: str, data_file: str | Path | None) -> tuple[RunConfig, Kind, str]:
    """The config of `benchmark` (a benchmark's name or a config naming one), with `data_file` when given, and which
    benchmark it plays."""
    name = DEFAULT_CONFIGS.get(benchmark, benchmark)
    try:
        path = resolve_config_path(name)
    except ConfigError:
        raise ConfigError(f"unknown benchmark {benchmark!r}: answers can be imported for locomo, longmemeval or "
                          "memoryagentbench (or a config that plays one of them, such as longmemeval-s)") from None
    cfg = load_config(path)
    kinds = [e.name for e in cfg.datasets.datasets if e.name in KINDS]
    if len(kinds) != 1 or len(cfg.datasets.datasets) != 1:
        raise ConfigError(f"{path}: answers can be imported for a config that plays exactly one benchmark, locomo, "
                          f"longmemeval or memoryagentbench; this one plays {', '.join(e.name for e in cfg.datasets.datasets) or 'nothing'}")
    kind: Kind = "locomo" if kinds[0] == "locomo" else "memoryagentbench" if kinds[0] == "memoryagentbench" \
        else "longmemeval"
    if data_file is not None:  # MemoryAgentBench: the folder laid out like the hub's repository
        cfg.datasets.set_for(kind, "data_dir" if kind == "memoryagentbench" else "data_file",
                             str(Path(data_file).expanduser()))
    return cfg, kind, str(path)


def _questions(prepared: Any, kind: Kind) -> tuple[list[AskedQuestion], dict[str, str], list[str] | None]:
    """The run's questions in the order asked, each test's session name, and LoCoMo's sample ids in file order."""
    dataset = next(d for d, _ in prepared.datasets if d.name == kind)
    asked: list[AskedQuestion] = []
    sessions: dict[str, str] = {}
    running: dict[str, int] = {}  # MemoryAgentBench: each source's questions counted on over its rows
    for example in prepared.examples[kind]:  # read one at a time (a LongMemEval haystack is large)
        sessions[example.example_id] = slug(f"{dataset.name}__{example.example_id}")
        if kind == "memoryagentbench":
            for q in example.extra["questions"]:
                n = running.get(q["source"], 0)
                running[q["source"]] = n + 1
                asked.append(AskedQuestion(example.example_id, f"{example.example_id}.{q['index']}",
                                           f"{q['source']}:{n}", str(q["question"]),
                                           tuple(str(g) for g in q["golds"])))
        elif kind == "locomo":
            asked += [AskedQuestion(example.example_id, f"{example.example_id}.q{q['index']}", str(q["index"]),
                                    str(q["question"])) for q in example.extra["questions"]]
        else:
            q = example.extra["question"]
            asked.append(AskedQuestion(example.example_id, example.example_id, str(q["question_id"]),
                                       str(q["question"])))
    in_file = None
    if kind == "locomo":
        from ltm_harness._interop.locomo.fetch import load_locomo

        data_file = getattr(dataset.params, "data_file", None)
        in_file = [s.sample_id for s in load_locomo(Path(data_file) if data_file else None, quiet=True).samples]
    return asked, sessions, in_file


@dataclass
class AnswersPlan:
    """The file, read; once the run is prepared, its answers matched and laid out for the agent."""

    file: AnswersFile
    kind: Kind
    name: str
    table: Table = field(default_factory=dict)
    _report: MatchReport | None = None

    def on_prepared(self, prepared: Any, claim: Any) -> None:
        asked, sessions, in_file = _questions(prepared, self.kind)
        matched = match_answers(self.file, asked, self.kind, in_file)
        self.table.clear()
        self.table.update({sessions[example]: rows for example, rows in matched.by_example.items()})
        self._report = matched.report

    def make_agent(self) -> Agent:
        return ImportedAnswersAgent(self.name, self.table)

    def report(self) -> MatchReport:
        if self._report is None:
            raise ConfigError(f"{self.file.path}: the run was not prepared, so no answer was matched")
        return self._report


def fit_config(cfg: RunConfig, plan: AnswersPlan) -> None:
    """MemoryAgentBench's output files hold one source each: the run plays the sources the file answers, every row
    of them the reference plays (its `max_test_samples`)."""
    if plan.kind != "memoryagentbench":
        return
    from ltm_harness._interop.mab.fetch import split_file
    from ltm_harness._interop.mab.rows import sources_in
    from ltm_harness._interop.mab.sources import SOURCES

    names = sorted({a.conversation for a in plan.file.answers if a.conversation})
    unknown = [n for n in names if n not in SOURCES]
    if unknown or not names:
        raise ConfigError(f"{plan.file.path}: dataset_config.sub_dataset {unknown[0] if unknown else None!r} is not a "
                          "MemoryAgentBench source")
    entry = next(e for e in cfg.datasets.datasets if e.name == "memoryagentbench")
    data_dir = entry.args.get("data_dir")
    rows = 0
    for split in sorted({SOURCES[n].split for n in names}):
        counts = dict(sources_in(split_file(split, data_dir)))
        rows += sum(min(counts.get(n, 0), SOURCES[n].max_rows) for n in names if SOURCES[n].split == split)
    cfg.datasets.set_for("memoryagentbench", "sources", names)
    cfg.datasets.set_for_all("dataset_examples", rows)


def answers_on_prepared(path: Path, kind: Kind, name: str) -> AnswersPlan:
    return AnswersPlan(read_answers(path, kind), kind, name)


def write_match_report(run: RunFolder, agent: str, report: MatchReport) -> None:
    path = run.imported(agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_model(path, report)


def read_match_report(run: RunFolder, agent: str) -> MatchReport | None:
    """The match report of an imported agent (None: the agent was not imported, or the file cannot be read)."""
    path = run.imported(agent)
    if not path.is_file():
        return None
    try:
        return read_run_file(path, MatchReport)
    except Exception:  # a damaged side file: the run is still shown, without the comparison
        return None
