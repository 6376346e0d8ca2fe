"""Synthetic LongMemEval files in the exact schema of the published ones, with made-up text (no real data).

    python benchmarks/longmemeval_data.py s OUT.json      # S-shaped: 500 questions, ~48 sessions, ~115k tokens each
    python benchmarks/longmemeval_data.py m OUT.json      # M-shaped: 500 questions, ~500 sessions each (~2.7 GB)
    python benchmarks/longmemeval_data.py tiny OUT.json   # the few-KB file of tests/data/longmemeval/
    [--seed N] [--questions N] [--sessions N] [--session-tokens N]

A file is a JSON list of questions `{question_id, question_type, question, answer, question_date,
haystack_session_ids, haystack_dates, haystack_sessions, answer_session_ids}`, each with its own haystack of dated
sessions (lists of `{role, content}` turns; the turns that state the answer carry `has_answer: true`), sorted by
date as the published S and M files are. The question types come in the published counts (single-session-user 70,
single-session-assistant 56, single-session-preference 30, temporal-reasoning 133, knowledge-update 78,
multi-session 133), 30 of them abstention questions (`_abs` ids, spread over five types), whose answer explains
why the question cannot be answered. Answers agree with the evidence sessions: a name said in one session, a
recommendation the assistant made, a preference, days between two dated events, a value that changed, a count
over several sessions (an int, as some published answers are).

Filler sessions (a user asking about a topic, the assistant answering at length) come from a seeded pool shared
by all questions, as the published haystacks draw theirs from shared ShareGPT/UltraChat sessions; their JSON is
encoded once and reused, so even the M-shaped file is written in about a minute. Same arguments, same bytes.

Importable: `write_file(path, ...)`, `tiny_questions()`, and `QUESTION_COUNTS`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator

QUESTION_COUNTS = {"single-session-user": 70, "single-session-assistant": 56, "single-session-preference": 30,
                   "temporal-reasoning": 133, "knowledge-update": 78, "multi-session": 133}
ABSTENTION_COUNTS = {"single-session-user": 6, "single-session-assistant": 2, "temporal-reasoning": 8,
                     "knowledge-update": 4, "multi-session": 10}  # 30 in all, none for preference (as published)
CHARS_PER_TOKEN = 5.4  # of this generator's English text, by tiktoken's cl100k_base

TOPICS = ["sourdough baking", "container gardening", "marathon training", "home espresso", "watercolour painting",
          "budget travel in Portugal", "learning Spanish", "bird photography", "indoor climbing", "vegetable stock",
          "restoring old furniture", "beekeeping", "chess openings", "weekly meal planning", "composting",
          "night sky observing", "woodworking joints", "sleep routines", "home networking", "retirement savings",
          "knitting socks", "trail running", "fermenting vegetables", "public speaking", "aquarium care",
          "Python scripting", "houseplant pests", "cycling commutes", "jazz piano", "family history research"]
NOUNS = ["method", "routine", "schedule", "tool", "budget", "recipe", "plan", "habit", "technique", "setup",
         "approach", "checklist", "material", "step", "guide", "option", "mistake", "detail", "balance", "idea"]
ADJECTIVES = ["simple", "reliable", "affordable", "gentle", "thorough", "quick", "practical", "common", "careful",
              "flexible", "steady", "useful", "small", "regular", "clear", "seasonal", "local", "basic", "fresh"]
VERBS = ["helps", "improves", "changes", "supports", "reduces", "affects", "shapes", "protects", "speeds up",
         "slows down", "keeps", "prepares", "balances", "strengthens", "simplifies", "extends", "limits"]
OPENERS = ["In most cases,", "For a beginner,", "Over time,", "As a rule of thumb,", "In practice,", "Usually,",
           "If you have the space,", "On a tight budget,", "For the best results,", "Most people find that"]
USER_ASKS = ["Can you explain how {t} works for someone just starting out?", "What are the most common mistakes in {t}?",
             "I'd like a simple plan for {t}. Where should I begin?", "How much time should I set aside each week for {t}?",
             "What equipment do I really need for {t}?", "Could you compare a few approaches to {t}?",
             "Is {t} worth it if I only have weekends free?", "What should I read first to get better at {t}?"]
FOLLOW_UPS = ["That makes sense. What about the {n}?", "Thanks! How do I know if my {n} is working?",
              "Could you go into more detail on the {a} {n}?", "What would you change for a {a} {n}?",
              "Good to know. Any tips on keeping the {n} {a}?"]

NAMES = ["Luna", "Milo", "Pepper", "Biscuit", "Juniper", "Otis", "Hazel", "Clementine", "Rocket", "Maple", "Ziggy",
         "Nutmeg", "Basil", "Willow", "Pickles", "Socks"]
PETS = ["cat", "dog", "rabbit", "parrot", "tortoise", "hamster", "goldfish", "ferret"]
CITIES = ["Lisbon", "Porto", "Valencia", "Leeds", "Bristol", "Tallinn", "Ghent", "Bologna", "Lyon", "Krakow",
          "Malmo", "Utrecht", "Graz", "Aarhus", "Cork", "Bilbao"]
BOOKS = ["The Salt Road", "A Map of Quiet Rooms", "Winter at Fallow Farm", "The Clockmaker's Daughter",
         "Seven Bridges North", "The Orchard Keeper's Notes", "Lanterns on the Water", "The Last Ferry Home"]
HOBBIES = [("birdwatching", "early mornings by the estuary"), ("rock climbing", "bouldering gyms with short routes"),
           ("pottery", "hand-building rather than the wheel"), ("sea swimming", "cold water in the winter"),
           ("board games", "cooperative games for two players"), ("film photography", "black-and-white street scenes"),
           ("baking", "laminated doughs like croissants"), ("hiking", "long ridge walks with few people")]
EVENTS = [("joined a pottery class", "joining the pottery class"), ("ran my first 10k race", "running my first 10k"),
          ("started volunteering at the food bank", "starting at the food bank"),
          ("bought a second-hand road bike", "buying the road bike"), ("finished painting the kitchen", "painting the kitchen"),
          ("adopted a kitten from the shelter", "adopting the kitten"), ("passed my driving test", "passing my driving test"),
          ("planted the tomato seedlings", "planting the tomatoes")]
ITEMS = [("plants", ["a monstera", "a snake plant", "a fiddle-leaf fig", "two succulents", "a pothos", "a peace lily"]),
         ("kitchen gadgets", ["a stand mixer", "an air fryer", "a milk frother", "a rice cooker", "a mandoline", "a kettle"]),
         ("board games", ["a copy of Azul", "a deck-building game", "a trivia game", "a two-player strategy game",
                          "a cooperative puzzle game", "a party game"])]
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def date_text(when: datetime) -> str:
    """As the published files write dates: 2023/05/30 (Tue) 23:40."""
    return f"{when:%Y/%m/%d} ({WEEKDAYS[when.weekday()]}) {when:%H:%M}"


class Text:
    """Seeded English-looking prose: sentences built from small word lists."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sentence(self, topic: str) -> str:
        r = self.rng
        return (f"{r.choice(OPENERS)} a {r.choice(ADJECTIVES)} {r.choice(NOUNS)} {r.choice(VERBS)} the "
                f"{r.choice(NOUNS)} in {topic}, because the {r.choice(ADJECTIVES)} {r.choice(NOUNS)} "
                f"{r.choice(VERBS)} how {r.choice(['you', 'most people', 'beginners', 'experts'])} "
                f"{r.choice(['start', 'practise', 'plan', 'keep going', 'measure progress'])}.")

    def paragraph(self, topic: str, tokens: int) -> str:
        out: list[str] = []
        size = 0
        while size < tokens * CHARS_PER_TOKEN:
            out.append(self.sentence(topic))
            size += len(out[-1]) + 1
        return " ".join(out)

    def ask(self, topic: str) -> str:
        return self.rng.choice(USER_ASKS).format(t=topic)

    def follow_up(self) -> str:
        return self.rng.choice(FOLLOW_UPS).format(n=self.rng.choice(NOUNS), a=self.rng.choice(ADJECTIVES))

    def session(self, tokens: int, evidence: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """A user-assistant session of about `tokens` tokens; `evidence` puts given turns at given places."""
        r = self.rng
        topic = r.choice(TOPICS)
        exchanges = max(1, min(6, tokens // 350))
        turns: list[dict[str, Any]] = []
        for k in range(exchanges):
            turns.append({"role": "user", "content": self.ask(topic) if k == 0 else self.follow_up()})
            turns.append({"role": "assistant", "content": self.paragraph(topic, max(12, tokens // exchanges - 25))})
        for index, turn in sorted((evidence or {}).items()):
            turns[min(index, len(turns) - 1)] = turn
        return turns


def _said(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content, "has_answer": True}


class Question:
    """One question: its text and answer, and the evidence sessions (turns at their places, and day offsets
    before the question date when the dates matter)."""

    def __init__(self, question: str, answer: str | int, evidence: list[dict[int, dict[str, Any]]],
                 days_before: list[int] | None = None) -> None:
        self.question, self.answer, self.evidence, self.days_before = question, answer, evidence, days_before


def make_question(kind: str, abstention: bool, r: random.Random, asked: datetime, relative_dates: bool = False) -> Question:
    """The question, answer and evidence of a question of `kind` asked on `asked` (the answer agrees with the
    evidence)."""
    if kind == "single-session-user":
        name, pet = r.choice(NAMES), r.choice(PETS)
        said = _said("user", f"I finally adopted a {pet} last weekend, and we decided to call her {name}. Any advice "
                             "for the first few weeks?")
        if abstention:
            other = r.choice([p for p in PETS if p != pet])
            return Question(f"What is the name of my {other}?", f"You did not mention a {other}; you told me about "
                            f"your {pet}, {name}.", [{0: said}])
        return Question(f"What did I name the {pet} I adopted?", name, [{0: said}])
    if kind == "single-session-assistant":
        book = r.choice(BOOKS)
        ask = {"role": "user", "content": "Could you recommend a quiet novel for a long train journey?"}
        said = _said("assistant", f"I would recommend {book}. It is slow-paced, gentle and easy to pick up again "
                                  "after a break, which suits a long journey.")
        if abstention:
            return Question("Which podcast did you recommend for my train journey?", "The information provided is "
                            f"not enough: I recommended a novel, {book}, not a podcast.", [{0: ask, 1: said}])
        return Question("Which novel did you recommend for my train journey?", book, [{0: ask, 1: said}])
    if kind == "single-session-preference":
        hobby, detail = r.choice(HOBBIES)
        said = _said("user", f"Lately I have been spending most of my free time on {hobby}, especially {detail}.")
        return Question("Can you suggest something for me to do this coming weekend?",
                        f"The user would prefer suggestions built around {hobby}, ideally {detail}; generic "
                        "suggestions that ignore this interest are not what they want.", [{0: said}])
    if kind == "temporal-reasoning":
        (first, first_ing), (second, second_ing) = r.sample(EVENTS, 2)
        early, late = sorted(r.sample(range(3, 60), 2), reverse=True)
        when, days = "today", early - late
        if relative_dates:  # the first event happened on the Thursday before its session
            when, days = "last Thursday", days + (((asked - timedelta(days=early)).weekday() - 3) % 7 or 7)
        said = [{0: _said("user", f"I {first} {when}, and I am still thinking about it.")},
                {0: _said("user", f"Quick update: I {second} today!")}]
        if abstention:
            third = r.choice([e for e in EVENTS if e[0] not in (first, second)])[1]
            return Question(f"How many days passed between {first_ing} and {third}?", "The information provided is "
                            f"not enough: you mentioned {first_ing} but never {third}.", said, [early, late])
        return Question(f"How many days passed between {first_ing} and {second_ing}?", f"{days} days",
                        said, [early, late])
    if kind == "knowledge-update":
        old, new = r.sample(CITIES, 2)
        said = [{0: _said("user", f"I have been living in {old} for a few years now and I love the food scene.")},
                {0: _said("user", f"Big news: I just moved to {new} for a new job, so I need to find a gym.")}]
        if abstention:
            return Question("Which neighbourhood of my new city do I live in?", f"You did not mention the "
                            f"neighbourhood; you only said you moved to {new}.", said)
        return Question("Which city do I live in now?", new, said)
    if kind == "multi-session":
        category, things = r.choice(ITEMS)
        count = r.randint(2, 4)
        said = [{0: _said("user", f"I just bought {thing} for the flat; where should I put it?")}
                for thing in r.sample(things, count)]
        if abstention:
            return Question(f"How much did I spend on {category} in total?", "The information provided is not "
                            f"enough: you said which {category} you bought but never what they cost.", said)
        return Question(f"How many {category} have I bought recently?", count, said)
    raise ValueError(kind)


def _kinds(counts: dict[str, int], abstentions: dict[str, int], r: random.Random) -> list[tuple[str, bool]]:
    kinds = [(kind, k < abstentions.get(kind, 0)) for kind, n in counts.items() for k in range(n)]
    r.shuffle(kinds)
    return kinds


def _hex(r: random.Random, n: int = 8) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _filler_pool(size: int, tokens: int, seed: int) -> list[tuple[str, str]]:
    """(session id, the session's JSON) of `size` seeded filler sessions."""
    r = random.Random(f"filler-{seed}")
    text = Text(r)
    pool = []
    for k in range(size):
        sid = f"sharegpt_{_hex(r, 7)}_{k % 5}" if k % 2 else f"ultrachat_{r.randint(10_000, 999_999)}"
        pool.append((sid, json.dumps(text.session(max(40, int(tokens * r.uniform(0.6, 1.4)))))))
    return pool


def _question_json(qid: str, kind: str, q: Question, question_date: datetime, sessions: list[tuple[str, datetime, str]],
                   evidence_ids: list[str]) -> str:
    head = {"question_id": qid, "question_type": kind, "question": q.question, "answer": q.answer,
            "question_date": date_text(question_date),
            "haystack_session_ids": [s[0] for s in sessions], "haystack_dates": [date_text(s[1]) for s in sessions]}
    body = json.dumps(head)[:-1]
    return (f'{body}, "haystack_sessions": [{", ".join(s[2] for s in sessions)}], '
            f'"answer_session_ids": {json.dumps(evidence_ids)}}}')


def questions_json(questions: int = 500, sessions: int = 48, session_tokens: int = 2400, seed: int = 0,
                   counts: dict[str, int] | None = None, abstentions: dict[str, int] | None = None,
                   relative_dates: bool = False, sort_sessions: bool = True) -> Iterator[str]:
    """The JSON text of each question of a file, one after the other."""
    r = random.Random(seed)
    counts = counts or _scaled(QUESTION_COUNTS, questions)
    abstentions = ABSTENTION_COUNTS if abstentions is None else abstentions
    pool = _filler_pool(max(sessions * 4, 1000), session_tokens, seed)
    text = Text(r)
    for index, (kind, abstention) in enumerate(_kinds(counts, abstentions, r)):
        question_date = datetime(2023, r.randint(3, 6), r.randint(1, 28), r.randint(8, 23), r.randint(0, 59))
        q = make_question(kind, abstention, r, question_date, relative_dates=relative_dates)
        qid = f"{_hex(r)}_abs" if abstention else (f"gpt4_{_hex(r)}" if kind == "temporal-reasoning" else _hex(r))
        span = max(q.days_before or [1]) + r.randint(5, 40)
        fillers = r.sample(pool, max(0, sessions - len(q.evidence)))
        dated: list[tuple[str, datetime, str]] = []
        for sid, session in fillers:
            dated.append((sid, question_date - timedelta(days=r.uniform(0.2, span)), session))
        evidence_ids = []
        before = q.days_before or sorted(r.sample(range(1, span + 1), len(q.evidence)), reverse=True)  # in order told
        for k, turns in enumerate(q.evidence):
            sid = f"answer_{qid.removesuffix('_abs')}_{k + 1}"
            when = (question_date - timedelta(days=before[k])).replace(hour=r.randint(8, 22), minute=r.randint(0, 59))
            dated.append((sid, when, json.dumps(text.session(max(40, session_tokens), turns))))
            evidence_ids.append(sid)
        if sort_sessions:
            dated.sort(key=lambda s: s[1])
        yield _question_json(qid, kind, q, question_date, dated, evidence_ids)


def _scaled(counts: dict[str, int], total: int) -> dict[str, int]:
    """The published type counts scaled to `total` questions (at least one of each type)."""
    whole = sum(counts.values())
    scaled = {k: max(1, round(v * total / whole)) for k, v in counts.items()}
    biggest = max(scaled, key=lambda k: scaled[k])
    scaled[biggest] += total - sum(scaled.values())
    return scaled


def write_file(path: Path, questions: int = 500, sessions: int = 48, session_tokens: int = 2400, seed: int = 0,
               **kwargs: Any) -> int:
    """Write a synthetic LongMemEval file; its size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for k, item in enumerate(questions_json(questions, sessions, session_tokens, seed, **kwargs)):
            out.write(("" if k == 0 else ", ") + item)
        out.write("]")
    return path.stat().st_size


def tiny_questions() -> list[dict[str, Any]]:
    """The questions of tests/data/longmemeval/tiny.json: the six types, an abstention question of each of
    single-session-user, temporal-reasoning and multi-session, an int answer, a relative date ("last Thursday"),
    short sessions, haystacks left in the order given (as the oracle file is) rather than sorted."""
    counts = {kind: 1 for kind in QUESTION_COUNTS}
    counts.update({"single-session-user": 2, "temporal-reasoning": 2, "multi-session": 2})
    abstentions = {"single-session-user": 1, "temporal-reasoning": 1, "multi-session": 1}
    items = questions_json(sessions=3, session_tokens=30, seed=7, counts=counts, abstentions=abstentions,
                           relative_dates=True, sort_sessions=False)
    return [json.loads(item) for item in items]


def tiny_json() -> str:
    """The text of tests/data/longmemeval/tiny.json: one question a line."""
    return "[\n" + ",\n".join(json.dumps(q) for q in tiny_questions()) + "\n]\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=["s", "m", "tiny"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--session-tokens", type=int, help="default 2400 (S: ~115k tokens a question), 2000 (M: ~2.7 GB)")
    args = parser.parse_args()
    if args.shape == "tiny":
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(tiny_json(), encoding="utf-8")
        size = args.out.stat().st_size
    else:
        sessions = args.sessions or (48 if args.shape == "s" else 500)
        tokens = args.session_tokens or (2400 if args.shape == "s" else 2000)
        size = write_file(args.out, args.questions, sessions, tokens, args.seed)
    print(f"{args.out}: {size:,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
