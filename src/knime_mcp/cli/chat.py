"""The command line's ``chat`` command: a conversation with the agent on the terminal, over the same core as the
chat view (:class:`~knime_mcp.agent.chat_session.ChatSession`).

The answer streams as it is generated; each tool call shows when it starts and when it ends; a call that needs
approval (``--ask-*``) is asked about (y, n or always; ``--approve all|none`` answers for the person); a running
call's progress and an MCP task's status messages show as lines; a result of several lines shows as indented lines;
a server's form is asked field by field; a sign-in link is shown; ``/instructions`` shows what each server says about
itself; a result shows the parts its server meant for the person (not those for the model only). Ctrl-C stops the
turn, and the calls in flight on the servers, not the chat; ``/exit`` or the end of input ends it. Everything a
model, a tool or a server wrote is printed :func:`~knime_mcp.cli.render.terminal_safe`.

    knime-mcp chat http://127.0.0.1:8000/mcp --provider ollama --model llama3.2
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from knime_mcp.cli.agent import add_agent_run_options, agent_setup
from knime_mcp.cli.approval_options import approver
from knime_mcp.cli.render import one_line, terminal_safe
from knime_mcp.cli.tool_stats_output import write_stats

if TYPE_CHECKING:
    from knime_mcp.agent.approval import Approver
    from knime_mcp.agent.chat_session import ChatSession
    from knime_mcp.cli.servers import SignInPrompt

__all__ = ["add_chat_command", "run_chat_command"]

_EXIT = ("/exit", "/quit")
_INSTRUCTIONS = "/instructions"
_WAIT_SECONDS = 0.5
"""How long one wait for new events lasts: Ctrl-C is seen between waits at the latest."""
_SHOWN_RESULT = 300
"""Characters of a tool's result shown on its line."""
_YES = ("y", "yes", "true", "1")
_NO = ("n", "no", "false", "0")


def add_chat_command(commands: Any, parent: argparse.ArgumentParser) -> None:
    """Add ``chat`` to the CLI's subparsers: the options of every agent run (``agent`` has the same), without a
    prompt, which the person types."""
    add_agent_run_options(commands.add_parser("chat", parents=[parent], help="talk with an LLM that uses the tools"))


def run_chat_command(args: argparse.Namespace, command: list[str], out: TextIO, err: TextIO, show: SignInPrompt) -> int:
    from knime_mcp.agent.chat_session import ChatSession
    from knime_mcp.llm.chat_model import build_chat_model
    from knime_mcp.mcp.sync import run_sync

    setup = agent_setup(args, command, err)
    tools = run_sync(setup.tools, show)
    system = {} if args.system is None else {"system_message": args.system}
    model = build_chat_model(setup.model, setup.api_key)
    with ChatSession(
        model, tools, config=setup.config, secrets=[setup.api_key], open_browser=True, **system
    ) as session:
        out.write(
            f"Chatting with {len(tools)} tools. Ctrl-C stops an answer; {_INSTRUCTIONS} shows what the servers say "
            "about themselves; /exit or Ctrl-D ends the chat.\n"
        )
        _Terminal(session, approver(args, out), out, err).converse()
        if args.stats:
            write_stats(session.run().log, out)
    return 0


class _Terminal:
    """Reads the person's lines and shows the chat's events until each turn ends."""

    def __init__(self, session: ChatSession, decider: Approver, out: TextIO, err: TextIO) -> None:
        self._session, self._decider, self._out, self._err = session, decider, out, err
        self._seq = 0
        self._streaming = False
        self._form: dict[str, Any] | None = None
        """The form last answered, asked again when the session refuses the answer."""

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def converse(self) -> None:
        while (line := self._line("> ")) is not None:
            if line.strip() in _EXIT:
                return
            if line.strip() == _INSTRUCTIONS:
                self._write(_instructions(self._session.instructions()))
            elif line.strip():
                self._session.send(line)
                self._follow()

    def _line(self, prompt: str) -> str | None:
        """A line the person typed, None at the end of input; Ctrl-C at the prompt asks again."""
        while True:
            self._write(prompt)
            try:
                line = sys.stdin.readline()
            except KeyboardInterrupt:
                self._write("\n")
                continue
            return line.rstrip("\n") if line else None

    def _follow(self) -> None:
        """Show the turn's events until it ends; Ctrl-C stops it."""
        while True:
            try:
                for event in self._session.events(self._seq, wait=_WAIT_SECONDS):
                    self._seq = event["seq"]
                    if self._show(event):
                        return
            except KeyboardInterrupt:
                self._write("\n[stopping the answer and the calls in flight]\n")
                self._session.stop()

    def _show(self, event: dict[str, Any]) -> bool:
        """Show one event (asking what it asks); True at the end of the turn."""
        kind = event["type"]
        if kind == "assistant_delta":
            self._streaming = True
            self._write(terminal_safe(event["text"]))
            return False
        self._end_stream()
        match kind:
            case "tool_start":
                where = f" on {event['server']}" if event["server"] else ""
                arguments = json.dumps(event["arguments"], ensure_ascii=False, default=str)
                self._write(f"[calling {one_line(event['tool'])}{one_line(where)} with {one_line(arguments)}]\n")
                if app := event.get("app"):
                    self._write(_app_line(event["tool"], app))
            case "tool_end":
                self._form = None
                self._write(_ended(event))
            case "progress":
                self._write(f"[{one_line(event['tool'])}: {one_line(event['text'])}]\n")
            case "approval":
                self._approve(event)
            case "form":
                self._fill_in(event)
            case "sign_in":
                self._write(f"[sign in to {one_line(event['server'])} at {one_line(event['url'])}]\n")
            case "error":
                self._err.write(f"Error: {one_line(event['message'])}\n")
                if self._form is not None and event.get("form_id") == self._form["form_id"]:
                    self._fill_in(self._form)
            case "turn_end":
                return True
        return False

    def _end_stream(self) -> None:
        if self._streaming:
            self._write("\n")
            self._streaming = False

    def _approve(self, event: dict[str, Any]) -> None:
        import anyio

        from knime_mcp.agent.approval import ApprovalRequest

        fields = {name: value for name, value in event.items() if name not in ("seq", "type")}
        decision = anyio.run(self._decider.decide, ApprovalRequest(**fields))
        self._session.decide(event["call_id"], decision.choice, decision.arguments, decision.reason)

    def _fill_in(self, form: dict[str, Any]) -> None:
        """Ask the form's fields one by one (or, for a page, whether the person is done with it)."""
        self._form = form
        self._write(f"[{one_line(form['server'])} asks] {one_line(form['message'])}\n")
        if form["url"] is not None:
            self._write(f"  The page (open it yourself if you trust it): {one_line(form['url'])}\n")
            action = self._choice("Done with the page? [y = accept / n = decline / c = cancel] ")
            self._session.answer_form(form["form_id"], action)
            return
        action = self._choice("Fill it in? [y = accept / n = decline / c = cancel] ")
        content = self._fields(form["schema"]) if action == "accept" else None
        self._session.answer_form(form["form_id"], action, content)

    def _choice(self, prompt: str) -> Any:
        while (line := self._line(prompt)) is not None:
            answer = line.strip().lower()
            if answer in _YES or answer == "accept":
                return "accept"
            if answer in _NO or answer == "decline":
                return "decline"
            if answer in ("c", "cancel"):
                return "cancel"
        return "cancel"

    def _fields(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The fields of a form the core reduced to the protocol's (``knime_mcp.mcp.form_schema``), asked in turn."""
        content: dict[str, Any] = {}
        required = set(schema["required"])
        for name, field in schema["properties"].items():
            kind = field["type"]
            notes = [kind, *(["required"] if name in required else [])]
            if choices := _choices(field.get("items", field)):
                many = kind == "array"
                notes.append(f"one or more of {choices}, separated by commas" if many else f"one of {choices}")
            if "default" in field:
                default = field["default"]
                notes.append(f"default {', '.join(default) if isinstance(default, list) else default}")
            label = one_line(field.get("title") or name)
            text = self._line(f"  {label} ({one_line('; '.join(notes))}): ") or ""
            if text.strip():
                content[name] = _typed(text.strip(), kind)
            elif "default" in field:
                content[name] = field["default"]
        return content


def _instructions(found: list[dict[str, Any]]) -> str:
    """Each server's instructions under its name, indented, so no line of theirs passes for one of the chat's own."""
    if not found:
        return "[no server connected so far has given instructions]\n"
    blocks = []
    for item in found:
        cut = " (cut)" if item["cut"] else ""
        lines = "".join(f"  {terminal_safe(line)}\n" for line in item["text"].split("\n"))
        blocks.append(f"[instructions of {one_line(item['server'])}{cut}]\n{lines}")
    return "".join(blocks)


def _app_line(tool: str, app: dict[str, str]) -> str:
    """The line under a call whose tool has an MCP App, which a terminal cannot render."""
    where = f"{one_line(app['uri'])} on {one_line(app['server'])}"
    return (
        f"[{one_line(tool)} has an app ({where}) that the terminal cannot show; run this chat in KNIME's Agent Chat "
        "to see it]\n"
    )


def _ended(event: dict[str, Any]) -> str:
    """A call's end: its status on a line, with its result (cut short) after it, or under it as indented lines (so
    no line of a result passes for one of the chat's own)."""
    text = event["text"] if len(event["text"]) <= _SHOWN_RESULT else event["text"][:_SHOWN_RESULT] + "…"
    images = f", {len(event['images'])} image(s)" if event["images"] else ""
    head = f"[{event['status']} in {event['duration_ms']:.0f} ms{images}]"
    lines = [one_line(line) for line in text.strip("\n").split("\n")]
    return f"{head} {lines[0]}\n" if len(lines) == 1 else head + "\n" + "".join(f"  {line}\n" for line in lines)


def _choices(field: dict[str, Any]) -> str:
    """A choice field's values, each with its label when it has one: ``s, l (Large)``."""
    labels = field.get("enumNames") or field.get("enum") or []
    values = [(value, label) for value, label in zip(field.get("enum") or [], labels, strict=False)]
    values += [(option["const"], option.get("title")) for option in field.get("oneOf") or field.get("anyOf") or []]
    return ", ".join(value if label in (None, value) else f"{value} ({label})" for value, label in values)


def _typed(text: str, kind: str) -> Any:
    """The typed text as the field's type asks; left as text when it is not one (the form's check says so)."""
    if kind == "array":
        return [part.strip() for part in text.split(",") if part.strip()]
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    if kind == "boolean" and text.lower() in (*_YES, *_NO):
        return text.lower() in _YES
    return text
