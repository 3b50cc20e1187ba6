"""A minimal stdio MCP server without the SDK: one `report` tool whose work takes a fixed time, run as an MCP task
or plainly (figure 13).

    python task_server.py [--work-seconds S] [--poll-ms MS]

Called as a task (``tools/call`` with ``task``) it names the task at once and the task completes ``--work-seconds``
after the server received the call, on the server's clock; ``tasks/get`` says ``working`` until then with the
``--poll-ms`` interval. Called plainly it answers after the same time. The Python SDK's server cannot serve
task-augmented calls, and the TypeScript SDK's answers a plain call of a task tool by polling its own store at the
poll interval, so its plain call would be as late as a polling client: this one does the same work both ways.
Requests are answered one at a time (a client of the benchmark sends one at a time).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

_REPORT = {
    "name": "report",
    "description": "Write a report on a topic; takes a fixed time, and may run as a task.",
    "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
    "execution": {"taskSupport": "optional"},
}


@dataclass
class _Task:
    task_id: str
    topic: str
    created: str
    ends: float
    """When it completes, on :func:`time.monotonic`."""
    poll_ms: int
    cancelled: bool = False

    def status(self) -> str:
        if self.cancelled:
            return "cancelled"
        return "completed" if time.monotonic() >= self.ends else "working"

    def wire(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id, "status": self.status(), "createdAt": self.created, "lastUpdatedAt": self.created,
            "ttl": 60_000, "pollInterval": self.poll_ms,
        }  # fmt: skip


def _report(topic: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Report on {topic}"}]}


class _Server:
    def __init__(self, work_seconds: float, poll_ms: int) -> None:
        self.work_seconds = work_seconds
        self.poll_ms = poll_ms
        self.tasks: dict[str, _Task] = {}

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "knime-mcp-task-bench", "version": "1"},
            }
        if method == "tools/list":
            return {"tools": [_REPORT]}
        if method == "tools/call":
            return self.call(params)
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            task = self.tasks[params["taskId"]]
            if method == "tasks/cancel":
                task.cancelled = True
            if method == "tasks/result":
                time.sleep(max(0.0, task.ends - time.monotonic()))
                return _report(task.topic)
            return task.wire()
        return {}

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        topic = str(params.get("arguments", {}).get("topic", ""))
        if "task" not in params:
            time.sleep(self.work_seconds)
            return _report(topic)
        created = datetime.datetime.now(datetime.UTC).isoformat()
        task = _Task(f"t{len(self.tasks)}", topic, created, time.monotonic() + self.work_seconds, self.poll_ms)
        self.tasks[task.task_id] = task
        return {"task": task.wire()}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-seconds", type=float, default=2.0)
    parser.add_argument("--poll-ms", type=int, default=1000)
    options = parser.parse_args(argv)
    server = _Server(options.work_seconds, options.poll_ms)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = server.result(message["method"], message.get("params") or {})
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
