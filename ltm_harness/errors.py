"""Errors meant for users: one clear sentence, shown without a traceback."""


class UserError(Exception):
    """A problem the user can fix (bad config, unknown name, bad input file). The message says how.

    `fatal` marks an error no retry can fix (a wrong key, an unknown model): an agent that raises one on a
    turn is stopped at once instead of being retried turn after turn."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal
