"""LangChain's MCP adapter (`langchain-mcp-adapters`) against a stdio `guild serve` in its
per-call mode: without a session of its own, every tool call starts a `guild serve` (a proxy to
the data dir's one host), opens a session, calls and closes. Eight `task` calls run in parallel
and all must succeed (host/cli/tests/real_clients.rs).

    python3 mcp_langchain.py GUILD_BINARY CONFIG
"""

import asyncio
import json
import os
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient

PARALLEL = 8


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    print(f"ok {name}", flush=True)


def text_of(result):
    """The text of a tool's result as the adapter returns it (a string, content blocks, or a
    (content, artifact) pair)."""
    if isinstance(result, tuple):
        result = result[0]
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in result)
    return str(result)


async def main(binary, config):
    client = MultiServerMCPClient(
        {
            "guild": {
                "transport": "stdio",
                "command": binary,
                "args": ["--config", config, "serve", "--watch-ms", "0"],
                "env": dict(os.environ),
            }
        }
    )
    tools = {t.name: t for t in await client.get_tools()}
    check("tools", {"task", "start_task", "check_task"} <= set(tools), sorted(tools))
    task = tools["task"]
    briefs = [json.dumps({"op": "brief", "n": i}) for i in range(PARALLEL)]
    results = await asyncio.gather(
        *(task.ainvoke({"subagent_type": "probe", "description": b}) for b in briefs),
        return_exceptions=True,
    )
    failed = [r for r in results if isinstance(r, BaseException)]
    check(f"{PARALLEL} parallel calls raised nothing", not failed, failed)
    texts = [text_of(r) for r in results]
    check(f"{PARALLEL} parallel calls succeeded", all("succeeded" in t for t in texts), texts)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
