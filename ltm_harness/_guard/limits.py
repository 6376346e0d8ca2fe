"""The maximum of every count, size and time the harness accepts, and `clip`, the one way input is echoed.

Each limit is far above any real use, and low enough that reaching it cannot exhaust memory or time: a number
beyond it is refused in one line (pydantic `Field(le=...)` in the config models, the same bound on the command
line), never a hang, an overflow or a traceback.
"""

from __future__ import annotations

from typing import Any

# sizes
MAX_REPLY_BYTES = 16 * 1024 * 1024  # one reply of an agent or an LLM, decoded (config: http.max_reply_bytes, llm.max_reply_bytes)
MAX_JSON_DEPTH = 64  # nesting of any JSON the harness reads
MAX_FILE_BYTES = 512 * 1024 * 1024  # one JSON/YAML file read whole (definitions, results, configs)
MAX_YAML_ALIASES = 1000  # alias uses in one YAML file (an alias bomb expands exponentially)
MAX_YAML_NODES = 1_000_000  # nodes of one YAML document, aliases expanded

# counts
MAX_EXAMPLES = 10_000  # dataset_examples, --examples
MAX_MEMORY_SPAN = 100_000_000  # tokens: memory_span, --span
MAX_COUNT = 100_000  # syllabus `count`, aiq --trials, episodes, -n and other repetitions
MAX_MESSAGE_TOKENS = 10_000_000
MAX_ATTEMPTS = 100  # tries of one turn or LLM call
MAX_CONCURRENCY = 1024

# times
MAX_SECONDS = 10 * 365 * 24 * 3600.0  # any timeout, budget, backoff or virtual time step (ten years)
MAX_SEED = 2**63 - 1

CLIP = 80  # characters of input an error line shows


def clip(value: Any, limit: int = CLIP) -> str:
    """`repr(value)` cut to `limit` characters (with how long it was), so no error line echoes more than a short
    prefix of the input. Long values are cut before `repr`, so a huge input costs nothing here."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, (list, tuple, dict, set)) and len(value) > 8:
        return f"a {type(value).__name__} of {len(value):,} items"
    if isinstance(value, int) and value.bit_length() > 3 * limit:  # also: repr fails past Python's 4,300 digits
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    try:
        text = repr(value)
    except Exception:  # a user object whose __repr__ fails
        return f"a {type(value).__name__} that cannot be shown"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def kind_of(value: object) -> str:
    """What a value is, for an error about something user code returned: `None`, `a dict`, `an int`, ..."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def exception_line(exc: BaseException, limit: int = 300) -> str:
    """An exception raised by code the user wrote, on one line: its class and its message, cut to `limit`
    characters; never itself an error (a message that cannot be made, such as one holding an integer of more
    digits than Python turns into text, is left out)."""
    try:
        text = " ".join(str(exc).split())
    except Exception:
        text = ""
    name = type(exc).__name__
    return f"{name}: {clip_text(text, limit)}" if text else name


def cut_words(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary, with an ellipsis (`...`) where it was cut; a
    "word" longer than a third of `limit` (a URL, a hash, a run of symbols) is cut where the limit falls."""
    if len(text) <= limit:
        return text
    room = max(limit - 3, 1)
    cut = text[:room + 1].rstrip()
    if len(cut) > room:  # the limit falls inside a word: end before it
        space = cut.rfind(" ", 0, room + 1)
        cut = cut[:space].rstrip() if space >= room - max(room // 3, 1) else cut[:room]
    return cut + "..."


def clip_text(text: str, limit: int = 300) -> str:
    """`text` itself (not its repr) cut at a word boundary to about `limit` characters (`cut_words`), with how
    long it was."""
    return text if len(text) <= limit else f"{cut_words(text, limit)} ({len(text):,} characters)"
