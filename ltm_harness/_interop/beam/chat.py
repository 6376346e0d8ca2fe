"""A BEAM conversation read as a stream of messages, with bounded memory, in each of the forms it comes in.

* `chat.json` / `chat_trunecated.json` of the 100K, 500K and 1M scales: a JSON list of batches
  `{batch_number, time_anchor, turns}`; `turns` a list of turns, a turn a list of messages `{role, id, content,
  ...}`; the first message of a batch carries the batch's date as `time_anchor` ("March-15-2024"; the batch-level
  key is null).
* the combined 10M files: a JSON list of ten single-key objects `{"plan-1": [batches]}` ... `{"plan-10": ...}`,
  ids already global.
* a 10M chat assembled from its sub-plans `plan-0/chat.json ... plan-9/chat.json` (each a list of batches whose ids
  restart at 0), as the reference's `combine_10m_chats` builds the combined file: every id of sub-plan k shifted by
  (the last id of the sub-plan before it, shifted) + 1, so that ids run 0..N-1 over the whole chat and match the
  probing questions' `source_chat_ids`.

Files are read with the streaming list reader of LongMemEval (ijson's C tokenizer): one batch at a time for a
list of batches, one sub-plan (about 2,000 messages) at a time for a combined file, whatever the file's size.
Anything not shaped as BEAM's is one `DefinitionError` naming the file, the batch and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generator, Iterator

from ltm_harness._errors import DefinitionError
from ltm_harness._guard.limits import clip
from ltm_harness._interop.beam.probing import message_id
from ltm_harness._interop.longmemeval.stream import list_items

WHAT = "a BEAM chat file (a JSON list of batches, as chats/100K/1/chat.json)"
PLANS = 10  # sub-plans of a 10M chat


@dataclass(frozen=True)
class ChatMessage:
    """A message of the chat: its (global) id, who said it, what, and the date of the batch it opens (None when it
    continues one, or when the anchor could not be read: `anchor_text` keeps it)."""

    id: int
    role: str
    content: str
    opens: datetime | None = None
    anchor_text: str | None = None


def parse_anchor(text: str) -> datetime | None:
    """A batch's date ("March-15-2024", `%B-%d-%Y`) as UTC midnight; None when it is not one."""
    try:
        return datetime.strptime(text.strip(), "%B-%d-%Y").replace(tzinfo=timezone.utc)
    except (ValueError, AttributeError):
        return None


def _bad(path: Path, where: str, problem: str) -> DefinitionError:
    return DefinitionError(f"{path}: {where}: {problem}; it is not {WHAT}")


def _messages_of_batch(batch: Any, path: Path, where: str, offset: int) -> Iterator[ChatMessage]:
    if not isinstance(batch, dict) or not isinstance(batch.get("turns"), list):
        raise _bad(path, where, "must be an object with a list of turns")
    first = True
    for t, turn in enumerate(batch["turns"]):
        if not isinstance(turn, list):
            raise _bad(path, f"{where}.turns[{t}]", "must be a list of messages")
        for m, message in enumerate(turn):
            at = f"{where}.turns[{t}][{m}]"
            if not isinstance(message, dict):
                raise _bad(path, at, "must be an object")
            role, content, raw_id = message.get("role"), message.get("content"), message.get("id")
            if role not in ("user", "assistant"):
                raise _bad(path, f"{at}.role", f"must be user or assistant, not {str(role)[:20]!r}")
            if not isinstance(content, str):
                raise _bad(path, f"{at}.content", "must be text")
            number = message_id(raw_id)
            if number is None:
                raise _bad(path, f"{at}.id", f"must be a message number, not {clip(raw_id, 20)}")
            anchor = message.get("time_anchor") if first else None
            if first and anchor is None:
                anchor = batch.get("time_anchor")
            text = anchor if isinstance(anchor, str) else None
            yield ChatMessage(number + offset, role, content, parse_anchor(text) if text else None, text)
            first = False


def iter_batches_file(path: Path, offset: int = 0) -> Iterator[ChatMessage]:
    """The messages of a list-of-batches file, ids shifted by `offset`."""
    for b, batch in list_items(path, what=WHAT):
        yield from _messages_of_batch(batch, path, f"batch {b}", offset)


def iter_chat_file(path: Path) -> Generator[ChatMessage, None, None]:
    """The messages of a chat file of either form (a list of batches, or a combined 10M list of sub-plans)."""
    for k, item in list_items(path, what=WHAT):
        if isinstance(item, dict) and len(item) == 1 and str(next(iter(item))).startswith("plan-"):
            name, batches = next(iter(item.items()))
            if not isinstance(batches, list):
                raise _bad(path, f"item {k} ({name})", "must hold a list of batches")
            for b, batch in enumerate(batches):
                yield from _messages_of_batch(batch, path, f"{name} batch {b}", 0)
        else:
            yield from _messages_of_batch(item, path, f"batch {k}", 0)


def plan_files(folder: Path) -> list[Path]:
    """The sub-plans' chat files of a 10M chat folder, plan-0 on, as far as they go without a gap (`missing_plan`
    says whether that is all ten)."""
    out = []
    for k in range(PLANS):
        path = folder / f"plan-{k}" / "chat.json"
        if not path.is_file():
            break
        out.append(path)
    return out


def iter_assembled(paths: list[Path]) -> Iterator[ChatMessage]:
    """The messages of a 10M chat assembled from its sub-plans' files, in order, ids made global (module
    docstring)."""
    offset = 0
    for path in paths:
        last = None
        for message in iter_batches_file(path, offset):
            last = message.id
            yield message
        if last is not None:
            offset = last + 1


def missing_plan(folder: Path) -> str | None:
    """The first sub-plan of a 10M chat folder whose chat file is not there, when some are (None: all ten, or none:
    the chat is not given as sub-plans)."""
    present = [(folder / f"plan-{k}" / "chat.json").is_file() or (folder / f"plan-{k}").exists()
               for k in range(PLANS)]
    if not any(present) or all((folder / f"plan-{k}" / "chat.json").is_file() for k in range(PLANS)):
        return None
    first = next(k for k in range(PLANS) if not (folder / f"plan-{k}" / "chat.json").is_file())
    return f"plan-{first}/chat.json"
