"""The one redirect policy of every outgoing request (docs/security.md, "Redirects"), decided here.

Endpoints (an LLM's, a judge's, an agent's: `openai:` agents, judges and the check before the first turn through
`_llm`, `http://` agents, the framework adapters' model clients) never follow a redirect: a request to one carries a
key or the conversation, and a redirect would send them to a host the user never named. A 3xx is an error naming
where it pointed (`endpoint_redirect`), never a second request. Their HTTP clients are made with following off
(`FOLLOW_ON_ENDPOINTS`).

Where a download may be redirected (docs/security.md, "Downloads"): decided here, before anything connects.

The URL a user names (the built-in source, or a mirror in `<PREFIX>_URL`) is fetched as given, on a private or
loopback address too. A redirect from it is followed only when
* it goes to `http` or `https` (never `file:`, `ftp:`, `data:` or any other scheme);
* it does not go down from `https` to plain `http`;
* it does not lead from a public host (this hop's) to an address that is not public (loopback, private,
  link-local, shared, reserved, multicast: anything `ipaddress` does not call global), judged on every address the
  target's name resolves to;
* from a host that is not public (a user's own mirror), it stays on that host (the same addresses; any port) or
  goes to a public host: a loopback mirror may redirect to another port of the loopback, not to 10.0.0.1 or
  169.254.169.254, which the user never named;
* at most `MAX_REDIRECTS` hops.

`refusal(origin, current, target)` returns why a hop is refused (a short reason in words), or None to follow it.
A name that does not resolve here is judged public (the connection will fail, or a proxy the user set up decides).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache
from typing import Callable
from urllib.parse import urlsplit

MAX_REDIRECTS = 5
FOLLOW_ON_ENDPOINTS = False  # an LLM's, a judge's or an agent's endpoint: a redirect is never followed


def endpoint_redirect(status: int, location: str | None) -> str:
    """What an endpoint that answered with a redirect is said to have done (the target's secrets redacted)."""
    from ltm_harness._guard.redact import redact_url

    where = (redact_url(location or "") or "nowhere")[:200]
    return (f"answered with a redirect (HTTP {status} to {where}), which is not followed (docs/security.md); give the "
            "final URL")
Resolver = Callable[[str], frozenset[str]]


def _resolve(host: str) -> frozenset[str]:
    """The addresses `host` stands for: itself when it is an address, else what the system resolver says (empty
    when it cannot say)."""
    try:
        return frozenset([str(ipaddress.ip_address(host.strip("[]")))])
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return frozenset()
    return frozenset(str(info[4][0]).split("%", 1)[0] for info in infos)


@lru_cache(maxsize=256)
def _cached(host: str) -> frozenset[str]:
    return _resolve(host)


def address_kind(address: str) -> str:
    """'public', 'loopback', 'private', 'link-local' or 'other' (unspecified, reserved, multicast, shared) for one
    IP address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_global:
        return "public"
    if ip.is_private:
        return "private"
    return "other"


def host_kind(addresses: frozenset[str]) -> str:
    """The kind of a host from its addresses: 'public' only when every one is (an unresolved name: public);
    otherwise the kind of the first one that is not."""
    kinds = sorted(address_kind(a) for a in addresses)
    local = [k for k in kinds if k != "public"]
    return local[0] if local else "public"


def refusal(origin: str, current: str, target: str, resolve: Resolver | None = None) -> str | None:
    """Why the redirect from `current` to `target` may not be followed, in a download that started at `origin`
    (the URL the user named), or None when it may. `resolve` maps a host name to its addresses (default: the
    system resolver, cached)."""
    resolve = resolve or _cached
    to, now, start = urlsplit(target), urlsplit(current), urlsplit(origin)
    if to.scheme not in ("http", "https"):
        return f"it leads to a {to.scheme or 'relative'}: URL, not http or https"
    if now.scheme == "https" and to.scheme == "http":
        return "it leads from https down to plain http"
    target_addresses = resolve(to.hostname or "")
    kind = host_kind(target_addresses)
    if kind == "public":
        return None
    if host_kind(resolve(now.hostname or "")) == "public":
        return f"it leads from a public host to a {kind} address ({to.hostname})"
    origin_addresses = resolve(start.hostname or "")
    origin_kind = host_kind(origin_addresses)
    if kind == "loopback" and origin_kind == "loopback":
        return None  # the same machine the user named
    if target_addresses and target_addresses <= origin_addresses:
        return None  # the host the user named, on another port or path
    return (f"it leads from the {origin_kind} host named ({start.hostname}) to another {kind} address "
            f"({to.hostname}) that was not named")
