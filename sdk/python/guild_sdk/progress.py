"""Progress reports to whoever started the task (`report = true` in plugin.toml). Sending never
ends the run. Raises `ParentGone` when nobody will read it, `Denied`, or `LimitExceeded`."""

from . import _backend


def send(text: str) -> str:
    """Sends one report; returns its stable message id."""
    return _backend.current().progress_send(str(text))
