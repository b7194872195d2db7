"""Model usage in MCP task results, with the official Python SDK against `guild serve` on stdio.

Run by host/cli/tests/mcp.rs:
    python3 mcp_models.py GUILD_BINARY CONFIG

CONFIG serves `writer`, a prompt-defined specialist whose model (alias `fast`) is the scripted
stand-in, which reports 11 prompt and 7 completion tokens per answer. A `task` call's
structuredContent (validated by the SDK against the tool's outputSchema) and text, and a
background task's `check_task` result, carry the model's calls and tokens. Each check prints
`ok NAME`; the first failure raises and exits non-zero.
"""

import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import check, text_of

EXPECTED = {"fast": {"calls": 1, "prompt_tokens": 11, "completion_tokens": 7}}


async def main(binary, config):
    args = ["--config", config, "serve", "--watch-ms", "0"]
    async with stdio_client(StdioServerParameters(command=binary, args=args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            usage = tools["task"].output_schema["properties"]["usage"]
            check("the output schema describes model usage", "models" in usage["properties"], usage)

            result = await session.call_tool("task", {"subagent_type": "writer", "description": "Say hello."})
            structured = result.structured_content
            check("task succeeded", not result.is_error and structured["status"] == "succeeded", text_of(result))
            check("usage.models in structuredContent", structured["usage"].get("models") == EXPECTED, structured["usage"])
            line = "model fast: 1 call, 11 prompt + 7 completion tokens"
            check("usage in the text", line in text_of(result), text_of(result))

            started = await session.call_tool("start_task", {"subagent_type": "writer", "description": "Say bye."})
            task_id = started.structured_content["task_id"]
            with anyio.fail_after(60):
                while True:
                    checked = await session.call_tool("check_task", {"task_id": task_id})
                    task = checked.structured_content["task"]
                    if task["status"] not in ("queued", "running"):
                        break
                    await anyio.sleep(0.1)
            check("background task succeeded", task["status"] == "succeeded", task)
            check("usage.models in check_task", task["result"]["usage"].get("models") == EXPECTED, task["result"])
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
