"""Skills as resources, approvals (approve_task and elicitation) and wakeup report delivery.
Run from mcp_client.py."""

import base64
import hashlib
import json
import os
import re

import anyio
import mcp.types as types
from mcp.shared.exceptions import MCPError

from mcp_common import check, probe, text_of

GUARDED = probe({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}})


async def skill_resource_checks(session, skills_dir, notified):
    listed = {r.uri: r for r in (await session.list_resources()).resources}
    expected = {"skill://release-notes/SKILL.md", "skill://release-notes/template.md", "skill://release-notes/logo.bin"}
    check("skill resources listed", expected <= set(listed), sorted(listed))
    for uri in sorted(expected):
        path = os.path.join(skills_dir, "release-notes", uri.rsplit("/", 1)[1])
        with open(path, "rb") as f:
            data = f.read()
        sha = hashlib.sha256(data).hexdigest()
        check(f"sha256 of {uri} in _meta", listed[uri].meta["sha256"] == sha, listed[uri].meta)
        content = (await session.read_resource(uri)).contents[0]
        got = content.text.encode() if getattr(content, "text", None) is not None else base64.b64decode(content.blob)
        check(f"{uri} read byte-exact", got == data and hashlib.sha256(got).hexdigest() == sha, content)
    blob = (await session.read_resource("skill://release-notes/logo.bin")).contents[0]
    check("a binary file is a blob", getattr(blob, "blob", None) is not None, blob)

    try:
        await session.read_resource("skill://release-notes/../../guild.toml")
        check("a .. path is refused", False, "it was served")
    except MCPError as e:
        check("a .. path is refused", "'..' is not allowed" in str(e), str(e))
    try:
        await session.read_resource("skill://nobody/SKILL.md")
        check("an unknown skill is refused", False, "it was served")
    except MCPError as e:
        check("an unknown skill is refused", "nobody" in str(e), str(e))

    # A skill folder changes; the reload that sees it tells the clients.
    with open(os.path.join(skills_dir, "release-notes", "checklist.md"), "w") as f:
        f.write("- [ ] tag the release\n")
    notified.reset("notifications/resources/list_changed")
    result = await session.call_tool("reload", {})
    check("reload after a skill change", not result.is_error, text_of(result))
    with anyio.fail_after(60):
        await notified.wait("notifications/resources/list_changed")
    check("resources/list_changed", True)
    listed = {r.uri for r in (await session.list_resources()).resources}
    check("new skill file listed", "skill://release-notes/checklist.md" in listed, sorted(listed))


async def approval_by_tool_checks(session):
    """A single `task` waiting on an approval, answered by approve_task (no elicitation)."""
    asked = anyio.Event()
    ids = []
    results = {}

    async def on_progress(value, total, message):
        found = re.search(r'approve_task\(task_id: "([^"]+)"', message or "")
        if found:
            ids.append(found.group(1))
            asked.set()

    async def run():
        results["task"] = await session.call_tool("task", {"subagent_type": "probe", "description": GUARDED}, progress_callback=on_progress)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(60):
            await asked.wait()
        answer = await session.call_tool("approve_task", {"task_id": ids[0], "approved": False})
        check("approve_task answers a single task", not answer.is_error, text_of(answer))
    details = json.loads(results["task"].structured_content["report"]["details"])
    check("refused call did not run", not details["ok"] and "did not approve" in details["error"], details)


def elicitation_answers(answers, seen):
    """An elicitation callback answering with `answers` in order."""

    async def callback(context, params):
        seen.append(params.message)
        return types.ElicitResult(action=answers[len(seen) - 1], content={} if answers[len(seen) - 1] == "accept" else None)

    return callback


async def elicitation_checks(session, seen):
    """Run in a session whose callback accepts the first elicitation and declines the second."""
    await session.initialize()
    outcomes = []
    for _ in range(2):
        result = await session.call_tool("task", {"subagent_type": "probe", "description": GUARDED})
        check("task with an elicited approval", not result.is_error, text_of(result))
        outcomes.append(json.loads(result.structured_content["report"]["details"]))
    check("elicitation/create sent", len(seen) == 2 and "echo.guarded" in seen[0], seen)
    approved, declined = outcomes
    check("accept approves", approved["ok"] and approved["value"]["status"] == "success", approved)
    check("decline refuses", not declined["ok"] and "did not approve" in declined["error"], declined)


async def wakeup_checks(session, logs, wakeup):
    """With `wakeup` delivery, background reports arrive as log notifications; `quiet`: none."""
    await session.initialize()
    started = await session.call_tool("start_task", {"subagent_type": "probe", "description": probe({"op": "reports", "texts": ["one", "two"]})})
    task_id = started.structured_content["task_id"]
    for _ in range(600):
        result = await session.call_tool("check_task", {"task_id": task_id})
        if result.structured_content["task"]["status"] not in ("queued", "running"):
            break
        await anyio.sleep(0.05)
    check("background task done", result.structured_content["task"]["status"] == "succeeded", text_of(result))
    if wakeup:
        with anyio.fail_after(60):
            while len(logs) < 2:
                await anyio.sleep(0.05)
        check("reports as log notifications", [m.data["text"] for m in logs] == ["one", "two"], logs)
        first = logs[0]
        check("log notification shape", first.level == "info" and first.logger == "guild.report" and first.data["task_id"] == task_id and first.data["message_id"], first)
        team = await session.call_tool("read_memory", {"scope": "team"})
        check("--workspace names the team memory", "team:flagged" in text_of(team), text_of(team))
    else:
        # A round trip after the task ended: anything sent for its reports came before it.
        await session.send_ping()
        check("quiet delivery sends no log notifications", logs == [], logs)
        team = await session.call_tool("read_memory", {"scope": "team"})
        check("no workspace named: read_memory is a tool error", team.is_error and "[memory] workspace" in text_of(team), text_of(team))
