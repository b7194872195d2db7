"""Operator-granted, non-secret configuration values (`config = ["key"]` in plugin.toml)."""

from typing import Optional

from . import _backend
from .errors import Denied


def get(key: str) -> str:
    """The value of a granted key. Raises `Denied` for a key not both requested and granted."""
    return _backend.current().config_get(key)


def get_or(key: str, default: Optional[str] = None) -> Optional[str]:
    """The value of a granted key, or `default` when it is denied."""
    try:
        return get(key)
    except Denied:
        return default
