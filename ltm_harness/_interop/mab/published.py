"""MemoryAgentBench's published numbers: the paper's Table 3 (arXiv 2507.05257v4; GPT-4o-mini backbone unless the
agent names another), shipped as data and shown beside a run's own numbers, marked "published, not ours".

Columns: SH, MH, LME, EvQA and their mean AR; MCC (the mean of the five ICL sets), Rec and TTL; Sum, Det and LRU;
FC-SH, FC-MH and SF (our CR); All, the mean of the four competencies. Percentages as printed; `published(agent)`
gives them on the harness's 0..1 scale. Known slips of the paper (REFERENCE.md 10.5): GPT-4o-mini's MCC is 82.0 here
but its Table 7 averages to 82.4, and Overall is rounded differently from row to row."""

from __future__ import annotations

COLUMNS = ("SH", "MH", "LME", "EvQA", "AR", "MCC", "Rec", "TTL", "Sum", "Det", "LRU", "FC-SH", "FC-MH", "SF", "All")
COMPETENCY_COLUMN = {"AR": "AR", "TTL": "TTL", "LRU": "LRU", "CR": "SF"}
TABLE3 = """\
GPT-4o | 72.0 | 51.0 | 32.0 | 77.2 | 58.1 | 87.6 | 12.3 | 50.0 | 32.2 | 77.5 | 54.9 | 60.0 | 5.0 | 32.5 | 48.8
GPT-4o-mini | 64.0 | 43.0 | 30.7 | 59.0 | 49.2 | 82.0 | 15.1 | 48.6 | 28.9 | 63.4 | 46.2 | 45.0 | 5.0 | 25.0 | 42.2
Claude-3.7-Sonnet | 77.0 | 53.0 | 34.0 | 74.6 | 59.7 | 89.4 | 18.3 | 53.9 | 52.5 | 71.8 | 62.2 | 43.0 | 2.0 | 22.5 | 49.6
GPT-5-mini | 85.0 | 71.0 | 63.3 | 78.2 | 74.4 | 84.0 | 13.2 | 48.6 | 56.3 | 76.1 | 66.2 | 78.0 | 28.0 | 53.0 | 60.6
GPT-4.1-mini | 83.0 | 66.0 | 55.7 | 82.6 | 71.8 | 75.6 | 16.7 | 46.2 | 41.9 | 56.3 | 49.1 | 36.0 | 5.0 | 20.5 | 46.9
Gemini-2.0-Flash | 87.0 | 59.0 | 47.0 | 67.2 | 65.1 | 84.0 | 8.7 | 46.4 | 23.9 | 59.2 | 41.6 | 30.0 | 3.0 | 16.5 | 42.4
BM25 | 66.0 | 56.0 | 45.3 | 74.6 | 60.5 | 75.4 | 13.6 | 44.5 | 19.0 | 52.1 | 35.6 | 48.0 | 3.0 | 25.5 | 41.5
Contriever | 22.0 | 31.0 | 15.7 | 66.8 | 33.9 | 70.6 | 15.2 | 42.9 | 17.2 | 42.3 | 29.8 | 18.0 | 7.0 | 12.5 | 29.8
Text-Embed-3-Small | 60.0 | 44.0 | 48.3 | 63.0 | 53.8 | 70.0 | 15.3 | 42.7 | 17.7 | 54.9 | 36.3 | 28.0 | 3.0 | 15.5 | 37.1
Text-Embed-3-Large | 54.0 | 44.0 | 50.3 | 70.0 | 54.6 | 72.4 | 16.2 | 44.3 | 18.2 | 56.3 | 37.3 | 28.0 | 4.0 | 16.0 | 38.0
Qwen3-Emb-4B | 57.0 | 47.0 | 43.3 | 71.4 | 54.7 | 78.0 | 12.2 | 45.1 | 14.8 | 59.2 | 37.0 | 29.0 | 3.0 | 16.0 | 38.2
RAPTOR | 29.0 | 38.0 | 34.3 | 45.8 | 36.8 | 59.4 | 12.3 | 35.9 | 13.4 | 42.3 | 27.9 | 14.0 | 1.0 | 7.5 | 27.0
GraphRAG | 47.0 | 47.0 | 35.0 | 34.4 | 40.9 | 39.8 | 9.8 | 24.8 | 0.4 | 39.4 | 19.9 | 14.0 | 2.0 | 8.0 | 23.4
MemoRAG | 29.0 | 33.0 | 20.0 | 56.0 | 34.5 | 77.0 | 13.1 | 45.1 | 9.2 | 50.7 | 30.0 | 21.0 | 7.0 | 14.0 | 30.9
HippoRAG-v2 | 76.0 | 66.0 | 50.7 | 67.6 | 65.1 | 61.4 | 10.2 | 35.8 | 14.6 | 57.7 | 36.2 | 54.0 | 5.0 | 29.5 | 41.6
Mem0 | 25.0 | 32.0 | 36.0 | 37.5 | 32.6 | 32.4 | 10.0 | 21.2 | 4.8 | 36.6 | 20.7 | 18.0 | 2.0 | 10.0 | 21.1
Cognee | 31.0 | 26.0 | 29.3 | 26.8 | 28.3 | 35.4 | 10.1 | 22.8 | 2.3 | 29.6 | 16.0 | 28.0 | 3.0 | 15.5 | 20.6
Zep | 44.0 | 25.0 | 38.3 | 42.5 | 37.5 | 62.8 | 12.1 | 37.5 | 4.2 | 28.2 | 16.2 | 7.0 | 3.0 | 5.0 | 24.0
Self-RAG | 35.0 | 42.0 | 25.7 | 31.8 | 33.6 | 11.6 | 12.8 | 12.2 | 0.9 | 35.2 | 18.1 | 19.0 | 3.0 | 11.0 | 18.7
MemGPT (Letta) | 41.0 | 38.0 | 32.0 | 26.2 | 34.3 | 67.6 | 14.0 | 40.8 | 2.5 | 42.3 | 22.4 | 28.0 | 3.0 | 15.5 | 28.3
MIRIX | 62.0 | 61.0 | 37.3 | 29.8 | 47.5 | 38.4 | 9.8 | 24.1 | 9.9 | 40.8 | 25.4 | 14.0 | 2.0 | 8.0 | 26.2
MIRIX (4.1-mini) | 73.0 | 75.0 | 51.0 | 53.0 | 63.0 | 61.0 | 10.3 | 35.7 | 18.9 | 62.0 | 40.5 | 20.0 | 3.0 | 11.5 | 37.7
"""


def table() -> dict[str, dict[str, float]]:
    """agent -> column -> percentage, as printed."""
    out: dict[str, dict[str, float]] = {}
    for line in TABLE3.splitlines():
        agent, *cells = [c.strip() for c in line.split(" | ")]
        out[agent] = {c: float(v) for c, v in zip(COLUMNS, cells)}
    return out


AGENTS: tuple[str, ...] = tuple(table())
DEFAULT_SHOWN = ("GPT-4o-mini", "BM25", "Mem0", "MemGPT (Letta)")  # the long-context baseline, RAG, two memory agents


def published(agent: str) -> dict[str, float]:
    """The agent's row on the 0..1 scale; KeyError when Table 3 has no such agent."""
    return {c: round(v / 100, 4) for c, v in table()[agent].items()}
