"""The mock server's replies (see `ltm_harness._llm.mock_server` for the models' table): `mock`'s answers from its
context, `mock-memory`'s extractions and answers, `mock-generator`'s dataset stages, and `mock-embed`'s vectors.

`mock-memory`, in the shape mem0 (2.x, its additive extraction prompt) asks for. A request whose last user message has a
`## New Messages` section is an extraction: each user message there (`user: ...` lines, a line without a role going on
the message before) that says something other than questions, and is not arithmetic filler (it mentions "as JSON"),
becomes one memory: its statements, with the message's `[date]` prefix kept (the date the fact was said); one already
in the prompt's `## Existing Memories` or `## Recently Extracted Memories` is not extracted again. The reply is
`{"memory": [{"id": "0", "text": ..., "attributed_to": "user"}, ...]}` (`{"memory": []}`: nothing to keep). mem0 2.x
only adds memories (it no longer asks a model to update or delete them), so that is all this model answers. Any
other request is answered like `mock`, the candidates being the memories given as bullet lines (`- ...`) of system
messages, then the earlier user messages, so a fact said later wins a tie.

`mock-embed`: the words of a text (lower-cased, stop words left out, a leading `[date]` prefix ignored) each add
1 to one coordinate of the vector, chosen with its sign by a hash of the word (blake2b), and the vector is scaled to
length 1; a text with no such word is a fixed unit vector. Texts sharing words are near (cosine = shared words'
weight), texts sharing none are near 0, and the same text always gets the same vector. `encoding_format` may be
`float` or `base64` (float32, as the OpenAI SDK decodes it); usage counts the input's tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from typing import Any

_PREFIX = re.compile(r"^\[[^\]\n]*\]\s*")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the is are was were be been am i you he she it we they my your his her its our their me to of in on at "
    "for and or but with what which who whom whose when where why how do did does done have has had this that these "
    "those there here not no yes can could would should will shall may might must about as by from into than then "
    "so if please tell remember said say told ago now one".split())


# -- behaviours --------------------------------------------------------------------------------------
def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _best_sentence(question: str, candidates: list[str]) -> str | None:
    """The candidate sentence sharing most words with `question` (shorter ones preferred, ties to the latest)."""
    wanted = set(_words(question))
    best, best_score = "", 0.0
    for earlier in candidates:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", earlier):
            words = _words(sentence)
            if not words or "as JSON" in sentence:
                continue
            score = len(wanted.intersection(words)) / (1 + 0.05 * len(words))
            if score >= best_score and score > 0:  # ties go to the latest sentence (values change over time)
                best, best_score = sentence.strip(), score
    return best if best_score > 0 else None


_SUMMARY = re.compile(r"\bsummar(?:y|ies|ise|ize|ising|izing)\b", re.I)
SUMMARY_WORDS = 120  # a summary's length at most, in words


def summary_reply(said: list[str], remembered: list[str] | None = None) -> str:
    """A summary of what the user said (an instruction, not a question, asking for one: LangMem's running summary, a
    graph's summarising node): the statements of the earlier user messages and the memories given (questions and
    arithmetic filler left out, each once), newest kept when they do not all fit in SUMMARY_WORDS words."""
    statements: list[str] = []
    for text in [*(remembered or []), *said]:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
            sentence = sentence.strip()
            if sentence and not sentence.endswith("?") and "as JSON" not in sentence and _words(sentence) \
                    and not _SUMMARY.search(sentence):
                statements.append(sentence)
    kept: list[str] = []
    words = 0
    for sentence in reversed(list(dict.fromkeys(statements))):
        words += len(sentence.split())
        if words > SUMMARY_WORDS and kept:
            break
        kept.append(sentence)
    return ("The user said: " + " ".join(reversed(kept))) if kept else "Nothing has been said yet."


def retrieval_reply(messages: list[dict[str, Any]], remembered: list[str] | None = None) -> str:
    """`mock`: the answer from the earlier user messages (and `remembered` texts, taken as said before them)."""
    users = [_PREFIX.sub("", _text(m)) for m in messages if m.get("role") == "user"]
    if not users:
        return "Hello."
    last = users[-1]
    if "as JSON" in last:  # filler: answer the final question as asked
        numbers = re.findall(r"-?\d+", last.strip().splitlines()[-1])
        return json.dumps({"answer": int(numbers[-1]) if numbers else 0})
    if "?" not in last:
        return summary_reply(users[:-1], remembered) if _SUMMARY.search(last) else "Noted."
    found = _best_sentence(last, [*(remembered or []), *users[:-1]])
    return found if found is not None else "I don't know."


# -- mock-memory: a memory layer's extraction and answers (mem0) ---------------------------------------------------
_ROLE_LINE = re.compile(r"^(user|assistant|system): ", re.M)


def _section(prompt: str, name: str) -> str | None:
    """The text of a `## NAME` section of a prompt (up to the next `## ` heading), None when there is none."""
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |^# Output|\Z)", prompt, re.S | re.M)
    return found.group(1).strip() if found else None


def _known_memories(prompt: str) -> set[str]:
    known: set[str] = set()
    for name in ("Existing Memories", "Recently Extracted Memories"):
        try:
            listed = json.loads(_section(prompt, name) or "[]")
        except json.JSONDecodeError:
            continue
        if isinstance(listed, list):
            known.update(str(m.get("text", "")).strip() for m in listed if isinstance(m, dict))
    return known


def extracted_facts(new_messages: str) -> list[str]:
    """The memories `mock-memory` keeps of a conversation written as `role: content` lines (see the docstring)."""
    facts = []
    starts = list(_ROLE_LINE.finditer(new_messages))
    for i, start in enumerate(starts):
        if start.group(1) != "user":
            continue
        content = new_messages[start.end():starts[i + 1].start() if i + 1 < len(starts) else None].strip()
        prefix = _PREFIX.match(content)
        body = content[prefix.end():] if prefix else content
        if "as JSON" in body:
            continue
        said = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", body)
                if s.strip() and not s.strip().endswith("?")]
        if said and _words(" ".join(said)):
            facts.append((prefix.group(0) if prefix else "") + " ".join(said))
    return facts


def memory_reply(messages: list[dict[str, Any]]) -> str:
    """`mock-memory`: an extraction as JSON when the prompt asks for one, else an answer from the memories."""
    users = [_text(m) for m in messages if m.get("role") == "user"]
    prompt = users[-1] if users else ""  # the sections are in the user's part (the system's part describes them)
    new = _section(prompt, "New Messages")
    if new is not None:
        known = _known_memories(prompt)
        facts = [f for f in dict.fromkeys(extracted_facts(new)) if f not in known]
        return json.dumps({"memory": [{"id": str(i), "text": fact, "attributed_to": "user"}
                                      for i, fact in enumerate(facts)]})
    remembered = [line[2:].strip() for m in messages if m.get("role") == "system"
                  for line in _text(m).splitlines() if line.startswith("- ")]
    return retrieval_reply(messages, [_PREFIX.sub("", r) for r in remembered])


# -- mock-embed: deterministic embeddings ---------------------------------------------------------------------
EMBED_DIMENSIONS = 256
MAX_DIMENSIONS = 4096


def embed(text: str, dimensions: int = EMBED_DIMENSIONS) -> list[float]:
    """`mock-embed`'s vector of `text`: a hashed bag of words of length 1 (see the module's docstring)."""
    vector = [0.0] * dimensions
    words = _words(_PREFIX.sub("", text)) or [""]
    for word in words:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[(value >> 1) % dimensions] += 1.0 if value & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:  # every word cancelled out: the fixed vector
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


_PLACES = ["Quorvia", "Maltessa", "Drunwick", "Velorath", "Ysmere", "Kaldrun", "Orvane", "Pellucid Reach",
           "Thistlemoor", "Brannock", "Seravel", "Ulmgard"]
_ATTRS = [("capital", ["Kestrel", "Amberfall", "Noor", "Tessary", "Glimmerton", "Hollowmere"]),
          ("national flower", ["the glass tulip", "the ember lily", "the frost poppy", "the bell moss"]),
          ("currency", ["the silver reed", "the copper wheel", "the salt mark", "the amber bead"]),
          ("oldest festival", ["the Night of Lanterns", "the Tide Feast", "the Ash Parade", "the Kite Vigil"]),
          ("main export", ["blue clay", "whistling glass", "cloud wool", "river pearls", "ironwood"]),
          ("ruling council", ["the Circle of Nine", "the Loom Assembly", "the Lantern Court", "the Twelve Wardens"])]


def _facts(n: int, seed_text: str) -> list[tuple[str, str, str]]:
    rng = random.Random(seed_text)
    facts = []
    for i in range(n):
        attr, values = _ATTRS[i % len(_ATTRS)]
        facts.append((rng.choice(_PLACES), attr, rng.choice(values)))
    return facts


def generator_reply(messages: list[dict[str, Any]], short: bool = False) -> str:
    """Stages are told apart by the JSON key the request asks for: content, questions or answers."""
    from ltm_harness._llm.counted import asked_count

    prompt = _text(messages[-1])
    first = next(_text(m) for m in messages if m.get("role") == "user")  # the content step: the set's seed
    n = asked_count(first) or 5
    facts = _facts(n, first)
    if '"answers"' in prompt:
        answers = [value for _, _, value in facts]
        return json.dumps({"answers": answers[:-1] if short else answers})
    if '"questions"' in prompt:
        return json.dumps({"questions": [f"What is the {attr} of {place}?" for place, attr, _ in facts]})
    return json.dumps({"content": [f"The {attr} of {place} is {value}." for place, attr, value in facts]})

