"""MemoryAgentBench's files, fetched on first use from the HuggingFace hub (`ai-hyz/MemoryAgentBench`, MIT) at the
revision `pinned.REVISION`, file by file, into the user cache; never shipped (the splits are large).

Where a file comes from, first found first:

* `data_dir` (the dataset's `args: {data_dir: PATH}`): a copy laid out like the hub's repository
  (`data/<Split>-00000-of-00001.parquet`, `entity2id.json` at its root), read as it is after a structure check;
* the cache, `<cache>/memoryagentbench/<path>` (`$LTM_HARNESS_CACHE`, else the platform's user cache);
* a download of `https://huggingface.co/datasets/ai-hyz/MemoryAgentBench/resolve/<revision>/<path>`, or of
  `$LTM_MAB_URL/<path>` (a mirror laid out like the repository); `LTM_MAB_REVISION` names another revision. A
  download is kept only when its sha256 is the pinned one (`pinned.SHA256`; where that is not known, the structure
  decides, and `LTM_MAB_SHA256` can require a digest) and it reads as the split it should be.

Only the splits a run plays are fetched, and `entity2id.json` only for the recommendation source. Offline, the
error is one line naming the file and where to put it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ltm_harness._authoring.datafiles import RemoteFile, fetch_file, read_json
from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import problem
from ltm_harness._interop.mab import pinned
from ltm_harness._interop.mab.rows import check_split_file

ENV = "LTM_MAB"
OWN = "give a copy laid out like the hub's repository with the dataset's `args: {data_dir: PATH}`"
MAX_ENTITY_BYTES = 64 << 20


def split_path(split: str) -> str:
    """The split's file in the repository."""
    return f"data/{split}-00000-of-00001.parquet"


def revision() -> str:
    return os.environ.get(f"{ENV}_REVISION", "").strip() or pinned.REVISION


def remote(rel: str) -> RemoteFile:
    """A file of the repository (`rel`, e.g. data/<Split>-00000-of-00001.parquet) as the downloader knows it: kept at
    `<cache>/memoryagentbench/<rel>`, fetched from the hub at the revision or from `$LTM_MAB_URL/<rel>` (module
    docstring)."""
    url = f"https://huggingface.co/datasets/{pinned.REPOSITORY}/resolve/{revision()}/{rel}"
    return RemoteFile(dataset="memoryagentbench", name=Path(rel).name, rel=rel, url=url, sha256=pinned.SHA256.get(rel),
                   max_bytes=pinned.MAX_BYTES, max_json_bytes=MAX_ENTITY_BYTES, env_prefix=ENV, compression="none",
                   own_copy=OWN, mirror_folder=True)


def _local(data_dir: str | Path, rel: str) -> Path:
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise DefinitionError(f"memoryagentbench: data_dir {root} is not a folder; give a copy of the hub's "
                              f"{pinned.REPOSITORY} (the folder holding data/), or leave data_dir out to have the "
                              "files fetched")
    path = root / rel
    why = problem(path, pinned.MAX_BYTES)
    if why is not None:
        raise DefinitionError(f"memoryagentbench: {path} cannot be read ({why}); data_dir must be laid out like the "
                              f"hub's repository ({rel})")
    return path


def split_file(split: str, data_dir: str | Path | None = None, quiet: bool = False) -> Path:
    """The parquet file of `split`: the user's copy, else the cached download (module docstring)."""
    rel = split_path(split)
    if data_dir is not None:
        path = _local(data_dir, rel)
        check_split_file(path)
        return path
    file = remote(rel)
    fetch_file(file, check_split_file, quiet)
    return file.path


def check_entity2id(data: Any, path: Path) -> dict[str, int]:
    """The movie map (name or DBpedia URL -> id), or DefinitionError when it is not one."""
    if not isinstance(data, dict) or not data or not all(isinstance(v, int) for v in data.values()):
        raise DefinitionError(f"{path}: not MemoryAgentBench's entity2id.json (an object of names to integer ids)")
    return data


def entity2id(data_dir: str | Path | None = None, quiet: bool = False) -> dict[str, int]:
    """The recommendation source's movie map, from the user's copy or the cached download."""
    if data_dir is not None:
        path = _local(data_dir, pinned.ENTITY2ID)
        return check_entity2id(read_json(path, "none", MAX_ENTITY_BYTES), path)
    file = remote(pinned.ENTITY2ID)
    return fetch_file(file, lambda p: check_entity2id(file.read(p), p), quiet)
