"""Team and private memory: markdown documents with `##` headings and `- YYYY-MM-DD: text`
bullets, owned and validated by the host. Which workspace and which user is the operator's
choice, never the plugin's. Each scope is read and written under its own right (`memory =
["team:read", "team:write", "private:read", "private:write"]` in plugin.toml).

Every `update` replaces the whole document: merge and curate what `read` returned, never append
blindly. An accepted update returns its warnings; a refused one raises `MemoryRefused` with
every rule the text broke; a missing right raises `Denied`.
"""

from . import _backend
from .types import PRIVATE, SCOPES, TEAM, Document, MemoryUpdate

__all__ = ["TEAM", "PRIVATE", "read", "update"]


def _check(scope: str) -> str:
    if scope not in SCOPES:
        raise ValueError(f"memory scope must be 'team' or 'private', not {scope!r}")
    return scope


def read(scope: str = TEAM) -> Document:
    """The newest version of `scope`'s document (version 0 and empty when nothing is stored)."""
    return _backend.current().memory_read(_check(scope))


def update(scope: str, text: str) -> MemoryUpdate:
    """Replaces `scope`'s document with `text`, validated by the host first."""
    return _backend.current().memory_update(_check(scope), text)
