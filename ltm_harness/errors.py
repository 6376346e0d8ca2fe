"""Errors meant for users: one clear sentence, shown without a traceback."""


class UserError(Exception):
    """A problem the user can fix (bad config, unknown name, bad input file). The message says how."""
