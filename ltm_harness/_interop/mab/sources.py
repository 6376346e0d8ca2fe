"""MemoryAgentBench's sources (`metadata.source`, exact and case-sensitive): the split each lives in, the family
whose templates and scoring it uses (the reference routes by substrings of the name), the column of the paper's
Table 3 it counts in, its competency, the metric the paper reports, and the chunk size of the paper's own runs.

The main table (`MAIN`) is the paper's Table 3: the 262k fact-consolidation sets and `eventqa_full`; the other
sources (EventQA at 64K/128K, fact consolidation at 6K/32K/64K, the older `longmemeval_s_-1_500`) are ablations:
they are played when asked for by name and reported per source, outside the competencies and the overall mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Split = Literal["Accurate_Retrieval", "Test_Time_Learning", "Long_Range_Understanding", "Conflict_Resolution"]
SPLITS: tuple[Split, ...] = ("Accurate_Retrieval", "Test_Time_Learning", "Long_Range_Understanding",
                             "Conflict_Resolution")
Family = Literal["ruler_qa", "longmemeval", "eventqa", "in_context_learning", "recsys_redial", "infbench_sum",
                 "detective_qa", "factconsolidation"]
Metric = Literal["SubEM", "EM", "Recall@5", "LME judge", "summary judge"]
COMPETENCIES = ("AR", "TTL", "LRU", "CR")  # the paper calls CR "selective forgetting" (SF)
COLUMNS = ("SH", "MH", "LME", "EvQA", "MCC", "Rec", "Sum", "Det", "FC-SH", "FC-MH")  # Table 3, in its order


@dataclass(frozen=True)
class Source:
    name: str
    split: Split
    family: Family
    column: str  # Table 3's column, or the source's own name for an ablation source
    competency: str | None  # None: an ablation source, outside the competencies
    metric: Metric
    paper_chunk_size: int  # the chunk size of the paper's runs of it (App. F.3: 512 for SH/MH, LME, FC)
    max_rows: int  # the reference's `max_test_samples`


def _s(name: str, split: Split, family: Family, column: str, competency: str | None, metric: Metric,
       chunk: int, rows: int) -> Source:
    return Source(name, split, family, column, competency, metric, chunk, rows)


AR, TTL, LRU, CR = SPLITS
_ALL = [
    _s("ruler_qa1_197K", AR, "ruler_qa", "SH", "AR", "SubEM", 512, 100),
    _s("ruler_qa2_421K", AR, "ruler_qa", "MH", "AR", "SubEM", 512, 100),
    _s("longmemeval_s*", AR, "longmemeval", "LME", "AR", "LME judge", 512, 5),
    _s("eventqa_full", AR, "eventqa", "EvQA", "AR", "SubEM", 4096, 5),
    _s("eventqa_65536", AR, "eventqa", "eventqa_65536", None, "SubEM", 4096, 5),
    _s("eventqa_131072", AR, "eventqa", "eventqa_131072", None, "SubEM", 4096, 5),
    *(_s(f"icl_{n}_balance", TTL, "in_context_learning", "MCC", "TTL", "EM", 4096, 100)
      for n in ("banking77_5900shot", "clinic150_7050shot", "nlu_8296shot", "trec_coarse_6600shot",
                "trec_fine_6400shot")),
    _s("recsys_redial_full", TTL, "recsys_redial", "Rec", "TTL", "Recall@5", 4096, 1),
    _s("infbench_sum_eng_shots2", LRU, "infbench_sum", "Sum", "LRU", "summary judge", 4096, 100),
    _s("detective_qa", LRU, "detective_qa", "Det", "LRU", "EM", 4096, 10),
    _s("factconsolidation_sh_262k", CR, "factconsolidation", "FC-SH", "CR", "SubEM", 512, 1),
    _s("factconsolidation_mh_262k", CR, "factconsolidation", "FC-MH", "CR", "SubEM", 512, 1),
    *(_s(f"factconsolidation_{h}_{k}", CR, "factconsolidation", f"factconsolidation_{h}_{k}", None, "SubEM", 512, 1)
      for h in ("sh", "mh") for k in ("6k", "32k", "64k")),
]
SOURCES: dict[str, Source] = {s.name: s for s in _ALL}
MAIN: tuple[str, ...] = tuple(s.name for s in _ALL if s.competency is not None)
BY_COMPETENCY: dict[str, tuple[str, ...]] = {c: tuple(s.name for s in _ALL if s.competency == c) for c in COMPETENCIES}


def source(name: str) -> Source:
    """The source of that exact name; KeyError when it is not one of MemoryAgentBench's."""
    return SOURCES[name]
