"""A synthetic LoCoMo file the size and shape of the published `data/locomo10.json`, every line made up (no real data).

    python benchmarks/locomo_data.py OUT.json [--seed N]

The published file (CC BY-NC 4.0, fetched on first use, never shipped) holds 10 conversations: 272 dated sessions,
5,882 turns and 1,986 questions (multi-hop 282, temporal 321, open-domain 96, single-hop 841, adversarial 446),
2.8 MB with its summaries and observations. This file has the same counts per conversation (`TURNS`, `QUESTIONS`,
`SESSIONS`), turns of about the same length (about 20 words, a photo with its caption on about one turn in eight),
questions in the same category mix, and summaries of about the same size, so a run on it does the same work as a
run on the real file. Same seed, same bytes. Importable: `write_file(path, seed=0)` returns its counts.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

# per conversation, in the published file's order (conv-26, conv-30, conv-41 ... conv-50)
TURNS = [419, 369, 663, 629, 680, 675, 689, 681, 509, 568]  # 5,882 in all
QUESTIONS = [199, 105, 193, 260, 242, 158, 190, 239, 196, 204]  # 1,986 in all
SESSIONS = [19, 19, 32, 29, 29, 28, 31, 30, 25, 30]  # 272 in all
CATEGORIES = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}  # per category, over the whole file
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
NAMES = ["Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Joanna", "Nate", "Tim", "John", "Audrey", "Andrew",
         "James", "John", "Deborah", "Jolene", "Evan", "Sam", "Calvin", "Dave"]
TOPICS = ["a pottery class", "the charity run", "my new puppy", "the camping trip", "a job interview",
          "the art show", "my sister's wedding", "a painting of a sunset", "the support group", "a road trip",
          "the bakery I opened", "a concert last weekend", "the garden", "my first marathon", "a book club",
          "the dance studio", "a volunteering shift", "my grandmother's recipe", "the beach", "a video game tournament"]
FEELINGS = ["really proud", "so excited", "a bit nervous", "grateful", "exhausted but happy", "inspired",
            "pretty relaxed", "overwhelmed", "thrilled", "calm"]
TAILS = ["It reminded me how much I love spending time with the people who matter.",
         "I can't wait to tell you more about it next time we talk.", "What have you been up to lately?",
         "Thanks for always being so supportive, it means a lot to me.", "It was one of those days I won't forget.",
         "Have you ever tried something like that?", "I took a few photos, let me show you one.",
         "Honestly it made the whole week better.", "I think I'll do it again next month.",
         "How are the kids doing these days?"]
CAPTIONS = ["a photo of a dog sitting on a couch", "a photo of a painting of a sunset over a lake",
            "a photo of a group of people running a race", "a photo of a cake with candles on a table",
            "a photo of a tent in a forest", "a photo of a bowl of pottery on a table"]
OBSERVE = ("{s} mentioned {t} and felt {f}; {o} asked about it and shared a story of their own about {t2}, "
           "saying they felt {f2}.")


def _line(rng: random.Random, other: str) -> str:
    t, f = rng.choice(TOPICS), rng.choice(FEELINGS)
    openers = [f"Hey {other}! I wanted to tell you about {t}, I'm {f} about it.",
               f"I finally did {t} last week and I'm {f}.", f"Guess what, {t} happened and I'm {f}!",
               f"Thinking about {t} made me {f}.", f"Wow, {other}, that sounds amazing."]
    return " ".join([rng.choice(openers), *rng.sample(TAILS, rng.choice([0, 1, 1, 2]))])


def _sample(k: int, rng: random.Random, categories: list[int]) -> dict[str, Any]:
    a, b = NAMES[2 * k], NAMES[2 * k + 1]
    conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    sessions, turns = SESSIONS[k], TURNS[k]
    sizes = [turns // sessions + (1 if s < turns % sessions else 0) for s in range(sessions)]
    ids: list[str] = []
    observation: dict[str, Any] = {}
    summary: dict[str, str] = {}
    events: dict[str, Any] = {}
    for s in range(1, sessions + 1):
        year, month = 2022 + (s * 2) // 12, MONTHS[(s * 2 + 3) % 12]
        conversation[f"session_{s}_date_time"] = (f"{rng.randint(1, 12)}:{rng.randint(0, 59):02d} "
                                                  f"{rng.choice(['am', 'pm'])} on {rng.randint(1, 28)} {month}, {year}")
        lines = []
        for t in range(1, sizes[s - 1] + 1):
            speaker, other = (a, b) if t % 2 else (b, a)
            turn: dict[str, Any] = {"speaker": speaker, "dia_id": f"D{s}:{t}", "text": _line(rng, other)}
            if rng.random() < 0.125:
                turn.update(img_url=[f"https://example.invalid/{k}/{s}/{t}.jpg"], blip_caption=rng.choice(CAPTIONS),
                            query=rng.choice(TOPICS))
            lines.append(turn)
            ids.append(turn["dia_id"])
        conversation[f"session_{s}"] = lines
        said = [OBSERVE.format(s=who, o=a if who == b else b, t=rng.choice(TOPICS), f=rng.choice(FEELINGS),
                               t2=rng.choice(TOPICS), f2=rng.choice(FEELINGS)) for who in (a, b) * 6]
        observation[f"session_{s}_observation"] = {a: [[x, ids[-1]] for x in said[::2]],
                                                   b: [[x, ids[-1]] for x in said[1::2]]}
        summary[f"session_{s}_summary"] = " ".join(said[:6])
        events[f"events_session_{s}"] = {a: said[:2], b: said[2:4], "date": conversation[f"session_{s}_date_time"]}
    qa: list[dict[str, Any]] = []
    for category in categories:
        evidence = rng.sample(ids, 2 if category == 1 else 1)
        topic = rng.choice(TOPICS)
        if category == 5:
            qa.append({"question": f"What did {b} say about {topic}?", "evidence": evidence, "category": 5,
                       "adversarial_answer": f"{a} was {rng.choice(FEELINGS)} about it"})
            continue
        answer = {1: f"{topic}, {rng.choice(TOPICS)}", 2: f"{rng.randint(1, 28)} {rng.choice(MONTHS)} 2023",
                  3: f"Likely yes; {a} enjoys {topic}", 4: rng.choice(FEELINGS)}[category]
        asked = {1: f"What activities has {a} done?", 2: f"When did {a} go to {topic}?",
                 3: f"Would {a} enjoy {topic}?", 4: f"How did {a} feel about {topic}?"}[category]
        qa.append({"question": asked, "answer": answer, "evidence": evidence, "category": category})
    return {"sample_id": f"conv-{k + 1}", "conversation": conversation, "qa": qa, "event_summary": events,
            "observation": observation, "session_summary": summary}


def write_file(path: Path, seed: int = 0) -> dict[str, int]:
    """Write the file; its counts (conversations, sessions, turns, questions, bytes)."""
    rng = random.Random(seed)
    pool = [c for c, n in CATEGORIES.items() for _ in range(n)]
    rng.shuffle(pool)
    samples, start = [], 0
    for k, n in enumerate(QUESTIONS):
        samples.append(_sample(k, rng, pool[start:start + n]))
        start += n
    text = json.dumps(samples, indent=1)
    path.write_text(text, encoding="utf-8")
    return {"conversations": len(samples), "sessions": sum(SESSIONS), "turns": sum(TURNS),
            "questions": sum(QUESTIONS), "bytes": len(text.encode())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(write_file(args.out, args.seed))


if __name__ == "__main__":
    main()
