"""Helpers shared by the MCP client checks (see mcp_client.py)."""

import json

import anyio

import mcp.types as types


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    print(f"ok {name}", flush=True)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def probe(op):
    return json.dumps(op)


def method_of(message):
    """The JSON-RPC method of an incoming notification (empty for anything else)."""
    for candidate in (message, getattr(message, "root", None)):
        method = getattr(candidate, "method", None)
        if isinstance(method, str):
            return method
    if isinstance(message, types.ToolListChangedNotification):
        return "notifications/tools/list_changed"
    return ""


class Notified:
    """Which list_changed notifications arrived; `reset` before the action that should send one."""

    def __init__(self):
        self.events = {}

    def reset(self, method):
        self.events[method] = anyio.Event()

    async def wait(self, method):
        await self.events.setdefault(method, anyio.Event()).wait()

    async def handle(self, message):
        method = method_of(message)
        if method:
            self.events.setdefault(method, anyio.Event()).set()
