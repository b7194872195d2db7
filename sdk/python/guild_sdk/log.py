"""Structured logging into the host's tracing, tagged with the plugin. Always available.

Under plain CPython with no test double installed, lines go to stderr.
"""

import sys

from . import _backend

LEVELS = ("trace", "debug", "info", "warn", "error")


def log(level: str, message: str) -> None:
    """Logs `message` at `level` (trace, debug, info, warn or error)."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    try:
        host = _backend.current()
    except _backend.NotInComponent:
        print(f"[{level}] {message}", file=sys.stderr)
        return
    host.log(level, str(message))


def trace(message: str) -> None:
    log("trace", message)


def debug(message: str) -> None:
    log("debug", message)


def info(message: str) -> None:
    log("info", message)


def warn(message: str) -> None:
    log("warn", message)


def error(message: str) -> None:
    log("error", message)
