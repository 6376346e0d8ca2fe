"""The statistics on two agents, on a LoCoMo-shaped file made up here (no real data): each agent's F1 with its 95%
intervals by question and by conversation, and the paired difference with its intervals and p-value.

    python benchmarks/locomo_stats.py [--conversations 10] [--questions 40] [--seed 0] [-a retrieval -a recent:300]

The file has the shape of LoCoMo's data/locomo10.json (samples with `conversation` sessions of dated turns and
`qa` with evidence and categories), every line invented: each conversation's speakers state facts about
themselves (a pet's name, a city, a hobby, a date), some later changed, and the questions ask for them
(single-hop), for two of them at once (multi-hop), for a date (temporal), or for something never said
(adversarial). Same arguments, same file. Importable: `write_file(path, ...)`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

NAMES = ["Ada", "Bruno", "Chen", "Dara", "Eli", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lea", "Milo", "Nia"]
THINGS = {"pet": ["Pepper", "Socks", "Biscuit", "Luna", "Otis", "Mango"],
          "city": ["Porto", "Lyon", "Graz", "Tartu", "Bergen", "Malaga"],
          "hobby": ["pottery", "climbing", "chess", "rowing", "baking", "birdwatching"],
          "instrument": ["cello", "banjo", "flute", "drums", "harp", "piano"],
          "dish": ["paella", "ramen", "goulash", "pierogi", "falafel", "risotto"]}
FILLER = ["How was your week?", "Busy, but good.", "That sounds lovely!", "I have been meaning to call you.",
          "Work has been hectic lately.", "Let's catch up soon.", "Same here, honestly.", "Tell me more!"]


def _date(d: datetime) -> str:
    return d.strftime("%-I:%M %p on %-d %B, %Y").lower().replace(" on ", " on ", 1).replace("am", "am").replace(
        "pm", "pm")


def sample(k: int, questions: int, rnd: random.Random) -> dict[str, Any]:
    a, b = rnd.sample(NAMES, 2)
    when = datetime(2023, 1, 5, 10, 0) + timedelta(days=rnd.randint(0, 60))
    conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    facts: list[tuple[str, str, str, str, datetime]] = []  # speaker, kind, value, dia_id, date
    sessions = max(4, questions // 4)
    for s in range(1, sessions + 1):
        turns = []
        for t in range(1, 9):
            speaker = a if t % 2 else b
            if t in (3, 6) and rnd.random() < 0.9:
                kind = rnd.choice(sorted(THINGS))
                value = rnd.choice(THINGS[kind])
                text = f"By the way, my {kind} these days is {value}."
                facts.append((speaker, kind, value, f"D{s}:{t}", when))
            else:
                text = rnd.choice(FILLER)
            turns.append({"speaker": speaker, "dia_id": f"D{s}:{t}", "text": text})
        conversation[f"session_{s}"] = turns
        conversation[f"session_{s}_date_time"] = _date(when)
        when += timedelta(days=rnd.randint(3, 20), hours=rnd.randint(0, 5))
    latest: dict[tuple[str, str], tuple[str, str, datetime]] = {}
    for speaker, kind, value, dia, date in facts:
        latest[(speaker, kind)] = (value, dia, date)
    keys = sorted(latest)
    qa: list[dict[str, Any]] = []
    for _ in range(questions):
        roll = rnd.random()
        if roll < 0.2:  # adversarial: a kind never said by this speaker
            speaker = rnd.choice([a, b])
            missing = [kind for kind in sorted(THINGS) if (speaker, kind) not in latest]
            if missing:
                qa.append({"question": f"What is {speaker}'s favourite {rnd.choice(missing)}?", "evidence": [],
                           "category": 5, "adversarial_answer": rnd.choice(THINGS["dish"])})
                continue
        (speaker, kind) = rnd.choice(keys)
        value, dia, date = latest[(speaker, kind)]
        if roll < 0.35:
            qa.append({"question": f"When did {speaker} mention their {kind} {value}?", "answer": date.strftime("%-d %B %Y"),
                       "evidence": [dia], "category": 2})
        elif roll < 0.5 and len(keys) > 1:
            other = rnd.choice([x for x in keys if x != (speaker, kind)])
            value2, dia2, _ = latest[other]
            qa.append({"question": f"What are {speaker}'s {kind} and {other[0]}'s {other[1]}?",
                       "answer": f"{value}, {value2}", "evidence": [dia, dia2], "category": 1})
        else:
            qa.append({"question": f"What is {speaker}'s {kind} these days?", "answer": value, "evidence": [dia],
                       "category": 4})
    return {"sample_id": f"conv-{k}", "conversation": conversation, "qa": qa, "event_summary": {},
            "observation": {}, "session_summary": {}}


def write_file(path: Path, conversations: int = 10, questions: int = 40, seed: int = 0) -> Path:
    rnd = random.Random(seed)
    path.write_text(json.dumps([sample(k, questions, rnd) for k in range(conversations)], indent=1))
    return path


async def measure(data: Path, agents: list[str], conversations: int, results: Path) -> None:
    from ltm_harness._api import run_async
    from ltm_harness._stats import Scored, compute_statistics

    cfg = {"config": {"run_name": "locomo-stats", "seed": 0},
           "datasets": {"args": {"memory_span": 4000, "dataset_examples": conversations},
                        "datasets": [{"name": "locomo", "args": {"mode": "reference", "data_file": str(data)}}]}}
    out = await run_async(cfg, agents, results=results)
    stats = compute_statistics([Scored(a, out.path.name, a, out.results(a)) for a in agents])
    for r in stats.intervals:
        what = "all" if r.by == "" else r.value
        conv = "" if r.conversation_low is None else f"  by conversation [{r.conversation_low:.3f}, {r.conversation_high:.3f}]"
        mean = "-" if r.mean is None else f"{r.mean:.3f}"
        print(f"{r.label:>12} {what:>12}: {mean} over {r.questions} questions of {r.conversations} conversations; "
              f"95% by question [{r.question_low or 0:.3f}, {r.question_high or 0:.3f}]{conv}")
    for p in stats.pairs:
        what = "all" if p.by == "" else p.value
        conv = "" if p.conversation_low is None else f", by conversation [{p.conversation_low:+.3f}, {p.conversation_high:+.3f}]"
        diff = "-" if p.difference is None else f"{p.difference:+.3f}"
        print(f"{p.a} - {p.b} {what}: {diff} on {p.questions} questions; 95% by question "
              f"[{p.question_low or 0:+.3f}, {p.question_high or 0:+.3f}]{conv}; {p.test} p = {p.p_value}; "
              f"wins/losses/ties {p.wins}/{p.losses}/{p.ties}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-a", "--agent", action="append", dest="agents")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = write_file(Path(tmp) / "locomo-shaped.json", args.conversations, args.questions, args.seed)
        asyncio.run(measure(data, args.agents or ["retrieval", "recent:300"], args.conversations, Path(tmp) / "results"))


if __name__ == "__main__":
    main()
