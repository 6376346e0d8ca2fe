"""LoCoMo's question protocol measured: the `retrieval` baseline (and `oracle`, `null`) on a generated file of
LoCoMo's shape, its questions asked independently (the reference protocol, the default) and in sequence
(`args: {questions: sequential}`, the earlier protocol), score per category. Asked in sequence, `retrieval` answers
adversarial questions by saying back an earlier question's "Not mentioned in the conversation" hint; asked
independently, it cannot.

The file is generated (never the real data, CC BY-NC): `--conversations` conversations of `--sessions` dated
sessions between two speakers, each speaker telling facts about themselves (one: pets, cities, jobs; the other: hobbies, trips),
and about 200 questions per conversation in the published file's category mix (multi-hop 14%, temporal 16%,
open-domain 5%, single-hop 42%, adversarial 22%); an adversarial question asks about the other speaker what only
one said (its tempting answer is the fact of the one who said it).

Run: `python benchmarks/locomo_protocol.py [--conversations 10] [--sessions 20]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from ltm_harness._api import run_async
from ltm_harness.testing import make_config

NAMES = ["Ada", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kemal", "Lena",
         "Mateo", "Nora", "Omar", "Petra", "Quinn", "Rosa", "Sami", "Tove"]
FACTS = {
    "pet": ["a cat named Pepper", "a dog named Biscuit", "a parrot named Kiwi", "a rabbit named Clover",
            "a turtle named Sheldon", "a hamster named Nibbles"],
    "city": ["Lisbon", "Oslo", "Kyoto", "Valparaiso", "Tbilisi", "Montreal", "Nairobi", "Porto"],
    "job": ["a nurse", "a carpenter", "a pastry chef", "a museum guide", "a bus driver", "a violin teacher"],
    "hobby": ["pottery", "rock climbing", "birdwatching", "salsa dancing", "chess", "beekeeping", "knitting"],
    "trip": ["Iceland", "Morocco", "Patagonia", "Vietnam", "Sicily", "Mongolia", "Scotland"],
}
SAY = {
    "pet": "My new pet is {v}.",
    "city": "My new home city is {v}.",
    "job": "My new job: I work as {v}.",
    "hobby": "My new hobby is {v}.",
    "trip": "My next trip is to {v}.",
}
ASK = {
    "pet": "What is {n}'s new pet?",
    "city": "What is {n}'s new home city?",
    "job": "What is {n}'s new job?",
    "hobby": "What is {n}'s new hobby?",
    "trip": "Where is {n}'s next trip to?",
}
KINDS = (("pet", "city", "job"), ("hobby", "trip"))  # what each speaker tells about (so the other never does)
CHAT = ["That sounds lovely, tell me more!", "How was your week otherwise?", "Ha, I can picture it.",
        "I had a quiet week, mostly reading.", "The weather has been strange lately.", "Work kept me busy again."]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def conversation(k: int, sessions: int, rng: random.Random) -> dict[str, Any]:
    a, b = NAMES[(2 * k) % len(NAMES)], NAMES[(2 * k + 1) % len(NAMES)]
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    told: list[tuple[str, str, str, str, str]] = []  # (speaker, kind, value, dia_id, date)
    chosen: dict[tuple[str, str], str] = {}
    for s in range(1, sessions + 1):
        date = f"{rng.randint(1, 12)}:{rng.randint(10, 59)} {rng.choice(['am', 'pm'])} on {rng.randint(1, 28)} " \
               f"{MONTHS[(s - 1) % 12]}, {2022 + (s - 1) // 12}"
        conv[f"session_{s}_date_time"] = date
        turns = []
        for t in range(1, rng.randint(14, 22) + 1):
            speaker = a if t % 2 else b
            if rng.random() < 0.35:
                kind = rng.choice(KINDS[0] if speaker == a else KINDS[1])
                value = chosen.setdefault((speaker, kind), rng.choice(FACTS[kind]))  # one value each, said again
                text = SAY[kind].format(v=value)
                told.append((speaker, kind, value, f"D{s}:{t}", date))
            else:
                text = rng.choice(CHAT)
            turns.append({"speaker": speaker, "dia_id": f"D{s}:{t}", "text": text})
        conv[f"session_{s}"] = turns
    qa = []
    for _ in range(200):
        speaker, kind, value, dia, date = rng.choice(told)
        other = b if speaker == a else a
        roll = rng.random()
        if roll < 0.22:  # the other speaker never told of this kind
            qa.append({"question": ASK[kind].format(n=other), "adversarial_answer": value, "evidence": [dia],
                       "category": 5})
        elif roll < 0.38:
            qa.append({"question": f"When did {speaker} mention {value}?", "answer": date.split(" on ")[1],
                       "evidence": [dia], "category": 2})
        elif roll < 0.52:
            second = rng.choice([f for f in told if f[0] == speaker])
            qa.append({"question": f"What did {speaker} tell about {kind} and {second[1]}?",
                       "answer": f"{value}, {second[2]}", "evidence": [dia, second[3]], "category": 1})
        elif roll < 0.57:
            qa.append({"question": f"Would {speaker} enjoy a gift related to {value}?", "answer": f"yes; {value}",
                       "evidence": [dia], "category": 3})
        else:
            qa.append({"question": ASK[kind].format(n=speaker), "answer": value, "evidence": [dia], "category": 4})
    return {"sample_id": f"gen-{k + 1}", "conversation": conv, "qa": qa}


async def play(data: Path, questions: str, agents: list[str], results: Path) -> dict[str, dict[str, float]]:
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(data), "questions": questions}}], span=4000,
                      examples=len(json.loads(data.read_text())))
    out = await run_async(cfg, agents, results=results)
    rows = {}
    for agent in out.summary.agents:
        dataset = agent.datasets[0]
        rows[agent.agent] = {"overall": dataset.score, **{b.value: b.score for b in dataset.breakdown or []}}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    samples = [conversation(k, args.sessions, rng) for k in range(args.conversations)]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "locomo-shaped.json"
        data.write_text(json.dumps(samples))
        questions = sum(len(s["qa"]) for s in samples)
        turns = sum(len(v) for s in samples for k, v in s["conversation"].items()
                    if k.startswith("session_") and not k.endswith("date_time"))
        print(f"generated: {len(samples)} conversations, {turns} history turns, {questions} questions")
        columns = ["overall", "multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]
        print(f"{'protocol':<12} {'agent':<10} " + " ".join(f"{c:>11}" for c in columns) + "   wall")
        for protocol in ("sequential", "independent"):
            start = time.perf_counter()
            rows = asyncio.run(play(data, protocol, ["oracle", "null", "retrieval"], Path(tmp) / protocol))
            wall = time.perf_counter() - start
            for agent, row in rows.items():
                print(f"{protocol:<12} {agent:<10} " + " ".join(f"{row.get(c, float('nan')):>11.3f}" for c in columns)
                      + f"   {wall:.1f} s")


if __name__ == "__main__":
    main()
