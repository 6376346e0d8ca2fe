"""Where an OpenAI-compatible endpoint is and which key it takes, resolved once and never shown."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field

from ltm_harness._errors import ConfigError
from ltm_harness._guard.redact import redact, remember_secret
from ltm_harness._guard.urls import BadURL, split_url, try_split_url, unparsed_display

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_KEY = "not-needed"
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}")  # local servers take any key; the SDK insists on one


def is_local_url(url: str) -> bool:
    """True for http(s) URLs on this machine (localhost, a loopback address)."""
    parts = try_split_url(url)
    host = ((parts.hostname if parts is not None else None) or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def display_url(url: str) -> str:
    """The URL without any user:password part or query, safe to show."""
    parts = try_split_url(url)
    if parts is None:
        return redact(unparsed_display(url))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return redact(f"{parts.scheme}://{host}{port}{parts.path}")


class _Secret:
    """Holds an API key; never shows it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    key: _Secret = field(repr=False)

    @property
    def display(self) -> str:
        return display_url(self.base_url)

    def scrub(self, text: str) -> str:
        """`text` with this endpoint's key, and anything shaped like an OpenAI key, blanked out."""
        if self.key.value and self.key.value != LOCAL_KEY:
            text = text.replace(self.key.value, "***")
        return redact(_KEY_LIKE.sub("sk-***", text))


def _where_from(base_url: str | None) -> str:
    """How to fix a bad base URL: where it came from."""
    if base_url:
        return "fix the base_url given (config or --base-url), e.g. http://127.0.0.1:8000/v1"
    return "fix OPENAI_BASE_URL, e.g. http://127.0.0.1:8000/v1"


def resolve_endpoint(who: str, base_url: str | None = None, api_key: str | None = None) -> Endpoint:
    """The endpoint for `who` (e.g. "agent 'openai:gpt-4o'", "the judge"): arguments first, then
    OPENAI_BASE_URL / OPENAI_API_KEY; a local URL needs no key, any other one does."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    try:
        parts = split_url(url)
    except BadURL as exc:
        raise ConfigError(f"{who}: the base URL {display_url(url)!r} cannot be read: {exc}; "
                          f"{_where_from(base_url)}") from None
    if parts.scheme not in ("http", "https"):
        raise ConfigError(f"{who}: the base URL {display_url(url)!r} must start with http:// or https://")
    key = api_key or os.environ.get("OPENAI_API_KEY") or None
    if key is None:
        if not is_local_url(url):
            raise ConfigError(f"{who}: no API key for {display_url(url)}; set OPENAI_API_KEY "
                            "(or point OPENAI_BASE_URL at a local server, which needs none)")
        key = LOCAL_KEY
    else:
        remember_secret(key)
    return Endpoint(url, _Secret(key))
