"""The items of a JSON list in a file of any size, built one at a time with bounded memory.

ijson (a well-kept incremental JSON parser) tokenizes the file with its C backend (yajl2_c, in its binary wheels;
`ijson.backend` says which one is in use) into events, and the items are built from the events here, with two
things ijson's own `items()` does not give:

* bounded nesting: `items()` keeps a path string per open level, so nesting n deep costs memory in n^2 (a 40 kB
  file of 20,000 brackets takes about 1 GB); here a file nested deeper than `MAX_DEPTH` is an error, found
  before anything is allocated for it;
* skipping unbuilt: an object item can be dropped as soon as one of its keys has a value the caller does not
  want (`key`, `keep`), and an item's nested values can be left unbuilt when only some top-level fields are
  wanted (`fields`); skipped events are counted, never turned into objects.

Building in Python takes 1.5 to 2 times as long as ijson's C `items()` on LongMemEval-shaped files (seconds for the
2.7 GB M file; the pydantic models built from the items cost more than either): benchmarks/longmemeval_read.py
measures both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import check_regular
from ltm_harness._guard.jsonsafe import TooDeep, build

MAX_DEPTH = 32  # LongMemEval's files nest 5 deep
MAX_FILE_BYTES = 1 << 40  # streamed, never held: the bound only refuses what cannot be a data file
_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")
_SKIPPED = object()
Events = Iterator[tuple[str, Any]]


_TooDeep = TooDeep


def list_items(path: Path, *, what: str, key: str | None = None, keep: Callable[[Any], bool] | None = None,
               fields: frozenset[str] | None = None) -> Iterator[tuple[int, Any]]:
    """(index, item) of the JSON list in `path`, in order. An object item whose `key` has a value for which `keep`
    is false is skipped (not yielded, not built past that key); with `fields`, an object item holds only those of
    its top-level fields whose values are not objects or lists. `what` names the file in errors ("a LongMemEval
    file"). DefinitionError (one line) when the file cannot be read, is not JSON, is cut, is not a list, or is
    nested deeper than MAX_DEPTH."""
    import ijson

    try:
        check_regular(path, MAX_FILE_BYTES)
        fh = path.open("rb")
    except FileNotFoundError:
        raise DefinitionError(f"{path} does not exist; give the path of {what}") from None
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot be read ({exc.strerror or exc}); give {what}") from None
    with fh:
        start = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
        if not start.startswith(b"["):
            raise DefinitionError(f"{path}: {'empty' if not start else 'not a JSON list'}; give {what}")
        fh.seek(0)
        try:
            yield from _items(ijson.basic_parse(fh, use_float=True), key, keep, fields)
        except ijson.JSONError as exc:
            problem = _first_line(exc)
            if "premature EOF" in problem:
                raise DefinitionError(f"{path}: the JSON ends early; the file is cut (an interrupted download?): "
                                      "fetch it again") from None
            raise DefinitionError(f"{path}: not valid JSON ({problem}); give {what}") from None
        except _TooDeep:
            raise DefinitionError(f"{path}: JSON nested more than {MAX_DEPTH} deep; give {what}") from None


def _first_line(exc: Exception) -> str:
    """The first line of an ijson error (the next ones quote the file's text)."""
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return (str(text).strip().splitlines() or [type(exc).__name__])[0][:120]


def _items(events: Events, key: str | None, keep: Callable[[Any], bool] | None,
           fields: frozenset[str] | None) -> Iterator[tuple[int, Any]]:
    next(events)  # the list's start (the caller saw its '[')
    index = 0
    for event, value in events:
        if event == "end_array":
            for _ in events:  # yajl raises on anything after the list
                pass
            return
        if event == "start_map":
            item = _object(events, key, keep, fields)
            if item is not _SKIPPED:
                yield index, item
        elif event == "start_array":
            yield index, _build(events, [])
        else:
            yield index, value
        index += 1


def _object(events: Events, key: str | None, keep: Callable[[Any], bool] | None,
            fields: frozenset[str] | None) -> Any:
    out: dict[str, Any] = {}
    name = ""
    for event, value in events:
        if event == "map_key":
            name = value
        elif event == "end_map":
            return out
        elif event in _STARTS:
            if fields is not None and name not in fields:
                _skip(events)
            else:
                out[name] = _build(events, {} if event == "start_map" else [])
        else:
            if fields is None or name in fields:
                out[name] = value
            if name == key and keep is not None and not keep(value):
                _skip(events)
                return _SKIPPED
    return out  # not reached: the parser raises at the end of a cut file


def _skip(events: Events) -> None:
    """Consume the events of the container just opened (or of the rest of the one being read)."""
    depth = 1
    for event, _ in events:
        if event in _STARTS:
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif event in _ENDS:
            depth -= 1
            if depth == 0:
                return


def _build(events: Events, root: Any) -> Any:
    """The container just opened (`root`: an empty dict or list), built from its events."""
    return build(events, root, MAX_DEPTH)
