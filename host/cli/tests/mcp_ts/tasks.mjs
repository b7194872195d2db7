// The Tasks add-on of the official TypeScript MCP client (@modelcontextprotocol/ext-tasks) drives
// background tasks on `guild serve` through its task API, on a 2025-11-25 session (the
// client's default): a task created, polled, settled and its result read again; another
// cancelled; both listed.
// Usage: node tasks.mjs stdio GUILD_BINARY CONFIG | node tasks.mjs http URL
// Every check throws on failure (exit 1); on success the last line is a JSON summary that the
// Rust test (host/cli/tests/mcp_extensions.rs) reads.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";

const [mode, target, config] = process.argv.slice(2);
const check = (ok, what) => {
  if (!ok) throw new Error(`check failed: ${what}`);
};

const transport =
  mode === "http"
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({
        command: target,
        args: ["--config", config, "serve"],
        env: { PATH: process.env.PATH ?? "" },
        stderr: "inherit",
      });
const client = new Client({ name: "guild-ts-tasks-test", version: "1.0.0" });
await client.connect(transport);
const summary = {
  protocol: client.getNegotiatedProtocolVersion?.() ?? null,
  capability: client.getServerCapabilities()?.tasks ?? null,
};
const probe = (op) => ({ subagent_type: "probe", description: JSON.stringify(op) });
const asTask = { task: { preference: "require" } };

const session = createTaskSessionFromClient(client, { endpointId: "guild-tasks-test" });
try {
  // Created as a task, polled, settled.
  const run = await session.callTool("task", probe({ op: "reports", texts: ["first", "second"] }), asTask);
  summary.kind = run.kind;
  const id = run.handle.taskId;
  summary.polled = (await session.task(id).snapshot()).status;
  const seen = [];
  const { outcome } = await run.settle({
    onEvent: (event) => {
      if (event.type === "task") seen.push(event.task.status);
    },
  });
  summary.seen = seen;
  const result = resultFromTaskOutcome(outcome);
  summary.status = result.structuredContent?.status ?? null;
  summary.settled = (await session.task(id).snapshot()).status;
  // The result again, from tasks/result.
  const again = await session.task(id).result();
  summary.again = again.status === "completed" ? again.result?.structuredContent?.status ?? null : again.status;

  // Another one, cancelled while it runs.
  const sleeper = await session.callTool("task", probe({ op: "sleep", ms: 60000 }), asTask);
  const sleeperId = sleeper.handle.taskId;
  check(sleeperId !== id, "two tasks, two ids");
  await sleeper.cancel();
  const cancelled = await sleeper.result();
  summary.cancelled = cancelled.status;
  summary.cancelled_on_server = (await session.task(sleeperId).snapshot()).status;

  // Both listed, newest first.
  const { tasks } = await session.listTasks();
  const listed = Object.fromEntries(tasks.map((t) => [t.taskId, t.status]));
  summary.listed = [listed[id] ?? null, listed[sleeperId] ?? null];
  summary.newest = tasks[0]?.taskId === sleeperId;

  // Without a preference the same call stays synchronous.
  const plain = await session.callTool("task", probe({ op: "brief" }));
  summary.plain_kind = plain.kind;
} finally {
  await session.close();
}
await client.close();
console.log(JSON.stringify(summary));
