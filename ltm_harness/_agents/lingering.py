"""What a user's agent code opened that would keep the process alive after a command: an `aiosqlite` connection (the
one behind a user's own `AsyncSqliteSaver`) has a worker thread that is not a daemon, so a process whose module-level
graph holds one never ends once the run is done. The adapter that sees such a connection registers how to stop it
(`stop_when_done`); the command line stops them all when its command returns (`stop_lingering`), never during a run:
every conversation of a run may share the user's one connection. A program that calls the API keeps its objects:
it closes what it opened."""

from __future__ import annotations

from typing import Any, Callable

_STOPS: dict[int, Callable[[], Any]] = {}


def stop_when_done(resource: object, stop: Callable[[], Any]) -> None:
    """Call `stop` when the command ends (once per resource, however many agents share it)."""
    _STOPS.setdefault(id(resource), stop)


def stop_lingering() -> None:
    """Stop what was registered (each at most once); a failure to stop is ignored: the command is over."""
    while _STOPS:
        _, stop = _STOPS.popitem()
        try:
            stop()
        except Exception:  # noqa: BLE001  (closed already, or its loop is gone: nothing left to keep alive)
            pass
