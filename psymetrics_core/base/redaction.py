"""Keeping secrets out of output, logs, results and caches.

- ``redact``: model arguments with the values of secret-looking keys replaced by ``***`` and
  credentials inside URL values masked (what run records store);
- ``redact_url``: a URL with its ``user:password@`` part and the values of secret-looking query
  parameters replaced by ``***`` (used for every record that names a server URL);
- ``secret_forms``: the key as sent on the wire in every form a server might echo it (verbatim,
  base64, base64 of ``user:key``, percent-encoded);
- ``redact_text``: text from a server with every such form replaced by ``***``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

__all__ = ["redact", "redact_url", "secret_forms", "redact_text", "url_secrets", "MASK"]

MASK = "***"
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "auth", "sig", "credential")
_MIN_LEN = 4  # shorter strings would mask ordinary words


def _is_secret_name(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in _SECRET_WORDS) and not low.endswith("_env")


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url`` (password, user, secret query values)."""
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:
        return []
    found = [s for s in (password, user) if s]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _is_secret_name(k)]
    return [s for s in found if s]


def redact_url(url: str) -> str:
    """``url`` without credentials: ``user:pw@`` becomes ``***@``, secret query values ``***``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # unparsable: mask everything after the scheme to be safe
        scheme, sep, _ = url.partition("://")
        return f"{scheme}{sep}{MASK}" if sep else MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{host}" + (f":{port}" if port is not None else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _is_secret_name(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def secret_forms(secrets: Iterable[str | None], user: str | None = None) -> list[str]:
    """Every form in which a server could echo each secret, longest first."""
    forms: set[str] = set()
    for s in secrets:
        if not s or len(s) < _MIN_LEN:
            continue
        raw = s.encode("utf-8")
        forms.add(s)
        forms.add(quote(s, safe=""))
        for blob in (raw, f"Bearer {s}".encode(), f"{user or ''}:{s}".encode()):
            for enc in (base64.b64encode(blob), base64.urlsafe_b64encode(blob)):
                text = enc.decode("ascii")
                forms.add(text)
                forms.add(text.rstrip("="))
    return sorted((f for f in forms if len(f) >= _MIN_LEN), key=len, reverse=True)


def redact_text(text: str, forms: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret form replaced by ``***``."""
    pattern = "|".join(re.escape(f) for f in forms if f)
    return re.sub(pattern, MASK, text) if pattern else text


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``args`` with values of secret-looking keys replaced (``api_key_env`` is a name).

    Credentials inside URL values (``user:key@`` or a ``?api_key=`` query) are masked too.
    """
    out: dict[str, Any] = {}
    for k, v in args.items():
        if _is_secret_name(k):
            out[k] = MASK
        elif isinstance(v, str) and "://" in v:
            out[k] = redact_url(v)
        else:
            out[k] = v
    return out
