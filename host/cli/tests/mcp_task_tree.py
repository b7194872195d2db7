"""The delegation tree and a child's receipt chain over MCP, with the official Python SDK against
`guild serve` on stdio.

Run by host/cli/tests/mcp.rs:
    python3 mcp_task_tree.py GUILD_BINARY CONFIG

CONFIG serves `boss` and `worker` (copies of the `delegator` test specialist) and the `echo`
connector: boss hands worker one task, worker creates an item with `echo.create`. Checks the
`task_tree` tool (read-only hint; its structured content and its text, the same as
`guild tasks tree`), its refusal of a task in no tree, and the chain the worker's receipt
carries. Then a root anchor given with `task` and `start_task` (`completion_criteria`,
`constraints`): in both input schemas, kept by the tree (a brief that drops the constraint is
refused), shown by `task_tree`, and refused over its caps naming the argument. Each check prints
`ok NAME`; the first failure raises and exits non-zero.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import check, text_of

BRIEF = {
    "specialist": "worker",
    "objective": "Create the tracking item",
    "reason": "The weekly summary needs it",
    "completion_criteria": ["the item exists"],
    "context": {"steps": [{"op": "tool", "tool": "echo.create", "input": {"title": "x"}}],
                "report": {"summary": "created the item"}},
}
SCRIPT = {"steps": [{"op": "run", "brief": BRIEF},
                    {"op": "review", "decision": "ascend", "reason": "the item is there"}]}


async def main(binary, config):
    args = ["--config", config, "serve", "--watch-ms", "0"]
    async with stdio_client(StdioServerParameters(command=binary, args=args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            check("task_tree is listed", "task_tree" in tools, sorted(tools))
            hints = tools["task_tree"].annotations
            check("task_tree is read-only", hints is not None and hints.read_only_hint is True, hints)

            done = await session.call_tool("task", {"subagent_type": "boss", "description": json.dumps(SCRIPT)})
            check("the top task ran", not done.is_error, text_of(done))
            root = done.structured_content["task_id"]
            steps = json.loads(done.structured_content["report"]["details"])
            child = steps[0]["child"]

            tree = await session.call_tool("task_tree", {"task_id": child})
            check("task_tree answers", not tree.is_error, text_of(tree))
            view = tree.structured_content
            check("the tree's root", view["root"] == root, view)
            nodes = [(n["task_id"], n["parent"], n["specialist"], n["depth"], n["status"]) for n in view["nodes"]]
            check("root first, then the child", nodes == [(root, None, "boss", 0, "finished"),
                                                          (child, root, "worker", 1, "finished")], nodes)
            check("the child's review", view["nodes"][1]["review"]["decision"] == "ascend", view["nodes"][1])
            text = text_of(tree)
            check("the text names the tree", text.startswith(f"tree {root} (anchor "), text)
            line = f"\n    {child} worker finished verdict={view['nodes'][1]['verdict']} review=ascend ("
            check("one line per node, indented", line in text, text)

            alone = await session.call_tool("task_tree", {"task_id": "no-such-task"})
            check("a task in no tree is an error", alone.is_error and "in no delegation tree" in text_of(alone),
                  text_of(alone))

            receipts = await session.call_tool("receipts", {"task_id": child})
            listed = receipts.structured_content["receipts"]
            check("the child's receipt names its chain", [r.get("chain") for r in listed] == [[root, child]], listed)
            check("the chain in the text", f"chain: {root} → {child}" in text_of(receipts), text_of(receipts))
            top = await session.call_tool("receipts", {"task_id": root})
            check("the top task has no receipt", top.structured_content["receipts"] == [], top.structured_content)

            await anchored(session, tools)
    print("all checks passed", flush=True)


NEVER = "never touch production"


async def anchored(session, tools):
    for name in ("task", "start_task"):
        props = tools[name].input_schema["properties"]
        check(f"{name} takes an anchor", props["constraints"]["type"] == "array"
              and props["completion_criteria"]["maxItems"] == 32, props)
    anchor = {"completion_criteria": ["the item exists"], "constraints": [NEVER]}
    keeps = dict(BRIEF, constraints=[NEVER])
    script = {"steps": [{"op": "run", "brief": BRIEF}, {"op": "run", "brief": keeps},
                        {"op": "review", "decision": "ascend", "reason": "the item is there"}]}
    done = await session.call_tool("task", dict(anchor, subagent_type="boss", description=json.dumps(script)))
    check("the anchored task ran", not done.is_error, text_of(done))
    steps = json.loads(done.structured_content["report"]["details"])
    check("a brief that drops the constraint is refused",
          steps[0]["ok"] is False and steps[0]["kind"] == "brief_refused" and NEVER in steps[0]["error"]["message"], steps[0])
    check("a brief that keeps it runs", steps[1]["ok"] is True, steps[1])
    root = done.structured_content["task_id"]
    tree = await session.call_tool("task_tree", {"task_id": root})
    view = tree.structured_content
    check("the tree holds the anchor", view["constraints"] == [NEVER]
          and view["completion_criteria"] == ["the item exists"] and view["anchored_by_caller"] is True, view)
    check("task_tree shows it", f"\n  constraint: {NEVER}\n" in text_of(tree), text_of(tree))

    started = await session.call_tool("start_task", dict(anchor, subagent_type="boss", description=json.dumps({"steps": []})))
    check("start_task takes the anchor", not started.is_error, text_of(started))
    background = await session.call_tool("task_tree", {"task_id": started.structured_content["task_id"]})
    check("a background task is anchored from its start", background.structured_content["constraints"] == [NEVER],
          background.structured_content)

    many = [f"rule {i}" for i in range(33)]
    for name in ("task", "start_task"):
        over = await session.call_tool(name, {"subagent_type": "boss", "description": "{}", "constraints": many})
        check(f"{name}: too many constraints", over.is_error and "`constraints` has 33 items" in text_of(over),
              text_of(over))
    empty = await session.call_tool("task", {"subagent_type": "boss", "description": "{}", "completion_criteria": [" "]})
    check("an empty criterion is named", empty.is_error and "`completion_criteria[0]` is empty" in text_of(empty),
          text_of(empty))
    wrong = await session.call_tool("start_task", {"subagent_type": "boss", "description": "{}", "constraints": "x"})
    check("a constraint list that is no list", wrong.is_error and "`constraints`" in text_of(wrong), text_of(wrong))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
