"""The official Python SDK's 2026-07-28 client (`mcp.Client`) against `guild serve` on stdio.

Run by host/cli/tests/mcp.rs:
    python3 mcp_modern.py MODE GUILD_BINARY CONFIG RELOADED_CONFIG

MODE is `auto` (the SDK probes `server/discover`, as clients do by default) or `2026-07-28`
(the version pinned). It covers the negotiated version, tools, prompts, a task, and
`subscriptions/listen`: a reload that adds a specialist arrives on the stream as a tools and a
prompts list change. Each check prints `ok NAME`; the first failure raises and exits non-zero.
"""

import shutil
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_common import check, probe, text_of


async def main(mode, binary, config, reloaded):
    server = StdioServerParameters(command=binary, args=["--config", config, "serve", "--watch-ms", "0"])
    async with Client(server, mode=mode) as client:
        check("protocol 2026-07-28", client.protocol_version == "2026-07-28", client.protocol_version)
        tools = {t.name for t in (await client.list_tools()).tools}
        check("tools", {"task", "reload"} <= tools, tools)
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check("prompts", prompts == ["probe"], prompts)
        result = await client.call_tool("task", {"subagent_type": "probe", "description": probe({"op": "brief"})})
        check("task", not result.is_error and "succeeded" in text_of(result), text_of(result))

        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
            shutil.copyfile(reloaded, config)
            reload = await client.call_tool("reload", {})
            check("reload", "loaded kb@0.1.0" in text_of(reload), text_of(reload))
            seen = set()
            with anyio.fail_after(60):
                async for event in sub:
                    seen.add(type(event).__name__)
                    if {"ToolsListChanged", "PromptsListChanged"} <= seen:
                        break
            check("list changes on the listen stream", {"ToolsListChanged", "PromptsListChanged"} <= seen, seen)
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check("prompts after reload", "kb" in prompts, prompts)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:5])
