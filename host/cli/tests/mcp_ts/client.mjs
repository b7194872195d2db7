// The official TypeScript MCP client (@modelcontextprotocol/client, with its Skills extension
// client and the Tasks add-on @modelcontextprotocol/ext-tasks) against `guild serve` on stdio.
// Usage: node client.mjs GUILD_BINARY CONFIG SKILLS_DIR
// Every check throws on failure (exit 1); on success the last line is a JSON summary that the
// Rust test (host/cli/tests/mcp_extensions.rs) reads.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient, SkillVerificationError } from "@modelcontextprotocol/client/ext/skills";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";

const [guild, config, skillsDir] = process.argv.slice(2);
const check = (ok, what) => {
  if (!ok) throw new Error(`check failed: ${what}`);
};

const transport = new StdioClientTransport({
  command: guild,
  args: ["--config", config, "serve"],
  env: { PATH: process.env.PATH ?? "" },
  stderr: "inherit",
});
const client = new Client({ name: "guild-ts-test", version: "1.0.0" });
await client.connect(transport);
const summary = { protocol: client.getNegotiatedProtocolVersion?.() ?? null };

// Skills: the client lists them and verifies every file it reads against the entry's digest,
// size and (for SKILL.md) frontmatter.
const skills = new SkillsClient(client);
check(skills.supported, "the server declares the skills extension");
const { skills: entries } = await skills.list();
summary.skills = entries.map((s) => s.uri);
const notes = entries.find((s) => s.uri === "skill://release-notes/SKILL.md");
check(notes !== undefined, "release-notes is listed");
const md = await skills.read(notes);
check(md.verified === true, "SKILL.md verified");
summary.body = md.body ?? "";
summary.verified = [];
for (const file of ["template.md", "logo.bin"]) {
  const read = await skills.read(notes, file);
  check(read.verified === true, `${file} verified`);
  summary.verified.push(file);
}
// A file changed after the listing no longer matches its digest: the client refuses it.
writeFileSync(join(skillsDir, "release-notes", "template.md"), "# Changed behind the entry\n");
try {
  await skills.read(notes, "template.md");
  summary.tampered = "accepted";
} catch (e) {
  summary.tampered = e instanceof SkillVerificationError ? `refused: ${e.reason ?? e.message}` : `error: ${e}`;
}
// A fresh entry describes the file as it is now.
const { skill: fresh } = await skills.get(notes.uri);
check((await skills.read(fresh, "template.md")).verified === true, "the fresh entry verifies");

// A task through the plain client: the SDK checks structuredContent against the output schema.
const plain = await client.callTool({
  name: "task",
  arguments: { subagent_type: "probe", description: '{"op":"tools"}' },
});
check(!plain.isError, `task succeeded: ${JSON.stringify(plain).slice(0, 400)}`);
summary.plain_status = plain.structuredContent?.status ?? null;

// A task through the Tasks add-on's session API.
const session = createTaskSessionFromClient(client, { endpointId: "guild-test" });
try {
  const execution = await session.callTool("task", {
    subagent_type: "probe",
    description: '{"op":"tools"}',
  });
  const { outcome } = await execution.settle();
  const result = resultFromTaskOutcome(outcome);
  summary.session_kind = execution.kind;
  summary.session_status = result.structuredContent?.status ?? null;
} finally {
  await session.close();
}
await client.close();
console.log(JSON.stringify(summary));
