// Test MCP server (stdio): one tool, `slow_report`, whose execution.taskSupport is "optional", built with the
// TypeScript SDK's task support (the Python SDK's server cannot serve task-augmented tools/call on the 2025-11-25
// wire). Called as a task it reports a status message per stage (each stage lasts --stage-ms, default 300); called
// plainly the SDK runs the same task and answers when it ends, with no status seen by the client.
//
//   node task_server.mjs [--stage-ms MS] [--poll-ms MS] [--status-chars N] [--get-delay-ms MS]
//                        [--create-delay-ms MS] [--marks FILE] [--polls FILE]
//
// --poll-ms: the pollInterval the task announces (default 100). --status-chars: each status message padded with
// "x" to N characters (a server that says too much). --get-delay-ms: tasks/get answered that late (a slow server:
// a task may end while the client waits, and the SDK then refuses tasks/cancel, as it does for any ended task).
// --create-delay-ms: the task is created at once but its id answered that late (a client that gives up meanwhile
// learns which task to cancel only from that answer).
// --marks: each task's end written to FILE as it happens ("started", "cancelled" by tasks/cancel, "completed"), so a
// test reads on disk what the server saw even after the client stopped it.
// --polls: a line written to FILE for each tasks/get the server answers (how often the client polled).
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { GetTaskRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function option(name, fallback) {
  const flag = process.argv.indexOf(name);
  return flag > 0 ? process.argv[flag + 1] : fallback;
}

const STAGE_MS = Number(option("--stage-ms", 300));
const POLL_MS = Number(option("--poll-ms", 100));
const STATUS_CHARS = Number(option("--status-chars", 0));
const GET_DELAY_MS = Number(option("--get-delay-ms", 0));
const CREATE_DELAY_MS = Number(option("--create-delay-ms", 0));
const MARKS = option("--marks", null);
const POLLS = option("--polls", null);
const STAGES = ["Counting rows", "Writing the report"];

function mark(word) {
  if (MARKS) appendFileSync(MARKS, `${word}\n`);
}

/** The SDK's store, noting each task's end as it happens (tasks/cancel goes through updateTaskStatus). */
class MarkingTaskStore extends InMemoryTaskStore {
  async updateTaskStatus(taskId, status, statusMessage, sessionId) {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === "cancelled") mark("cancelled");
  }

  async storeTaskResult(taskId, status, result, sessionId) {
    await super.storeTaskResult(taskId, status, result, sessionId);
    mark(status);
  }
}

const store = new MarkingTaskStore();
const server = new McpServer(
  { name: "task-server", version: "1.0.0" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: store,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

if (GET_DELAY_MS > 0 || POLLS) {
  server.server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    if (POLLS) appendFileSync(POLLS, "polled\n");
    if (GET_DELAY_MS > 0) await new Promise((resolve) => setTimeout(resolve, GET_DELAY_MS));
    return { ...(await store.getTask(request.params.taskId, extra.sessionId)) };
  });
}

async function work(taskId, topic, store) {
  for (const stage of STAGES) {
    await store.updateTaskStatus(taskId, "working", `${stage}...`.padEnd(STATUS_CHARS, "x"));
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
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: POLL_MS });
      mark("started");
      work(task.taskId, topic, extra.taskStore).catch((error) =>
        extra.taskStore.updateTaskStatus(task.taskId, "failed", String(error)).catch(() => {}),
      );
      await new Promise((resolve) => setTimeout(resolve, CREATE_DELAY_MS));
      return { task };
    },
    getTask: async (_args, extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => await extra.taskStore.getTaskResult(extra.taskId),
  },
);

await server.connect(new StdioServerTransport());
