"""A real MCP client session against `guild serve`, with the official Python SDK.

Run by host/cli/tests/mcp.rs:
    python3 mcp_client.py stdio GUILD_BINARY CONFIG RELOADED_CONFIG
    python3 mcp_client.py http URL CONFIG RELOADED_CONFIG
    python3 mcp_client.py wakeup|quiet GUILD_BINARY CONFIG

It covers initialize, tools/list (roster in the `task` tool), a single task with progress
notifications, a batch, a background task, an approval, cancellation, the skills tools, a failing
call (isError) and `notifications/tools/list_changed` after a reload (stdio: the `reload` tool;
http: the file watcher); then memory (mcp_memory_checks.py), skills as resources, approvals by
approve_task and by elicitation (a second session) and, in the wakeup/quiet modes, report delivery
as log notifications (mcp_more_checks.py). Each check prints `ok NAME`; the first failure raises
and exits non-zero.
"""

import json
import os
import shutil
from contextlib import asynccontextmanager
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_common import Notified, check, probe, text_of
from mcp_memory_checks import memory_checks
from mcp_more_checks import (
    approval_by_tool_checks,
    elicitation_answers,
    elicitation_checks,
    skill_resource_checks,
    wakeup_checks,
)


async def session_checks(session, notified, config, reloaded, reload_by_tool):
    init = await session.initialize()
    check("initialize", init.server_info.name == "guild", init)
    check("tools capability", init.capabilities.tools is not None and init.capabilities.tools.list_changed)
    check("resources capability", init.capabilities.resources is not None and init.capabilities.resources.list_changed)

    tools = {t.name: t for t in (await session.list_tools()).tools}
    expected = {
        "task", "start_task", "check_task", "update_task", "cancel_task", "list_tasks",
        "approve_task", "list_skills", "load_skill", "read_skill_resource", "receipts",
        "verify_receipt", "reload",
    }
    check("tools/list", expected <= set(tools), sorted(tools))
    task_tool = tools["task"]
    check("roster in the task description", "probe@0.1.0" in task_tool.description, task_tool.description)
    enum = task_tool.input_schema["properties"]["subagent_type"]["enum"]
    check("roster enum", "probe" in enum and "kb" not in enum, enum)
    check("batch limit in the schema", task_tool.input_schema["properties"]["tasks"]["maxItems"] == 8)

    # A single task whose specialist sends two reports: each becomes a progress notification.
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    result = await session.call_tool(
        "task",
        {"subagent_type": "probe", "description": probe({"op": "reports", "texts": ["first", "second"]})},
        progress_callback=on_progress,
    )
    check("single task", not result.is_error and "succeeded" in text_of(result), text_of(result))
    check("structuredContent", result.structured_content["status"] == "succeeded", result.structured_content)
    check("progress notifications", progress == ["first", "second"], progress)

    # A batch: results in input order, `[task i]` labels; a child that fails never stops the other.
    result = await session.call_tool("task", {"tasks": [
        {"subagent_type": "probe", "description": probe({"op": "brief"})},
        {"subagent_type": "nobody", "description": "do it"},
    ]})
    text = text_of(result)
    check("batch", "[task 0] probe" in text and "[task 1] nobody" in text, text)
    items = result.structured_content["tasks"]
    check("batch structured", [i["index"] for i in items] == [0, 1], items)

    # Failures are isError results with the library's message.
    result = await session.call_tool("task", {"subagent_type": "nobody", "description": "do it"})
    check("unknown specialist is a tool error", result.is_error and "nobody" in text_of(result), text_of(result))
    result = await session.call_tool("task", {
        "subagent_type": "probe", "description": "x", "tasks": [{"subagent_type": "probe", "description": "x"}],
    })
    check("single and batch together is a tool error", result.is_error and "mutually exclusive" in text_of(result))
    result = await session.call_tool("task", {"tasks": [{"subagent_type": "probe", "description": "x"}] * 9})
    check("oversized batch is a tool error", result.is_error and "1 to 8" in text_of(result), text_of(result))

    # A background task, checked until done.
    result = await session.call_tool("start_task", {"subagent_type": "probe", "description": probe({"op": "report", "text": "bg"})})
    task_id = result.structured_content["task_id"]
    check("start_task", not result.is_error and task_id in text_of(result))
    for _ in range(600):
        result = await session.call_tool("check_task", {"task_id": task_id})
        if result.structured_content["task"]["status"] not in ("queued", "running"):
            break
        await anyio.sleep(0.05)
    check("check_task", result.structured_content["task"]["status"] == "succeeded", text_of(result))
    listed = await session.call_tool("list_tasks", {})
    check("list_tasks", task_id in text_of(listed))

    # An approval: the background task pauses on echo.guarded until approve_task answers.
    guarded = probe({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}})
    result = await session.call_tool("start_task", {"subagent_type": "probe", "description": guarded})
    task_id = result.structured_content["task_id"]
    for _ in range(600):
        result = await session.call_tool("check_task", {"task_id": task_id})
        if result.structured_content.get("pending_approval"):
            break
        await anyio.sleep(0.05)
    check("approval requested", result.structured_content["pending_approval"]["tool"] == "echo.guarded", text_of(result))
    result = await session.call_tool("approve_task", {"task_id": task_id, "approved": True})
    check("approve_task", not result.is_error, text_of(result))
    for _ in range(600):
        result = await session.call_tool("check_task", {"task_id": task_id})
        if result.structured_content["task"]["status"] not in ("queued", "running"):
            break
        await anyio.sleep(0.05)
    details = json.loads(result.structured_content["task"]["result"]["report"]["details"])
    check("approved call ran", details["value"]["status"] == "success", details)
    receipts = await session.call_tool("receipts", {"task_id": task_id})
    check("receipts", "sent-1" in text_of(receipts), text_of(receipts))
    chain = await session.call_tool("verify_receipt", {})
    check("verify_receipt (chain)", "chain intact" in text_of(chain), text_of(chain))

    # Cancellation: a task call stuck in a long sleep is cancelled from the client.
    with anyio.move_on_after(1.5) as scope:
        await session.call_tool("task", {"subagent_type": "probe", "description": probe({"op": "sleep", "ms": 8000})})
    check("cancelled call returned no result", scope.cancelled_caught)
    # The server still serves after the cancellation.
    result = await session.call_tool("task", {"subagent_type": "probe", "description": probe({"op": "brief"})})
    check("serves after cancel", not result.is_error)

    # Skills: catalog, body, resource, with the disclosure accounting.
    skills = await session.call_tool("list_skills", {})
    check("list_skills", "release-notes" in text_of(skills), text_of(skills))
    body = await session.call_tool("load_skill", {"name": "release-notes"})
    check("load_skill", "Write the notes" in text_of(body) and body.structured_content["bytes"] > 0, text_of(body))
    again = await session.call_tool("load_skill", {"name": "release-notes"})
    check("load_skill again is accounted", again.structured_content["already_loaded"], again.structured_content)
    resource = await session.call_tool("read_skill_resource", {"name": "release-notes", "path": "template.md"})
    check("read_skill_resource", "## Changes" in text_of(resource), text_of(resource))
    escape = await session.call_tool("read_skill_resource", {"name": "release-notes", "path": "../../guild.toml"})
    check("resource outside the skill is refused", escape.is_error, text_of(escape))

    # A reload that adds a specialist changes the roster: tools/list_changed, then the new enum.
    notified.reset("notifications/tools/list_changed")
    shutil.copyfile(reloaded, config)
    if reload_by_tool:
        result = await session.call_tool("reload", {})
        check("reload tool", "loaded kb@0.1.0" in text_of(result), text_of(result))
    with anyio.fail_after(60):
        await notified.wait("notifications/tools/list_changed")
    check("tools/list_changed", True)
    tools = {t.name: t for t in (await session.list_tools()).tools}
    enum = tools["task"].input_schema["properties"]["subagent_type"]["enum"]
    check("roster after reload", "kb" in enum, enum)


@asynccontextmanager
async def stdio_session(binary, args, **callbacks):
    """A client session with `guild serve` launched over stdio."""
    async with stdio_client(StdioServerParameters(command=binary, args=args)) as (read, write):
        async with ClientSession(read, write, **callbacks) as session:
            yield session


@asynccontextmanager
async def http_session(url, **callbacks):
    """A client session with the server at `url` over streamable HTTP, sending the bearer token
    in MCP_BEARER_TOKEN when it is set."""
    token = os.environ.get("MCP_BEARER_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http, streamable_http_client(url, http_client=http) as streams:
        async with ClientSession(streams[0], streams[1], **callbacks) as session:
            yield session


async def main():
    mode, target, config = sys.argv[1:4]
    serve = ["--config", config, "serve", "--watch-ms", "0"]
    if mode in ("wakeup", "quiet"):
        logs = []

        async def on_log(params):
            logs.append(params)

        flags = ["--workspace", "flagged", "--user", "u"] if mode == "wakeup" else []
        async with stdio_session(target, serve + flags, logging_callback=on_log) as session:
            await wakeup_checks(session, logs, wakeup=mode == "wakeup")
        print("all checks passed", flush=True)
        return

    reloaded = sys.argv[4]
    skills_dir = os.path.join(os.path.dirname(config), "skills")
    notified = Notified()
    first = stdio_session(target, serve, message_handler=notified.handle) if mode == "stdio" else http_session(target, message_handler=notified.handle)
    async with first as session:
        await session_checks(session, notified, config, reloaded, reload_by_tool=mode == "stdio")
        await memory_checks(session)
        await approval_by_tool_checks(session)
        await skill_resource_checks(session, skills_dir, notified)

    # A client that declares elicitation answers approvals itself.
    seen = []
    answer = elicitation_answers(["accept", "decline"], seen)
    second = stdio_session(target, serve, elicitation_callback=answer) if mode == "stdio" else http_session(target, elicitation_callback=answer)
    async with second as session:
        await elicitation_checks(session, seen)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    anyio.run(main)
