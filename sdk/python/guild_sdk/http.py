"""Outbound HTTP through the host's guarded client (`http = ["https://api.example.com"]` in
plugin.toml, granted by the operator). Secrets granted for a host are attached by the host.

Raises `Denied` for an origin that is not granted, `InvalidInput` for a bad URL or method,
`LimitExceeded` for size or time caps, `HostFailed` for network errors.
"""

import json as _json
from typing import Any, Iterable, Optional, Tuple

from . import _backend
from .types import Response


def send(method: str, url: str, headers: Iterable[Tuple[str, str]] = (), body: Optional[bytes] = None) -> Response:
    """Sends one request and returns the response, whatever its status."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    return _backend.current().http_send(method.upper(), url, list(headers), body)


def get(url: str, headers: Iterable[Tuple[str, str]] = ()) -> Response:
    return send("GET", url, headers)


def post_json(url: str, value: Any, headers: Iterable[Tuple[str, str]] = ()) -> Response:
    """POSTs `value` as a JSON document."""
    headers = [("content-type", "application/json"), *headers]
    return send("POST", url, headers, _json.dumps(value).encode("utf-8"))
