"""Synthetic BEAM chats laid out like the repository (`chats/<scale>/<n>/...`), in the exact shapes of the published
files, with made-up text (no real data).

    python benchmarks/beam_data.py OUT --scale 100K --chats 20          # small chats of the 100K shape
    python benchmarks/beam_data.py OUT --scale 10M --chats 10 --message-tokens 500 --turns 1000   # ~10M tokens a chat

A chat folder holds `chat.json` (a list of batches `{batch_number, time_anchor: null, turns}`, a turn a list of
messages `{role, id, content}` opening with a user `main_question` (with `index`) and alternating user/assistant;
the first message of a batch carries `time_anchor` "March-15-2024"), for some chats `chat_trunecated.json` (a prefix
cut at a turn boundary), and `probing_questions/probing_questions.json`: the ten abilities, 2 questions each, their
`source_chat_ids` in every shape the published files use (a list, lists of lists, two-part objects, one half empty,
missing, empty, a stray "--", duplicates). A 10M chat is ten sub-plans `plan-0/chat.json ... plan-9/chat.json`
(ids restart at 0 in each; the questions cite the global ids of the assembled chat), optionally also combined into
`chat_trunecated.json` as the reference combines them (`--combined`).

Facts the questions ask about are said in user messages spread over the chat; filler text comes from a seeded
pool encoded once, so a 10M-token chat is written in seconds. Same arguments, same bytes. Importable:
`write_chat`, `write_dataset`.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ABILITIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
             "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
             "summarization", "temporal_reasoning")
_WORDS = ("garden budget river lantern copper harbor meadow pixel signal orchard canvas ledger marble velvet "
          "compass quartz timber saddle beacon thistle ember falcon glacier prism").split()
_THINGS = ["access", "deploy", "backup", "review", "release", "storage", "billing", "routing", "cache", "audit",
           "sprint", "budget", "login", "search", "export", "import", "theme", "report", "alert", "upload"]
_NAMES = ["Kestrel", "Amberfall", "Noor", "Tessary", "Glimmerton", "Hollowmere", "Orvane", "Seravel", "Ulmgard",
          "Brannock", "Ysmere", "Kaldrun", "Maltessa", "Drunwick", "Velorath", "Quorvia", "Pellucid", "Thistle",
          "Marrow", "Cinder"]


def _filler(rng: random.Random, words: int) -> str:
    sentences, n = [], 0
    while n < words:
        k = rng.randint(8, 16)
        sentences.append(" ".join(rng.choice(_WORDS) for _ in range(k)).capitalize() + ".")
        n += k
    return " ".join(sentences)


def _facts(seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(f"beam-facts:{seed}")
    return [(_THINGS[k], rng.choice(_NAMES), f"{rng.choice(_WORDS)}-{rng.randint(10, 99)}") for k in range(20)]


def fact_sentence(thing: str, name: str, value: str) -> str:
    return f"The {thing} code for project {name} is {value}."


def _batches(n_batches: int, turns: int, message_words: int, rng: random.Random, start: datetime,
             said: dict[int, str], first_id: int = 0, pool_size: int = 64) -> list[dict[str, Any]]:
    """Batches of `turns` turns (4 messages each); message ids from 0 (local), `said` (global id -> sentence)
    written into the user messages it names."""
    pool = [_filler(rng, message_words) for _ in range(pool_size)]
    out, mid = [], 0
    for b in range(n_batches):
        batch_turns = []
        for t in range(turns):
            turn = []
            for m, (role, kind) in enumerate((("user", "main_question"), ("assistant", None),
                                             ("user", "followup_question"), ("assistant", None))):
                content = f"Note {first_id + mid}: {pool[(mid * 7 + b) % pool_size]}"  # no two messages alike
                fact = said.get(first_id + mid)
                if fact:
                    content = f"{fact} {content}"
                message: dict[str, Any] = {"role": role, "id": mid}
                if t == 0 and m == 0:
                    message["time_anchor"] = (start + timedelta(days=7 * b)).strftime("%B-%d-%Y")
                if kind == "main_question":
                    message["index"] = f"{b + 1},{t + 1}"
                if kind:
                    message["question_type"] = kind
                message["content"] = content
                turn.append(message)
                mid += 1
            batch_turns.append(turn)
        out.append({"batch_number": b + 1, "time_anchor": None, "turns": batch_turns})
    return out


def _user_ids(total: int, k: int, seed: int) -> list[int]:
    """k user-message ids (even) spread over 0..total-1, increasing."""
    step = max(2, (total // (k + 1)) // 2 * 2)
    out = [(i + 1) * step for i in range(k)]
    if out[-1] > total - 2:
        raise ValueError(f"a chat of {total} messages is too short for {k} facts")
    return out


def probing(facts: list[tuple[str, str, str]], ids: list[int], quirks: bool, plan_refs: bool = False) -> dict:
    """The probing file: 2 questions per ability; `ids` the evidence ids (one per fact, in chat order)."""
    def fact(k: int) -> str:
        return fact_sentence(*facts[k])

    def ask(k: int) -> str:
        thing, name, _ = facts[k]
        return f"What is the {thing} code for project {name}?"

    def item(k: int) -> str:
        thing, name, value = facts[k]
        return f"LLM response should state: the {thing} code for project {name} is {value}"

    out: dict[str, list[dict[str, Any]]] = {a: [] for a in ABILITIES}
    for j in range(2):
        out["abstention"].append({
            "question": f"What did I decide about the {_WORDS[j]} {_WORDS[j + 3]} plan?",
            "ideal_response": f"Based on the provided chat, there is no information related to the {_WORDS[j]} plan.",
            "difficulty": "medium", "abstention_type": "missing_detail", "why_unanswerable": "never said",
            "plan_reference": "Batch 1, Bullet 2",
            "rubric": [f"LLM response should state: there is no information related to the {_WORDS[j]} plan"]})
        a, b = 2 * j, 2 * j + 1
        out["contradiction_resolution"].append({
            "question": ask(a), "ideal_answer": f"You said two things: {fact(a)} and {fact(b)}",
            "difficulty": "clear", "contradiction_type": "never_statement_violation",
            "source_chat_ids": {"first_statement": [ids[a]], "second_statement": [] if quirks and j else [ids[b]]},
            "rubric": [item(a), item(b)]})
        events = [4 + 3 * j + e for e in range(3)]
        raw: Any = [[ids[events[0]]], [ids[events[1]], ids[events[1]] + 1], [ids[events[2]]]] if j == 0 \
            else [ids[e] for e in events] + (["--"] if quirks else [])
        out["event_ordering"].append({
            "question": "Can you list the order in which I brought up these codes? Mention ONLY and ONLY three items.",
            "answer": " then ".join(fact(e) for e in events), "difficulty": "medium", "ordering_type": "mention",
            "total_mentions": 3, "ordering_tested": [f"{i + 1}st" for i in range(3)],
            "source_chat_ids": raw, "rubric": [fact(e) for e in events]})
        k = 10 + j
        out["information_extraction"].append({
            "question": ask(k), "answer": fact(k), "difficulty": "easy", "question_type": "fact",
            "conversation_reference": f"chat_id: {ids[k]}", "key_facts_tested": ["code"],
            "source_chat_ids": [ids[k]], "rubric": [item(k)]})
        out["instruction_following"].append({
            "question": f"Show me the {facts[12 + j][0]} code for project {facts[12 + j][1]}.",
            "instruction_being_tested": "Always say the project's name.", "expected_compliance": "names it",
            "compliance_indicators": ["name"], "non_compliance_signs": ["no name"], "instruction_type": "format",
            "source_chat_ids": [ids[12 + j]], "rubric": [f"LLM response should mention: project {facts[12 + j][1]}"]})
        k = 14 + j
        update: dict[str, Any] = {
            "question": ask(k), "answer": fact(k), "difficulty": "easy", "update_type": "value",
            "tests_retention_of": "code", "potential_confusion": "old code", "conversation_references": [],
            "source_chat_ids": {"original_info": [ids[k - 14]], "updated_info": [ids[k]]}, "rubric": [item(k)]}
        if quirks and j:
            del update["source_chat_ids"]
        out["knowledge_update"].append(update)
        out["multi_session_reasoning"].append({
            "question": f"Which two codes did I give for projects {facts[16][1]} and {facts[17][1]}?",
            "answer": f"{facts[16][2]} and {facts[17][2]}", "difficulty": "hard", "reasoning_type": "cross",
            "sessions_required": 2, "reasoning_steps": ["find both"],
            "source_chat_ids": [ids[16], ids[17]] + ([ids[16]] if quirks and j else []),
            "rubric": [item(16), item(17)]})
        out["preference_following"].append({
            "question": f"Suggest a name for the {facts[18][0]} module.",
            "preference_being_tested": "short names", "expected_compliance": "short", "preference_type": "style",
            "source_chat_ids": [ids[18]], "rubric": ["LLM response should suggest: a short name"]})
        out["summarization"].append({
            "question": "Summarize the codes I told you about.",
            "ideal_summary": " ".join(fact(i) for i in range(3)), "difficulty": "moderate",
            "summarization_type": "list", "bullet_points_covered": 3, "conversation_sessions": [1, 2],
            "key_elements_tested": ["codes"], "synthesis_required": "low",
            "source_chat_ids": [] if quirks and j else [ids[0], ids[1], ids[2]], "rubric": [item(0), item(1)]})
        out["temporal_reasoning"].append({
            "question": f"When did I mention project {facts[19][1]} relative to {facts[0][1]}?",
            "answer": "later", "difficulty": "easy", "temporal_type": "order", "time_points": ["a", "b"],
            "calculation_required": "none",
            "source_chat_ids": {"first_event": [ids[0]], "second_event": [ids[19]]}, "rubric": [item(19)]})
    if plan_refs:
        for questions in out.values():
            for q in questions:
                q["plan_reference"] = "Plan 0"
    return out


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def write_chat(folder: Path, seed: int = 1, *, batches: int = 3, turns: int = 6, message_words: int = 30,
               truncated: bool = False, quirks: bool = True, id_strings: bool = False,
               bad_anchor: bool = False) -> None:
    """A 100K/500K/1M-shaped chat folder (module docstring)."""
    rng = random.Random(f"beam-chat:{seed}")
    total = batches * turns * 4
    keep = total - 4 * max(1, turns // 2) if truncated else total  # the truncated file's messages
    facts = _facts(seed)
    ids = _user_ids(keep, 20, seed)
    said = {i: fact_sentence(*facts[k]) for k, i in enumerate(ids)}
    data = _batches(batches, turns, message_words, rng, datetime(2024, 3, 15), said)
    if id_strings:  # as some published files write them
        for b in data:
            for t in b["turns"]:
                for m in t:
                    m["id"] = str(m["id"])
    if bad_anchor:
        data[-1]["turns"][0][0]["time_anchor"] = "Sometime-in-2024"
    _write_json(folder / "chat.json", data)
    if truncated:
        cut, left = [], keep
        for b in data:
            kept_turns = []
            for t in b["turns"]:
                if left <= 0:
                    break
                kept_turns.append(t)
                left -= len(t)
            if kept_turns:
                cut.append({**b, "turns": kept_turns})
        _write_json(folder / "chat_trunecated.json", cut)
    _write_json(folder / "probing_questions" / "probing_questions.json", probing(facts, ids, quirks))


def write_10m_chat(folder: Path, seed: int = 1, *, plans: int = 10, batches: int = 10, turns: int = 2,
                   message_words: int = 20, combined: bool = False) -> None:
    """A 10M-shaped chat folder: `plans` sub-plans plan-k/chat.json, ids restarting at 0 (module docstring)."""
    rng = random.Random(f"beam-10m:{seed}")
    per_plan = batches * turns * 4
    total = plans * per_plan
    facts = _facts(seed)
    ids = _user_ids(total, 20, seed)
    said = {i: fact_sentence(*facts[k]) for k, i in enumerate(ids)}
    parts = []
    for k in range(plans):
        start = datetime(2024, 1, 1) + timedelta(days=80 * k)
        data = _batches(batches, turns, message_words, rng, start, said, first_id=k * per_plan)
        _write_json(folder / f"plan-{k}" / "chat.json", data)
        parts.append(data)
    if combined:
        merged = []
        for k, data in enumerate(parts):
            for b in data:
                for t in b["turns"]:
                    for m in t:
                        m["id"] += k * per_plan
            merged.append({f"plan-{k + 1}": data})
        _write_json(folder / "chat_trunecated.json", merged)
    _write_json(folder / "probing_questions" / "probing_questions.json",
                probing(facts, ids, quirks=True, plan_refs=True))


def real_truncated(scale: str) -> set[int]:
    """The chats of `scale` that have a chat_trunecated.json in the repository at the commit the harness pins."""
    from ltm_harness._interop.beam.fetch import pinned_files

    return {int(p.split("/")[1]) for p in pinned_files() if p.startswith(f"{scale}/") and "trunecated" in p}


def write_dataset(root: Path, scale: str = "100K", chats: int = 2, truncated: set[int] | None = None,
                  **kwargs: Any) -> Path:
    """chats/<scale>/1..chats under `root` (the folder to give as data_dir, or to serve as LTM_BEAM_URL); the chats
    in `truncated` (default: chat 1) also get a truncated file."""
    for n in range(1, chats + 1):
        folder = root / "chats" / scale / str(n)
        if scale == "10M":
            write_10m_chat(folder, seed=n, **kwargs)
        else:
            write_chat(folder, seed=n, truncated=n in (truncated if truncated is not None else {1}), **kwargs)
    return root


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--scale", default="100K", choices=["100K", "500K", "1M", "10M"])
    p.add_argument("--chats", type=int, default=2)
    p.add_argument("--turns", type=int, default=None, help="turns per batch")
    p.add_argument("--message-words", type=int, default=None)
    p.add_argument("--combined", action="store_true", help="10M: also the combined chat_trunecated.json")
    p.add_argument("--as-published", action="store_true",
                   help="truncated files for the chats that have one in the pinned commit (to serve as LTM_BEAM_URL)")
    args = p.parse_args()
    kwargs: dict[str, Any] = {}
    if args.turns:
        kwargs["turns"] = args.turns
    if args.message_words:
        kwargs["message_words"] = args.message_words
    if args.combined:
        kwargs["combined"] = True
    if args.as_published:
        kwargs["truncated"] = real_truncated(args.scale)
    write_dataset(args.out, args.scale, args.chats, **kwargs)
    print(args.out / "chats" / args.scale)


if __name__ == "__main__":
    main()
