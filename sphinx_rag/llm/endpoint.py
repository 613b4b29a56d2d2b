"""The LLM endpoint as people write it -> the OpenAI-compatible API base URL.

A leaf module (URL parsing only, no HTTP): ``config.py`` normalises a site's endpoint
at build time, the client and ``sphinx-rag ask`` normalise the one they call.
Mirrored by ``normalizeEndpoint`` in ``js/src/llm/llm.js``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["normalize_endpoint"]

_OTHER_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)")
_HOST = re.compile(r"^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?|[0-9a-fA-F:.]+)$")  # a name, IPv4 or IPv6


def normalize_endpoint(endpoint: str) -> str:
    """The API base URL ending in ``/v1`` (or another ``/vN``), without trailing slash.

    Accepts ``http://host:8080``, ``http://host:8080/v1/``, a pasted
    ``.../v1/chat/completions`` and a missing scheme (``localhost:11434``).
    Raises ValueError for an empty or non-http(s) endpoint.
    """
    url = (endpoint or "").strip()
    if not url:
        raise ValueError("the LLM endpoint is empty")
    bad = ValueError(f"the LLM endpoint must be an http(s) URL like http://127.0.0.1:8080/v1, got {endpoint!r}")
    if "://" not in url:
        if _OTHER_SCHEME.match(url):  # "javascript:...", "mailto:...": not "localhost:8080"
            raise bad
        url = "http://" + url
    parts = urlsplit(url)
    try:
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        port_ok = False
    if (parts.scheme not in ("http", "https") or not parts.hostname or not port_ok or not _HOST.match(parts.hostname)
            or any(c.isspace() for c in url)):
        raise bad
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if not re.search(r"/v\d+$", path):
        path += "/v1"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # lowercased, as the browser's URL
    default = {"http": 80, "https": 443}[parts.scheme]
    port = f":{parts.port}" if parts.port not in (None, default) else ""
    return f"{parts.scheme}://{host}{port}{path}"
