"""BEAM's files, fetched on first use from its GitHub repository at a pinned commit, file by file, into the user
cache; never shipped (the data is CC BY-SA 4.0, the code has no licence).

Where a chat's files come from, first found first:

* `data_dir` (the dataset's `args: {data_dir: PATH}`): a checkout or copy laid out like the repository (the folder
  holding `chats/`, or `chats/` itself), read as it is (checked by its structure);
* the cache, `<cache>/beam/chats/<scale>/<n>/...` (`$LTM_HARNESS_CACHE`, else the platform's user cache);
* a download of the raw file at the pinned commit (`pinned.COMMIT`), or from `LTM_BEAM_URL`: the base URL of a
  mirror laid out like the repository (`<base>/chats/100K/1/chat.json`). Each download is kept only when its git
  blob id is the one the pinned commit records for that path (`pinned.FILES`) and it reads as BEAM's;
  `LTM_BEAM_SHA1=none` turns the blob check off (a mirror of other files: the structure alone decides).

Only the files a run needs are fetched: per chat its probing questions and the one conversation file the
reference plays (`chat_trunecated.json` where the commit has one, else `chat.json`), so `--limit 2` fetches two
chats. Locally a 10M chat may also be given as its sub-plans (`plan-0/chat.json` ... `plan-9/chat.json`), assembled
as the reference combines them (`chat.iter_assembled`). Offline, the error is one line saying where to put the
file, or how to name a copy.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Literal

from ltm_harness._authoring.datafiles import RemoteFile, fetch_file, read_json
from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import problem
from ltm_harness._interop.beam import pinned
from ltm_harness._interop.beam.chat import (PLANS, ChatMessage, iter_assembled, iter_chat_file, missing_plan,
                                            plan_files)
from ltm_harness._interop.beam.probing import BeamQuestion, Quirks, parse_probing

Scale = Literal["100K", "500K", "1M", "10M"]
SCALES: tuple[str, ...] = ("100K", "500K", "1M", "10M")
CHATS = {"100K": 20, "500K": 35, "1M": 35, "10M": 10}
REPOSITORY = "https://github.com/mohammadtavakoli78/BEAM"
RAW = f"https://raw.githubusercontent.com/mohammadtavakoli78/BEAM/{pinned.COMMIT}"
ENV = "LTM_BEAM"
PROBING = "probing_questions/probing_questions.json"
TRUNCATED, FULL = "chat_trunecated.json", "chat.json"  # (sic): the reference's spelling
MAX_CHAT_BYTES = 1 << 30  # a combined 10M chat is ~40 MB
MAX_PROBING_BYTES = 16 << 20
_TAIL = 4096
OWN = "give a checkout or copy of the repository with the dataset's `args: {data_dir: PATH}`"


@lru_cache(maxsize=1)
def pinned_files() -> dict[str, tuple[str, int | None]]:
    """path under chats/ -> (git blob id, size or None), at the pinned commit."""
    out: dict[str, tuple[str, int | None]] = {}
    for line in pinned.FILES.splitlines():
        blob, size, path = line.split(" ", 2)
        out[path] = (blob, None if size == "-" else int(size))
    return out


def git_blob_id(path: Path) -> str:
    """The id git gives the file's content (sha1 of "blob <size>\\0" + content), read in chunks."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class BeamFile(RemoteFile):
    """A file of the repository (`chats/<rel>`): kept at `<cache>/beam/chats/<rel>`, fetched from the pinned
    commit or from `$LTM_BEAM_URL/chats/<rel>`."""

    def by_hand(self) -> str:
        return (f"download {self.source_url} yourself and put it at {self.path} (or set {ENV}_URL to the base URL of "
                f"a mirror laid out like the repository), {OWN}, or leave the dataset out with --exclude beam")


def _remote(rel: str, max_bytes: int) -> BeamFile:
    return BeamFile(dataset="beam", name=Path(rel).name, rel=f"chats/{rel}", url=f"{RAW}/chats/{rel}", sha256=None,
                    max_bytes=max_bytes, max_json_bytes=max_bytes, env_prefix=ENV, compression="none", own_copy=OWN,
                    mirror_folder=True)


def _check_blob(rel: str, path: Path) -> None:
    if os.environ.get(f"{ENV}_SHA1", "").strip().lower() == "none":
        return
    expected = pinned_files().get(rel, (None, None))[0]
    if expected is not None and git_blob_id(path) != expected:
        raise DefinitionError(f"{path}: its git blob id is not {expected}, the one of chats/{rel} at commit "
                              f"{pinned.COMMIT[:7]}; it is not the published file (set {ENV}_SHA1=none to accept "
                              "another version)")


def check_chat_file(path: Path) -> None:
    """DefinitionError unless `path` starts as a BEAM chat (its first message reads) and ends with its list's ']'."""
    with closing(iter_chat_file(path)) as messages:
        if next(messages, None) is None:
            raise DefinitionError(f"{path}: holds no message; it is not a BEAM chat file")
    with path.open("rb") as fh:
        fh.seek(max(0, fh.seek(0, 2) - _TAIL))
        if not fh.read().rstrip().endswith(b"]"):
            raise DefinitionError(f"{path}: does not end with the closing ']' of its list; the file is cut (an "
                                  "interrupted download?)")


@dataclass
class ChatSource:
    """Where one chat's conversation and questions are read from."""

    scale: str
    number: int
    probing: Path
    chat: list[Path]  # one file, or the sub-plans of a 10M chat in order
    kind: Literal["truncated", "full", "assembled"]

    def messages(self) -> Iterator[ChatMessage]:
        if self.kind == "assembled":
            return iter_assembled(self.chat)
        return iter_chat_file(self.chat[0])

    def questions(self, quirks: Quirks) -> list[BeamQuestion]:
        data: Any = read_json(self.probing, "none", MAX_PROBING_BYTES)
        return parse_probing(data, str(self.probing), quirks)

    @property
    def files(self) -> list[Path]:
        return [self.probing, *self.chat]


def _chats_folder(data_dir: str | Path) -> Path:
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise DefinitionError(f"beam: data_dir {root} is not a folder; give a checkout of {REPOSITORY} (the folder "
                              "holding chats/), or leave data_dir out to have the files fetched")
    return root / "chats" if (root / "chats").is_dir() else root


def _check_local_chat(path: Path) -> None:
    """A local chat file is what a downloaded one must be: a regular file of bounded size that holds messages and
    ends whole (`check_chat_file`), one rule for both."""
    if (why := problem(path, MAX_CHAT_BYTES)) is not None:
        raise DefinitionError(f"beam: {path} cannot be read ({why}); copy the chat's file there")
    check_chat_file(path)


def local_source(data_dir: str | Path, scale: str, number: int) -> ChatSource:
    """A chat of a local checkout or copy (module docstring)."""
    folder = _chats_folder(data_dir) / scale / str(number)
    probing = folder / PROBING
    why = problem(probing, MAX_PROBING_BYTES)  # the real cause: missing, a folder, a FIFO, a device, too large
    if why is not None:
        raise DefinitionError(f"beam: {probing} cannot be read ({why}); data_dir must be laid out like the "
                              f"repository (chats/{scale}/{number}/{PROBING})")
    for name, kind in ((TRUNCATED, "truncated"), (FULL, "full")):
        path = folder / name
        if os.path.lexists(path):  # present: a regular file of bounded size, or said what it is instead
            _check_local_chat(path)
            return ChatSource(scale, number, probing, [path], kind)  # type: ignore[arg-type]
    if scale == "10M" and (missing := missing_plan(folder)) is not None:
        raise DefinitionError(f"beam: {folder / missing} is missing: a 10M chat given as its sub-plans needs all "
                              f"{PLANS} (plan-0 to plan-{PLANS - 1}); copy it there")
    plans = plan_files(folder) if scale == "10M" else []
    if plans:
        for path in plans:
            _check_local_chat(path)
        return ChatSource(scale, number, probing, plans, "assembled")
    raise DefinitionError(f"beam: {folder} has no {TRUNCATED} or {FULL}"
                          f"{' (nor plan-0/chat.json ...)' if scale == '10M' else ''}; copy the chat's files there")


def fetched_source(scale: str, number: int, quiet: bool = False) -> ChatSource:
    """A chat's files from the cache, downloaded there first (module docstring)."""
    base = f"{scale}/{number}"
    files = pinned_files()
    probing_rel = f"{base}/{PROBING}"
    if probing_rel not in files:
        raise DefinitionError(f"beam: chats/{probing_rel} is not in the repository at commit {pinned.COMMIT[:7]}; "
                              f"{scale} has chats 1 to {CHATS[scale]}")
    chat_rel, kind = (f"{base}/{TRUNCATED}", "truncated") if f"{base}/{TRUNCATED}" in files \
        else (f"{base}/{FULL}", "full")

    def read_probing(path: Path) -> None:
        _check_blob(probing_rel, path)
        parse_probing(read_json(path, "none", MAX_PROBING_BYTES), str(path))

    def read_chat(path: Path) -> None:
        _check_blob(chat_rel, path)
        check_chat_file(path)

    probing_file = _remote(probing_rel, MAX_PROBING_BYTES)
    fetch_file(probing_file, read_probing, quiet)
    chat_file = _remote(chat_rel, MAX_CHAT_BYTES)
    fetch_file(chat_file, read_chat, quiet)
    return ChatSource(scale, number, probing_file.path, [chat_file.path], kind)  # type: ignore[arg-type]


def chat_source(scale: str, number: int, data_dir: str | Path | None = None, quiet: bool = False) -> ChatSource:
    if data_dir is not None:
        return local_source(data_dir, scale, number)
    return fetched_source(scale, number, quiet)
