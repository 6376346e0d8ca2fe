"""The one redaction of secrets: every URL, config value and line the harness writes or prints passes here.

* In a URL: the user:password part becomes `***@`, and the value of EVERY query parameter becomes `***` (the names
  stay): a presigned URL of any cloud (`X-Amz-Signature`, `X-Amz-Credential`, `X-Goog-Signature`, Azure's `sig=`,
  a mirror's `token=`) names its secret as it likes, so no list of names can be trusted to cover it. A fragment of
  `name=value` pairs (`#access_token=...`) is masked the same way.
* In free text: every URL is redacted as above, `Authorization: Bearer ...` values, and strings shaped like known
  API keys (OpenAI `sk-...`, Anthropic `sk-ant-...`, Google `AIza...`, GitHub `ghp_...`, AWS `AKIA...`, HF `hf_...`)
  become `***`.
* Known secret values (the keys a run was given) are replaced wherever they appear.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

MASK = "***"
SECRET_PARAMS = frozenset({
    "key", "api_key", "apikey", "api-key", "token", "access_token", "auth_token", "id_token", "refresh_token",
    "password", "passwd", "pwd", "secret", "client_secret", "sig", "signature", "auth", "authorization",
    "session", "sessionid", "x-api-key", "code",
})
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
_KEYS = re.compile(
    r"\b(?:sk-ant-[A-Za-z0-9_-]{8,}|sk-(?:proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,}|xox[abposr]-[A-Za-z0-9-]{10,})")
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#]*@")
_QUERY = re.compile(r"\?[^#]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_known: set[str] = set()


def remember_secret(value: str | None) -> None:
    """A secret this process was given (an API key): it is masked wherever it appears in text later."""
    if value and len(value) >= 6:
        _known.add(value)


def _secret_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_PARAMS or lowered.endswith(("_key", "-key", "_token", "-token", "_secret", "password"))


def redact_url(url: str) -> str:
    """`url` with its userinfo and the value of every query parameter masked (a URL that does not parse has its
    userinfo and its whole query masked), and known keys wherever they appear."""
    head, slash, tail = url.partition("/")
    if "@" in head and "://" not in url:  # an address with no scheme (HOST:PORT of a Ray cluster): user:pass@host
        return _mask_known(f"{MASK}@{head.rpartition('@')[2]}{slash}{redact_url('x://h/' + tail)[6:] if slash else ''}")
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:  # unreadable (an unclosed [ of an IPv6 host): its user:password and query masked whole
        return _mask_known(_QUERY.sub(f"?{MASK}", _USERINFO.sub(rf"\1{MASK}@", url, count=1), count=1))
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    fragment = _mask_values(parts.fragment) if "=" in parts.fragment else parts.fragment
    out = urlunsplit(SplitResult(parts.scheme, netloc, parts.path, _mask_values(parts.query), fragment))
    return _mask_known(out)


def _mask_values(query: str) -> str:
    """`a=1&b=2;c` -> `a=***&b=***;c`: every value masked, names (as written) and empty values kept."""
    return re.sub(r"=[^&;]+", f"={MASK}", query)


def _mask_known(text: str) -> str:
    for secret in _known:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str) -> str:
    """Free text with every URL redacted, bearer credentials and strings shaped like API keys masked."""
    if not text:
        return text
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _KEYS.sub(MASK, text)
    return _mask_known(text)


def redact_data(data: Any, secret_fields: Iterable[str] = ("api_key",)) -> Any:
    """Parsed JSON/YAML with every string redacted, and fields named like secrets masked whole."""
    fields = set(secret_fields)
    if isinstance(data, dict):
        return {k: (MASK if (k in fields or _secret_param(str(k))) and isinstance(v, str) and v else redact_data(v, fields))
                for k, v in data.items()}
    if isinstance(data, list):
        return [redact_data(v, fields) for v in data]
    if isinstance(data, str):
        return redact(data)
    return data
