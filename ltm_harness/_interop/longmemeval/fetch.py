"""LongMemEval's data files, fetched on first use into the user cache (its data is not ours to ship).

The files are on the HuggingFace hub only, in the dataset `xiaowu0162/longmemeval-cleaned` (the September 2025
clean-up; `xiaowu0162/longmemeval` keeps the older files): `longmemeval_oracle.json` (evidence sessions only,
~15 MB), `longmemeval_s_cleaned.json` (~48 sessions, ~115k tokens a question, ~277 MB) and
`longmemeval_m_cleaned.json` (~500 sessions a question, ~2.7 GB). `data_path(variant)` downloads the one asked for
to `<cache>/longmemeval/<file>` (the cache of `ltm_harness._authoring.datafiles`: `$LTM_HARNESS_CACHE`, else the
platform's), with a progress bar, checked before it is kept, then reads it from there. `LTM_LONGMEMEVAL_URL`
names a mirror: the URL of the folder holding the three files. A local file (the dataset's `data_file`) is used as
it is, after the same check.

The check never loads the file: the first question is read in full and checked as the reader will read it
(`data.iter_questions`), and the file must end with the list's closing `]` (a download cut short by a server that
did not say its length fails here). The hub publishes no checksum the harness could pin, so the structure decides
(`LTM_LONGMEMEVAL_SHA256` can still require one).
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Literal, get_args

from ltm_harness._authoring.datafiles import RemoteFile, fetch_file
from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._guard.files import open_regular
from ltm_harness._interop.longmemeval.data import iter_questions

Variant = Literal["oracle", "s", "m"]
VARIANTS: tuple[str, ...] = get_args(Variant)
FILES = {"oracle": "longmemeval_oracle.json", "s": "longmemeval_s_cleaned.json", "m": "longmemeval_m_cleaned.json"}
HUB_FOLDER = "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main"
_MAX_BYTES = {"oracle": 256 << 20, "s": 4 << 30, "m": 32 << 30}  # well above the published sizes
_TAIL = 4096


def remote_file(variant: str) -> RemoteFile:
    """Where the file of `variant` comes from and is kept."""
    if variant not in FILES:
        raise ConfigError(f"longmemeval: variant {variant!r} is not one of {', '.join(VARIANTS)}; use s (the "
                          "published LongMemEval_S), m or oracle")
    return RemoteFile(dataset="longmemeval", name=FILES[variant], url=f"{HUB_FOLDER}/{FILES[variant]}", sha256=None,
                      max_bytes=_MAX_BYTES[variant], max_json_bytes=_MAX_BYTES[variant],
                      env_prefix="LTM_LONGMEMEVAL", mirror_folder=True, compression="none",
                      own_copy="give your own copy with the dataset's `args: {data_file: PATH}`")


def check_file(path: Path) -> None:
    """DefinitionError (one line) unless `path` looks like a whole LongMemEval file: a JSON list whose first
    question reads as the reader reads every question, closed at its end."""
    with closing(iter_questions(path)) as questions:
        next(questions)
    with open_regular(path, None) as fh:  # checked by iter_questions already; opened the one way all the same
        fh.seek(max(0, fh.seek(0, 2) - _TAIL))
        if not fh.read().rstrip().endswith(b"]"):
            raise DefinitionError(f"{path}: does not end with the closing ']' of its list of questions; the file "
                                  "is cut (an interrupted download?)")


def data_path(variant: str = "s", data_file: str | Path | None = None, quiet: bool = False) -> Path:
    """The LongMemEval file to read: `data_file` when given (checked), else the cached file of `variant`,
    downloaded first when it is not there yet. Every failure is one DefinitionError line saying what to do (an
    unknown variant: ConfigError)."""
    if data_file is not None:
        path = Path(data_file).expanduser()
        check_file(path)
        return path
    remote = remote_file(variant)
    fetch_file(remote, check_file, quiet)
    return remote.path
