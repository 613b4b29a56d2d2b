"""The LLM endpoint as people write it -> the OpenAI-compatible API base URL.

A leaf module (URL parsing only, no HTTP): ``config.py`` normalises a site's endpoint
at build time, the client and ``sphinx-rag ask`` normalise the one they call.
Mirrored by ``normalizeEndpoint`` in ``js/src/llm/llm.js``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["normalize_endpoint"]


def normalize_endpoint(endpoint: str) -> str:
    """The API base URL ending in ``/v1`` (or another ``/vN``), without trailing slash.

    Accepts ``http://host:8080``, ``http://host:8080/v1/``, a pasted
    ``.../v1/chat/completions`` and a missing scheme (``localhost:11434``).
    Raises ValueError for an empty or non-http(s) endpoint.
    """
    url = (endpoint or "").strip()
    if not url:
        raise ValueError("the LLM endpoint is empty")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the LLM endpoint must be an http(s) URL like http://127.0.0.1:8080/v1, "
                         f"got {endpoint!r}")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if not re.search(r"/v\d+$", path):
        path += "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"
