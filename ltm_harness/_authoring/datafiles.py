"""Data files a dataset fetches on first use (chapterbreak's stories, LoCoMo's conversations, LongMemEval's
questions), kept in the user's cache.

    remote = RemoteFile(dataset="chapterbreak", name="chapterbreak_ctx_8192.zst", url=..., sha256=...,
                        max_bytes=..., env_prefix="LTM_CHAPTERBREAK")
    data = fetch_json(remote, check=my_structure_check)  # downloaded once, then read from the cache
    parsed = fetch_parsed(remote, parse=my_reader)        # the same, handing back what the reader made of it
    path = fetch_file(remote, read=my_streaming_check)    # a file of GBs, checked by its own reader, never loaded

* where: `<cache>/<dataset>/<name>`, the cache being `$LTM_HARNESS_CACHE` if set, else the platform's user cache
  folder for ltm-harness (platformdirs: `~/.cache/ltm-harness` on Linux);
* the URL can be replaced by `<env_prefix>_URL` (a mirror, or a test server; with `mirror_folder`, the folder
  holding the file, for a dataset of several files) and the expected sha256 by `<env_prefix>_SHA256` (`none` turns
  the check off, for a file known by its structure alone);
* the file is JSON, zstd-compressed (`compression="zstd"`) or plain (`"none"`);
* a download is streamed to a temporary file beside its final place while its size and sha256 are checked, then
  read (decompressed if need be) and checked by the dataset; only a file that passes every check is moved into
  place (an atomic rename), so a failed or interrupted fetch leaves nothing behind;
* a progress bar (rich) shows on a terminal; elsewhere one line before and one after; every URL shown (those
  lines, every error) passes `_guard.redact.redact_url` first: a mirror's user:password and query values (a token,
  a presigned URL's signature) never appear;
* a download has an overall deadline and a minimum rate besides the per-read timeout, and follows redirects only
  where docs/security.md allows (`download`: `LTM_DOWNLOAD_DEADLINE`, `LTM_DOWNLOAD_MIN_RATE`);
* offline, the error says where to put the file by hand (or how to name a copy of one's own, `own_copy`) and how to
  leave the dataset out.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from ltm_harness._errors import DefinitionError, option
from ltm_harness._guard import jsonsafe
from ltm_harness._authoring.download import Pace, RedirectRefused, TooSlow, open_following
from ltm_harness._guard.files import read_bytes
from ltm_harness._guard.redact import redact, redact_url

CACHE_ENV = "LTM_HARNESS_CACHE"
CHUNK = 1 << 16
T = TypeVar("T")
Compression = Literal["zstd", "none"]


class RemoteFile(BaseModel):
    """A JSON file (zstd-compressed or plain) a dataset downloads once."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    name: str
    url: str
    sha256: str | None  # of the file as downloaded; None: unknown, the structure check alone decides
    max_bytes: int  # the download may not be larger
    max_json_bytes: int  # nor its JSON (decompressed)
    env_prefix: str  # <prefix>_URL and <prefix>_SHA256 override url and sha256
    compression: Compression = "zstd"
    own_copy: str | None = None  # how a user names a copy of their own instead (said when the fetch fails)
    mirror_folder: bool = False  # <prefix>_URL names the folder holding the file (of several a dataset fetches)
    rel: str | None = None  # its path in that folder and in the dataset's cache folder (None: just `name`)

    @property
    def source_url(self) -> str:
        mirror = os.environ.get(f"{self.env_prefix}_URL")
        if mirror and self.mirror_folder:
            return f"{mirror.rstrip('/')}/{self.rel or self.name}"
        return mirror or self.url

    @property
    def shown_url(self) -> str:
        """`source_url` as every line and file shows it: without user:password or query values (`redact_url`)."""
        return redact_url(self.source_url)

    @property
    def expected_sha256(self) -> str | None:
        value = os.environ.get(f"{self.env_prefix}_SHA256")
        if value is None:
            return self.sha256
        return None if value.strip().lower() in ("", "none") else value.strip().lower()

    @property
    def path(self) -> Path:
        return cache_dir() / self.dataset / (self.rel or self.name)

    def by_hand(self) -> str:
        """What to do instead of the download (said when it fails)."""
        own = f", {self.own_copy}" if self.own_copy else ""
        mirror = "the URL of a mirror's folder" if self.mirror_folder else "a mirror"
        return (f"download {self.shown_url} yourself and put it at {self.path} (or set {self.env_prefix}_URL to "
                f"{mirror}, {CACHE_ENV} to another cache folder){own}, or leave the dataset out with "
                f"{option('exclude', [self.dataset])}")

    def read(self, path: Path) -> Any:
        """The JSON in a file of this kind (the download, or the cached copy)."""
        return read_json(path, self.compression, self.max_json_bytes)


def cache_turned_off(env: str) -> bool:
    """Whether the environment variable `env` turns one of the user cache's caches off ("off", 0, false, no)."""
    return os.environ.get(env, "").strip().lower() in ("off", "0", "false", "no")


def cache_dir() -> Path:
    """The user cache of ltm-harness: $LTM_HARNESS_CACHE, else the platform's (platformdirs)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("ltm-harness", appauthor=False)


def decompress_json(data_path: Path, max_json_bytes: int) -> Any:
    """The JSON inside a zstd file (one frame or several, with or without their size stated), at most
    `max_json_bytes` of it; a cut or damaged file is a DefinitionError."""
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    out = bytearray()
    try:
        with data_path.open("rb") as fh:
            dobj, pending = dctx.decompressobj(), False  # pending: the current frame has input but has not ended
            while chunk := fh.read(CHUNK * 16):
                while chunk:
                    out += dobj.decompress(chunk)
                    pending = True
                    if len(out) > max_json_bytes:
                        raise DefinitionError(f"{data_path}: decompresses to more than {max_json_bytes:,} bytes, far "
                                              "more than the data file can hold; it is not the right file")
                    chunk = b""
                    if dobj.eof:  # a frame ended: what follows starts the next one
                        chunk, dobj, pending = dobj.unused_data, dctx.decompressobj(), False
            if pending or not out:
                raise DefinitionError(f"{data_path}: not a complete zstd file (it ends inside a frame, or is empty)")
    except zstandard.ZstdError as exc:
        raise DefinitionError(f"{data_path}: not a complete zstd file ({exc})") from None
    return _parse_json(bytes(out), data_path)


def read_json(path: Path, compression: Compression, max_json_bytes: int) -> Any:
    """The JSON in a data file, zstd-compressed or plain, at most `max_json_bytes` of it; a file that cannot be read,
    is too large, or holds no JSON is a DefinitionError."""
    if compression == "zstd":
        return decompress_json(path, max_json_bytes)
    try:
        raw = read_bytes(path, max_json_bytes)  # a FIFO or device, or too large a file, is refused before reading
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return _parse_json(raw, path)


def _parse_json(raw: bytes, path: Path) -> Any:
    try:
        return jsonsafe.loads(raw)
    except ValueError as exc:  # invalid JSON, not UTF-8, nested too deeply, a number too long to read
        raise DefinitionError(f"{path}: its content is not JSON ({str(exc)[:80]})") from None


def fetch_json(remote: RemoteFile, check: Callable[[Any, Path], None], quiet: bool = False) -> Any:
    """The JSON of `remote`, from the cache, or downloaded there first. `check(data, path)` raises DefinitionError
    when the data is not shaped as the dataset needs; a download that fails it is not kept."""

    def checked(data: Any, path: Path) -> Any:
        check(data, path)
        return data

    return fetch_parsed(remote, checked, quiet)


def fetch_parsed(remote: RemoteFile, parse: Callable[[Any, Path], T], quiet: bool = False) -> T:
    """What `parse(data, path)` makes of the JSON of `remote`, read from the cache, or downloaded there first.
    `parse` raises DefinitionError when the data is not shaped as the dataset needs; a download that fails it is
    not kept."""
    return fetch_file(remote, lambda path: parse(remote.read(path), remote.path), quiet)


def fetch_file(remote: RemoteFile, read: Callable[[Path], T], quiet: bool = False) -> T:
    """`read(path)` of the file of `remote`, from the cache, or downloaded there first: `read` checks the file
    (raising DefinitionError when it is not the right one) and returns what the dataset needs of it (a file too
    large to hold, e.g. LongMemEval's, is checked by streaming its start); a download that fails it is not kept."""
    path = remote.path
    if path.is_file():
        try:
            return read(path)
        except DefinitionError as exc:
            raise DefinitionError(f"{exc}; delete it to download it again") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{remote.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        raise DefinitionError(f"{remote.dataset}: cannot write to the cache folder {path.parent} "
                              f"({exc.strerror or exc}); set {CACHE_ENV} to a folder you can write, or "
                              f"{remote.by_hand()}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _download(remote, out, quiet)
        expected = remote.expected_sha256
        if expected is not None and digest != expected:
            raise DefinitionError(f"{remote.dataset}: the file downloaded from {remote.shown_url} has sha256 "
                                  f"{digest}, not the expected {expected}; it is not the published file "
                                  f"({remote.by_hand()})")
        try:
            result = read(tmp)
        except DefinitionError as exc:
            detail = str(exc).replace(f"{tmp}: ", "").replace(str(tmp), "the file")
            raise DefinitionError(f"{remote.dataset}: the file downloaded from {remote.shown_url} is damaged or "
                                  f"not the right one ({detail}); {remote.by_hand()}") from None
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not quiet:
        print(f"{remote.dataset}: saved {path}", file=sys.stderr)
    return result


def _download(remote: RemoteFile, out: Any, quiet: bool) -> str:
    """Stream the file into `out`; its sha256. Any failure is a DefinitionError saying what to do by hand. The
    download is bounded in size (`remote.max_bytes`), in time (an overall deadline and a minimum rate besides the
    per-read timeout: `download.Pace`) and in where it may be redirected (`_guard.redirects`); every URL it shows
    is redacted (`_guard.redact.redact_url`: no user:password, no query value)."""
    import httpx

    url = remote.source_url
    shown = redact_url(url)
    digest = hashlib.sha256()
    pace = Pace.from_env()
    received = 0
    try:
        with httpx.Client(timeout=pace.timeout(), follow_redirects=False) as client, \
                open_following(client, url, pace) as response:
            if response.status_code != 200:
                raise DefinitionError(f"{remote.dataset}: downloading {shown} failed with HTTP "
                                      f"{response.status_code}; {remote.by_hand()}")
            declared = response.headers.get("content-length")
            total = int(declared) if declared and declared.isdigit() else None
            if total is not None and total > remote.max_bytes:
                raise DefinitionError(f"{remote.dataset}: {shown} offers {total:,} bytes, more than the "
                                      f"{remote.max_bytes:,} the data file can be; it is not the right file "
                                      f"({remote.by_hand()})")
            with _progress(remote, shown, total, quiet) as advance:
                for chunk in response.iter_raw():  # as each read returns (a chunk size would wait to fill it)
                    received += len(chunk)
                    if received > remote.max_bytes:
                        raise DefinitionError(f"{remote.dataset}: {shown} sends more than {remote.max_bytes:,} "
                                              f"bytes, more than the data file can be ({remote.by_hand()})")
                    out.write(chunk)
                    digest.update(chunk)
                    advance(len(chunk))
                    pace.check(received)
            if total is not None and received != total:
                raise DefinitionError(f"{remote.dataset}: the download of {shown} stopped after {received:,} of "
                                      f"{total:,} bytes; try again, or {remote.by_hand()}")
    except TooSlow as exc:
        raise DefinitionError(f"{remote.dataset}: the download of {shown} {exc}; try again, or "
                              f"{remote.by_hand()}") from None
    except RedirectRefused as exc:
        raise DefinitionError(f"{remote.dataset}: {shown} redirects to {redact_url(exc.target)}, not followed: "
                              f"{exc.reason} (docs/security.md); name the file's own URL in {remote.env_prefix}_URL, "
                              f"or {remote.by_hand()}") from None
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
        reason = redact(str(exc) or type(exc).__name__)
        raise DefinitionError(f"{remote.dataset}: cannot reach {shown} ({reason[:120]}); offline? "
                              f"{remote.by_hand()}") from None
    except httpx.HTTPError as exc:
        if pace.over():
            raise DefinitionError(f"{remote.dataset}: the download of {shown} {pace.deadline_reason(received)}; "
                                  f"try again, or {remote.by_hand()}") from None
        reason = redact(str(exc) or type(exc).__name__)
        raise DefinitionError(f"{remote.dataset}: the download of {shown} broke off ({reason[:120]}); try again, or "
                              f"{remote.by_hand()}") from None
    return digest.hexdigest()


class _progress:
    """A download bar on a terminal (rich); otherwise a line when it starts."""

    def __init__(self, remote: RemoteFile, url: str, total: int | None, quiet: bool) -> None:
        self.remote, self.url, self.total, self.quiet = remote, redact_url(url), total, quiet
        self.bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if self.quiet:
            return lambda n: None
        from rich.console import Console

        console = Console(stderr=True)
        if not console.is_terminal:
            print(f"{self.remote.dataset}: downloading {self.url} (once; kept in {self.remote.path.parent})",
                  file=sys.stderr)
            return lambda n: None
        from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                   TransferSpeedColumn)

        self.bar = Progress(TextColumn(f"{self.remote.dataset}: downloading {self.remote.name}"), BarColumn(),
                            DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(), console=console,
                            transient=True)
        self.bar.start()
        task = self.bar.add_task("download", total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
