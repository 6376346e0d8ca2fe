"""Synthetic MemoryAgentBench splits laid out like the hub's repository (`data/<Split>-00000-of-00001.parquet`,
`entity2id.json`), in the schema of the published parquet files, with made-up text (never the real data).

    python benchmarks/mab_data.py OUT                                 # small rows of every main-table source
    python benchmarks/mab_data.py OUT --scale                         # rows of the published sizes (tokens a row)

Every row: `context` (filler sentences with numbered facts, the answers among them), `questions`, `answers` (a list
of accepted golds per question, aliases duplicated as in the hub's files), `metadata` (`source` and the fields the
source has: `qa_pair_ids`, LongMemEval's `question_ids`/`question_types`/`question_dates`, the summaries'
`keypoints`, the rest null, `haystack_sessions` null). Golds per family as the hub's: a phrase (RULER, LongMemEval,
fact consolidation), an event sentence (EventQA), a bare label number (ICL), movie ids as strings (recommendation,
names in `entity2id.json`), a summary (InfBench, one question, key points), "C. <option>" (DetectiveQA). Same
arguments, same bytes. Importable: `write_dataset`, `SCALE_TOKENS`."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

SPLIT_OF = {"ruler_qa1_197K": "Accurate_Retrieval", "ruler_qa2_421K": "Accurate_Retrieval",
            "longmemeval_s*": "Accurate_Retrieval", "eventqa_full": "Accurate_Retrieval",
            **{f"icl_{n}_balance": "Test_Time_Learning" for n in (
                "banking77_5900shot", "clinic150_7050shot", "nlu_8296shot", "trec_coarse_6600shot",
                "trec_fine_6400shot")},
            "recsys_redial_full": "Test_Time_Learning", "infbench_sum_eng_shots2": "Long_Range_Understanding",
            "detective_qa": "Long_Range_Understanding", "factconsolidation_sh_262k": "Conflict_Resolution",
            "factconsolidation_mh_262k": "Conflict_Resolution", "factconsolidation_sh_6k": "Conflict_Resolution"}
MAIN = [s for s in SPLIT_OF if s != "factconsolidation_sh_6k"]
# (rows, questions a row, tokens a row) of the published data (REFERENCE.md 10.1)
SCALE_TOKENS = {"ruler_qa1_197K": (1, 100, 197_000), "ruler_qa2_421K": (1, 100, 421_000),
                "longmemeval_s*": (5, 60, 355_000), "eventqa_full": (5, 100, 534_000),
                **{s: (1, 100, 103_000) for s in SPLIT_OF if s.startswith("icl_")},
                "recsys_redial_full": (1, 200, 1_440_000), "infbench_sum_eng_shots2": (100, 1, 172_000),
                "detective_qa": (10, 7, 124_000), "factconsolidation_sh_262k": (1, 100, 262_000),
                "factconsolidation_mh_262k": (1, 100, 262_000), "factconsolidation_sh_6k": (1, 100, 6_000)}
WORDS = ("river stone lantern orchard quiet harbor meadow copper violet window signal garden winter pocket "
         "thunder candle marble forest ribbon anchor silver valley morning shadow engine basket painter").split()
LME_TYPES = ("single-session-user", "temporal-reasoning", "knowledge-update", "multi-session",
             "single-session-preference", "single-session-assistant")
MOVIES = 60


def _filler(rng: random.Random, n: int) -> list[str]:
    pool = [" ".join(rng.choice(WORDS) for _ in range(11)).capitalize() + "." for _ in range(64)]
    return [pool[rng.randrange(64)] for _ in range(n)]


def _row(source: str, r: int, questions: int, tokens: int, rng: random.Random) -> dict[str, Any]:
    sentences = _filler(rng, max(60, tokens // 13))  # a filler sentence is ~13 tokens
    qs: list[str] = []
    answers: list[list[str]] = []
    meta: dict[str, Any] = {"source": source, "qa_pair_ids": None, "question_ids": None, "question_types": None,
                            "question_dates": None, "previous_events": None, "keypoints": None, "demo": None,
                            "haystack_sessions": None}
    n = questions
    facts: list[str] = []
    if source.startswith("icl_"):
        for k in range(n):
            facts.append(f"Example: the request about item {r}-{k} is label: {k % 7}.")
            qs.append(f"the request about item {r}-{k}")
            answers.append([str(k % 7)])
    elif source.startswith("recsys"):
        for k in range(n):
            a, b = (k * 7) % MOVIES, (k * 11 + 3) % MOVIES
            facts.append(f"User {k} liked Movie Title {a} and Movie Title {b}.")
            qs.append(f"User {k}: I want something like what user {k} liked.")
            answers.append([str(a), str(b)])
    elif source.startswith("infbench"):
        facts = [f"The hero of book {r} travels to the city of Vale {r}.", f"The hero of book {r} finds the key."]
        qs.append("Summarize the book.")
        answers.append([f"The hero of book {r} travels to the city of Vale {r} and finds the key."])
        meta["keypoints"] = [f"The hero travels to the city of Vale {r}.", "The hero finds the key."]
    else:
        for k in range(n):
            value = f"Vale {r} {k}" if not source.startswith("detective") else f"C. Suspect {k}"
            facts.append(f"{k + 1}. The home town of person {r}-{k} is {value}.")
            if source.startswith("factconsolidation"):
                facts.insert(0, f"{k + 1000}. The home town of person {r}-{k} is Old Town {k}.")
            qs.append(f"What is the home town of person {r}-{k}?")
            answers.append([value, value] if source.startswith("ruler") else [value])
        meta["qa_pair_ids"] = [f"{source}-{r}-{k}" for k in range(n)]
        if source.startswith("longmemeval"):
            meta["question_ids"] = [f"q{r}-{k}{'_abs' if k % 10 == 9 else ''}" for k in range(n)]
            meta["question_types"] = [LME_TYPES[k % len(LME_TYPES)] for k in range(n)]
            meta["question_dates"] = ["2023/05/30 (Tue) 10:00"] * n
    step = max(1, len(sentences) // (len(facts) + 1))
    for i, fact in enumerate(facts):
        sentences.insert(min(len(sentences), (i + 1) * step + i), fact)
    return {"context": " ".join(sentences), "questions": qs, "answers": answers, "metadata": meta}


def schema() -> Any:
    import pyarrow as pa

    turn = pa.struct([("role", pa.string()), ("content", pa.string()), ("has_answer", pa.bool_())])
    strings = pa.list_(pa.string())
    meta = pa.struct([("source", pa.string()), ("qa_pair_ids", strings), ("question_ids", strings),
                      ("question_types", strings), ("question_dates", strings), ("previous_events", strings),
                      ("keypoints", strings), ("demo", pa.string()),
                      ("haystack_sessions", pa.list_(pa.list_(pa.list_(turn))))])
    return pa.schema([("context", pa.string()), ("questions", strings), ("answers", pa.list_(strings)),
                      ("metadata", meta)])


def write_dataset(out: Path, sources: list[str] | None = None, rows: int = 1, questions: int = 4,
                  tokens: int = 3000, scale: bool = False, seed: int = 0, row_group_rows: int = 1) -> Path:
    """Write the splits of `sources` (default: the main table's) under `out`; returns `out`. With `scale`, each
    source's published rows, questions and tokens a row (`SCALE_TOKENS`). Rows are written one row group each,
    so a reader can be shown to hold one at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(f"mab:{seed}")
    by_split: dict[str, list[str]] = {}
    for s in sources or MAIN:
        by_split.setdefault(SPLIT_OF[s], []).append(s)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for split, names in by_split.items():
        with pq.ParquetWriter(out / "data" / f"{split}-00000-of-00001.parquet", schema()) as writer:
            for source in names:
                n_rows, n_q, n_tok = SCALE_TOKENS[source] if scale else (rows, questions, tokens)
                for r in range(n_rows):
                    row = _row(source, r, n_q, n_tok, rng)
                    writer.write_table(pa.Table.from_pylist([row], schema=schema()), row_group_size=row_group_rows)
    entities = {f"<http://dbpedia.org/resource/Movie_Title_{i}_(19{i % 90 + 10})>": i for i in range(MOVIES)}
    (out / "entity2id.json").write_text(json.dumps(entities))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=3000)
    args = ap.parse_args()
    write_dataset(args.out, rows=args.rows, questions=args.questions, tokens=args.tokens, scale=args.scale)
    print(args.out)


if __name__ == "__main__":
    main()
