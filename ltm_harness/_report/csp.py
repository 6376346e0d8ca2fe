"""The Content-Security-Policy every page of ours carries: no request at all, only its own inline script and style,
allowed by their hashes. Its own module so that the results index, written after every run, does not load the
report page's assets."""

from __future__ import annotations

import base64
import hashlib


def content_security_policy(js: str, css: str, own_files: bool = False) -> str:
    """A policy that allows no request at all and runs only this script and style (by their hashes); with
    `own_files`, scripts beside the page too (the history files it loads when a reader opens a history)."""
    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"

    scripts = f"{digest(js)} 'self'" if own_files else digest(js)
    return f"default-src 'none'; script-src {scripts}; style-src {digest(css)}; base-uri 'none'; form-action 'none'"
