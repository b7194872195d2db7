"""A cold start seen by the official Python SDK: the data dir's host is new and its compile cache
empty, one plugin is a large component that takes seconds to compile. `initialize` and
`tools/list` are answered while it compiles (the `task` tool names the plugins as loading), a
task sent meanwhile waits for its own plugin only (moved to the front of the compile queue) and
succeeds, and `notifications/tools/list_changed` arrives each time a plugin joins the roster,
until the last, after which the whole roster is in the `task` tool
(host/cli/tests/host_service.rs).

    python3 mcp_cold_start.py GUILD_BINARY CONFIG
"""

import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import Notified, check, probe, text_of

CHANGED = "notifications/tools/list_changed"


def task_description(tools):
    return next(t.description for t in tools.tools if t.name == "task")


async def main(binary, config):
    params = StdioServerParameters(
        command=binary, args=["--config", config, "serve", "--watch-ms", "0"], env=dict(os.environ)
    )
    notified = Notified()
    notified.reset(CHANGED)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=notified.handle) as session:
            init = await session.initialize()
            check("initialize", init.server_info.name == "guild", init)
            check("tools/list_changed declared", init.capabilities.tools.list_changed, init)
            before = task_description(await session.list_tools())
            check(
                "task names the plugins still loading",
                "(loading: " in before and "recap-py" in before and "probe" in before,
                before,
            )
            check("nothing is on the roster yet", "- probe@" not in before, before)
            # Sent while the plugins load: it waits for the probe, then runs.
            result = await session.call_tool(
                "task", {"subagent_type": "probe", "description": probe({"op": "brief"})}
            )
            check("a task sent while loading", not result.is_error and "succeeded" in text_of(result), text_of(result))
            # One notification per plugin that joins; the list is whole once nothing loads.
            with anyio.fail_after(300):
                while True:
                    await notified.wait(CHANGED)
                    notified.reset(CHANGED)
                    after = task_description(await session.list_tools())
                    if "(loading" not in after:
                        break
            check("tools/list_changed once loaded", True)
            check("the roster once loaded", "- probe@" in after and "(loading" not in after, after)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
