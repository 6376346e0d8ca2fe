"""What a framework's store in a results folder must be before an adapter opens it (see docs/security.md).

A results folder is something people zip and send each other, so whoever made it chose every byte of
`<run>/<agent>/state/`. Each adapter reads its store back on `--resume` and `--retry-errored` (never on `rescore`,
which reads only event logs), and holds it to one rule: nothing read from it can name code or make the harness write
outside the folder. Three tools here serve that:

* `check_tree`: every entry under a store's folder is a plain folder or a regular file; a symbolic link (a
  `storage.sqlite` pointing at some other database, which the harness would then change) or a device is refused.
* Signed files, for a store whose content names code whatever reader reads it (a Letta agent file carries its
  tools' Python source, which the Letta server runs): `write_signed` writes a file and a keyed digest of it
  (HMAC-SHA256 with a key of this user's, `store.key` in the user's config folder, never in a results folder);
  `read_signed` refuses a file whose digest is missing or wrong: one the harness did not write on this machine.
* `UntrustedStore`: the refusal, one line saying how to trust the folder on purpose (`LTM_TRUST_FRAMEWORK_STORES=1`,
  for folders the user wrote themselves).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from ltm_harness._errors import AgentError
from ltm_harness._store.files import write_bytes

TRUST_ENV = "LTM_TRUST_FRAMEWORK_STORES"
KEY_DIR_ENV = "LTM_HARNESS_CONFIG"  # the folder of store.key (else the user's config folder, by platformdirs)
KEY_FILE = "store.key"
SIGNATURE = ".sig"  # a signed file's digest, beside it: NAME.sig


def stores_trusted() -> bool:
    """The user said the framework stores of the folders they run are theirs (`LTM_TRUST_FRAMEWORK_STORES=1`)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


class UntrustedStore(AgentError):
    """A framework store that could run code, or was not written by this harness: it is not opened."""

    def __init__(self, framework: str, where: Path | str, what: str) -> None:
        super().__init__(f"the {framework} store {where} {what}; the harness does not load it from a results folder: "
                         f"if you wrote this folder yourself and trust it, run again with {TRUST_ENV}=1", fatal=True)


def check_tree(root: Path, framework: str) -> None:
    """Every entry under `root` is a folder or a regular file (no links, devices or pipes), else UntrustedStore.
    Not waived by trust: a link makes the harness write outside the results folder whoever made it."""
    if not root.exists() and not root.is_symlink():
        return
    for path in [root, *sorted(root.rglob("*"))]:
        mode = os.lstat(path).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "a special file"
            raise AgentError(f"the {framework} store {root} holds {kind}, {path.name!r}, where the harness writes only "
                             f"files and folders; a results folder's store is never followed out of the folder: "
                             f"remove it, or run again with --overwrite", fatal=True)


# -- signed files ------------------------------------------------------------------------------------------------------
def key_path() -> Path:
    folder = os.environ.get(KEY_DIR_ENV)
    if folder:
        return Path(folder) / KEY_FILE
    from platformdirs import user_config_path

    return user_config_path("ltm-harness") / KEY_FILE


def _key() -> bytes:
    """This user's signing key (32 random bytes), made on first use, readable by the user alone; read once per
    process (per key file)."""
    return _key_at(key_path())


@functools.lru_cache(maxsize=4)
def _key_at(path: Path) -> bytes:
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(32))
    try:
        os.link(tmp, path)  # the first process to make the key wins; the others read it
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_bytes()


def digest(data: bytes) -> str:
    return hmac.new(_key(), data, hashlib.sha256).hexdigest()


def _signature(path: Path) -> Path:
    return path.with_name(path.name + SIGNATURE)


def write_signed(path: Path, text: str) -> None:
    """`text` into `path`, with its digest beside it; each written whole or not at all (a kill leaves the old pair,
    or the new file with the old digest, which `read_signed` refuses as unsigned: the harness then goes back to
    another saved turn or says the folder cannot be resumed)."""
    data = text.encode("utf-8")
    write_bytes(path, data)  # the run-folder owner's whole-or-nothing write (a failure is one RunFolderWriteError)
    write_bytes(_signature(path), digest(data).encode("ascii"))


def read_signed(path: Path, framework: str) -> str:
    """The text of a file `write_signed` wrote on this machine; UntrustedStore when its digest is missing or does
    not match (unless the user trusts the folder)."""
    data = path.read_bytes()
    if not stores_trusted():
        try:
            said = _signature(path).read_bytes().decode("ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            said = ""
        if not hmac.compare_digest(said, digest(data)):
            raise UntrustedStore(framework, path, "was not written by this harness on this machine (its signature "
                                 f"{path.name}{SIGNATURE} is missing or does not match), and it can name code")
    return data.decode("utf-8")
