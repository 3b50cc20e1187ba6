// Test MCP server (stdio): one tool, `slow_report`, whose execution.taskSupport is "optional", built with the
// TypeScript SDK's task support (the Python SDK's server cannot serve task-augmented tools/call on the 2025-11-25
// wire). Called as a task it reports a status message per stage (each stage lasts --stage-ms, default 300); called
// plainly the SDK runs the same task and answers when it ends, with no status seen by the client.
//
//   node task_server.mjs [--stage-ms MS]
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const flag = process.argv.indexOf("--stage-ms");
const STAGE_MS = flag > 0 ? Number(process.argv[flag + 1]) : 300;
const STAGES = ["Counting rows", "Writing the report"];

const server = new McpServer(
  { name: "task-server", version: "1.0.0" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

async function work(taskId, topic, store) {
  for (const stage of STAGES) {
    await store.updateTaskStatus(taskId, "working", `${stage}...`);
    await new Promise((resolve) => setTimeout(resolve, STAGE_MS));
  }
  await store.storeTaskResult(taskId, "completed", { content: [{ type: "text", text: `Report on ${topic}` }] });
}

server.experimental.tasks.registerToolTask(
  "slow_report",
  {
    description: "Writes a report on a topic, in stages; may run as a task.",
    inputSchema: { topic: z.string() },
    execution: { taskSupport: "optional" },
    annotations: { readOnlyHint: true },
  },
  {
    createTask: async ({ topic }, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 100 });
      work(task.taskId, topic, extra.taskStore).catch((error) =>
        extra.taskStore.updateTaskStatus(task.taskId, "failed", String(error)).catch(() => {}),
      );
      return { task };
    },
    getTask: async (_args, extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => await extra.taskStore.getTaskResult(extra.taskId),
  },
);

await server.connect(new StdioServerTransport());
