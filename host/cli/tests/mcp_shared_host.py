"""One short MCP client session against a stdio `guild serve` (a proxy to the data dir's host),
with the official Python SDK: initialize, tools/list, one task. Several run at once on one data
dir (host/cli/tests/host_service.rs).

    python3 mcp_shared_host.py GUILD_BINARY CONFIG
"""

import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import check, probe, text_of


async def main(binary, config):
    params = StdioServerParameters(
        command=binary, args=["--config", config, "serve", "--watch-ms", "0"], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("initialize", init.server_info.name == "guild", init)
            tools = {t.name for t in (await session.list_tools()).tools}
            check("tools/list", {"task", "start_task", "check_task"} <= tools, sorted(tools))
            result = await session.call_tool(
                "task", {"subagent_type": "probe", "description": probe({"op": "brief"})}
            )
            check("task", not result.is_error and "succeeded" in text_of(result), text_of(result))
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
