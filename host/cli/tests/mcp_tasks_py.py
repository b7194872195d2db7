"""The Python SDK's task API against `guild serve`: `mcp` 1.x (pinned 1.30, in .venv/langchain)
has `session.experimental` (2025-11-25 Tasks: call_tool_as_task, get_task, poll_task,
get_task_result, list_tasks, cancel_task); `mcp` 2.x has none. A task is created, polled to
its end and its result read; another is cancelled while it runs; both are listed. Prints
`all checks passed` (host/cli/tests/mcp_extensions.rs).

    python3 mcp_tasks_py.py stdio GUILD_BINARY CONFIG
    python3 mcp_tasks_py.py http URL
"""

import asyncio
import json
import sys
import warnings
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

# The 1.x task API is marked deprecated (tasks are expected to return as an extension).
warnings.simplefilter("ignore", DeprecationWarning)


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    print(f"ok {name}", flush=True)


@asynccontextmanager
async def connect(args):
    if args[0] == "http":
        async with streamable_http_client(args[1]) as (read, write, _):
            yield read, write
    else:
        params = StdioServerParameters(command=args[1], args=["--config", args[2], "serve"])
        async with stdio_client(params) as (read, write):
            yield read, write


def probe(op):
    return {"subagent_type": "probe", "description": json.dumps(op)}


async def main(args):
    async with connect(args) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        check("protocol", init.protocolVersion == "2025-11-25", init.protocolVersion)
        tasks = init.capabilities.tasks
        check(
            "tasks capability",
            tasks is not None and tasks.requests.tools.call is not None,
            init.capabilities,
        )
        listed = {t.name: t for t in (await session.list_tools()).tools}
        check("task may run as a task", listed["task"].execution.taskSupport == "optional")

        tasks_api = session.experimental
        created = await tasks_api.call_tool_as_task("task", probe({"op": "reports", "texts": ["one"]}))
        task_id = created.task.taskId
        check("created working", created.task.status == "working", created)
        seen = [status.status async for status in tasks_api.poll_task(task_id)]
        check("polled to completed", seen[-1] == "completed", seen)
        result = await tasks_api.get_task_result(task_id, CallToolResult)
        check(
            "result",
            result.structuredContent["status"] == "succeeded" and not result.isError,
            result,
        )

        sleeper = await tasks_api.call_tool_as_task("task", probe({"op": "sleep", "ms": 60000}))
        sleeper_id = sleeper.task.taskId
        cancelled = await tasks_api.cancel_task(sleeper_id)
        check("cancelled", cancelled.taskId == sleeper_id and cancelled.status == "cancelled", cancelled)
        status = await tasks_api.get_task(sleeper_id)
        check("cancelled on the server", status.status == "cancelled", status)

        page = await tasks_api.list_tasks()
        statuses = {t.taskId: t.status for t in page.tasks}
        check(
            "listed",
            statuses.get(task_id) == "completed" and statuses.get(sleeper_id) == "cancelled",
            statuses,
        )
        check("newest first", page.tasks[0].taskId == sleeper_id, page.tasks[0])

        # Denied: only `task` runs as a task.
        try:
            await tasks_api.call_tool_as_task("check_task", {"task_id": task_id})
            check("check_task refused as a task", False, "it was accepted")
        except Exception as e:  # noqa: BLE001 - the SDK raises McpError
            check("check_task refused as a task", "does not run as a task" in str(e), e)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
