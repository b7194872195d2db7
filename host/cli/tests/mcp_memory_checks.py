"""Memory over MCP: `read_memory` / `update_memory` and the `memory://` resources, for the
workspace `acme` and user `ann` that guild.toml names (see mcp.rs). Run from mcp_client.py."""

from mcp_common import check, text_of

TEAM_DOC = """## Decisions
- 2026-11-30: Release notes are written from template.md.

## Conventions
- 2026-11-30: Every tool call that mutates is receipted.
"""


async def memory_checks(session):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    check("memory tools listed", {"read_memory", "update_memory"} <= set(tools), sorted(tools))
    rules = tools["update_memory"].description
    for needle in ("25,000", "18,000", "`##` heading", "- YYYY-MM-DD: text", "NO_UPDATE", "full replacement", '"preferences"'):
        check(f"update_memory rules mention {needle}", needle in rules, rules)
    check("usage in the description", "team (team:acme): 0 / 25,000 characters (0 %)" in rules, rules)
    check("private usage in the description", "private (private:ann): 0 / 25,000" in rules, rules)

    empty = await session.call_tool("read_memory", {"scope": "team"})
    check("read_memory of an empty document", not empty.is_error and "team:acme is empty" in text_of(empty), text_of(empty))

    stored = await session.call_tool("update_memory", {"scope": "team", "text": TEAM_DOC, "base_version": 0})
    check("update_memory stores", not stored.is_error and "stored team:acme version 1" in text_of(stored), text_of(stored))
    check("update_memory structured", stored.structured_content["result"] == "stored", stored.structured_content)

    read = await session.call_tool("read_memory", {"scope": "team"})
    check("read_memory returns the document", read.structured_content["text"] == TEAM_DOC, read.structured_content)
    check("read_memory names the writer", "version 1 by supervisor" in text_of(read), text_of(read))

    # A personal heading in team memory is refused with the validator's message; nothing changes.
    personal = TEAM_DOC + "\n## Preferences\n- 2026-11-30: Ann likes short notes.\n"
    refused = await session.call_tool("update_memory", {"scope": "team", "text": personal, "base_version": 1})
    check("personal heading refused (isError)", refused.is_error and 'may not introduce the personal heading "## Preferences"' in text_of(refused), text_of(refused))
    check("refused result structured", refused.structured_content["result"] == "refused", refused.structured_content)
    over = "## Big\n" + "- 2026-11-30: " + "x" * 25_100 + "\n"
    refused = await session.call_tool("update_memory", {"scope": "team", "text": over, "base_version": 1})
    check("over the hard limit refused", refused.is_error and "Merge related entries, drop stale ones" in text_of(refused), text_of(refused))
    after = await session.call_tool("read_memory", {"scope": "team"})
    check("refused writes leave the document unchanged", after.structured_content["text"] == TEAM_DOC and after.structured_content["version"]["version"] == 1)

    # Warnings come back with the accepted write.
    odd = TEAM_DOC + "- not a dated bullet\n"
    warned = await session.call_tool("update_memory", {"scope": "team", "text": odd, "base_version": 1})
    check("warning with the accepted write", not warned.is_error and "stored team:acme version 2" in text_of(warned) and "warning:" in text_of(warned), text_of(warned))
    # Compare-and-swap: a second writer that also read version 1 gets a conflict naming both
    # versions, and version 2 stays; without a base_version nothing is written either.
    stale = await session.call_tool("update_memory", {"scope": "team", "text": TEAM_DOC + "- 2026-12-01: stale\n", "base_version": 1})
    check("a stale base_version is a conflict (isError)", stale.is_error and "based on version 1" in text_of(stale) and "version 2 is stored now" in text_of(stale), text_of(stale))
    no_base = await session.call_tool("update_memory", {"scope": "team", "text": TEAM_DOC})
    check("update_memory without base_version is refused", no_base.is_error and "base_version" in text_of(no_base), text_of(no_base))
    kept = await session.call_tool("read_memory", {"scope": "team"})
    check("a conflict stores nothing", kept.structured_content["text"] == odd and kept.structured_content["version"]["version"] == 2, kept.structured_content)
    check("read_memory names the base to send", "base_version 2" in text_of(kept), text_of(kept))
    noop = await session.call_tool("update_memory", {"scope": "team", "text": "NO_UPDATE", "base_version": 2})
    check("NO_UPDATE changes nothing", not noop.is_error and "unchanged" in text_of(noop), text_of(noop))
    bad_scope = await session.call_tool("update_memory", {"scope": "everyone", "text": TEAM_DOC, "base_version": 0})
    check("unknown scope is a tool error", bad_scope.is_error and "team" in text_of(bad_scope), text_of(bad_scope))

    private = await session.call_tool("update_memory", {"scope": "private", "text": "## Preferences\n- 2026-11-30: Short release notes.\n", "base_version": 0})
    check("personal headings are fine in private memory", not private.is_error and "private:ann" in text_of(private), text_of(private))

    # The usage in the descriptions follows the documents.
    tools = {t.name: t for t in (await session.list_tools()).tools}
    usage = f"team (team:acme): {len(odd) - 1:,} / 25,000"  # the final newline is not counted
    check("usage refreshed on tools/list", usage in tools["update_memory"].description, tools["update_memory"].description)

    # The documents as resources.
    listed = {r.uri: r for r in (await session.list_resources()).resources}
    check("memory resources listed", {"memory://team", "memory://private"} <= set(listed), sorted(listed))
    contents = (await session.read_resource("memory://team")).contents
    check("memory://team read", contents[0].text == odd, contents)
