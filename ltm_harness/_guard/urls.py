"""URLs a user gives (an HTTP agent, an LLM endpoint), read with the standard library's `urlsplit`, whose
ValueErrors (an unclosed `[` of an IPv6 host, a port that is not a number) become one reason in words."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from ltm_harness._guard.limits import clip_text


class BadURL(ValueError):
    """A URL that cannot be read; the message says why, in words (no URL in it: the caller shows the URL)."""


def split_url(url: str) -> SplitResult:
    """The parts of `url`, its port checked too; BadURL saying why when they cannot be read."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        authority = url.partition("://")[2].split("/", 1)[0].rpartition("@")[2]
        if "[" in authority or "]" in authority:
            raise BadURL("its host has a '[' or ']' that does not enclose an IPv6 address (write one in brackets: "
                         "[::1])") from None
        raise BadURL(f"its host cannot be read ({clip_text(str(exc), 120)})") from None
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise BadURL("its port is not a number from 0 to 65535") from None
    return parts


def try_split_url(url: str) -> SplitResult | None:
    """The parts of `url`, or None when they cannot be read (for showing or classifying a URL, never raising)."""
    try:
        return split_url(url)
    except BadURL:
        return None


def unparsed_display(url: str) -> str:
    """A URL that cannot be read, shown without what may hold a secret: the user:password part, the query and the
    fragment are left out (cut by characters, since the URL does not parse)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    authority, path = rest[:end], rest[end:]
    path = path.split("?", 1)[0].split("#", 1)[0]
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{path}"
