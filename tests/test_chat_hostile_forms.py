"""A server's form (elicitation) whose schema is not the protocol's flat object of primitive fields, against
tests/servers/hostile_form_server.py (the 2026-07-28 protocol, where the SDK passes a form's fields on as any JSON):
shown to the person reduced to what the protocol allows (the parts that are not text left out), and declined, with
the reason for the model, when it cannot be reduced; with and without a person (the chat session, an agent run
answering with defaults)."""

from __future__ import annotations

import shlex
import sys
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerRequestPolicy, ServerSpec
from knime_mcp.mcp.form_schema import FormSchemaError, reduce_form
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, run_scripted, scripted
from test_chat_session import _event

HOSTILE_FORMS = shlex.join([sys.executable, str(SERVERS_DIR / "hostile_form_server.py")])

REDUCED = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "colour": {"type": "string", "enum": ["red", "green"], "title": "Colour"},
        "size": {"type": "string", "oneOf": [{"const": "s"}, {"const": "l", "title": "Large"}]},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": ["name"],
}
"""The server's odd form as the person sees it: the parts that are not text left out, the fields all there."""


@pytest.fixture(scope="module")
def tools() -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(ServerSpec(target=HOSTILE_FORMS, name="forms"))).tools


def test_a_form_whose_shown_parts_are_not_text_reaches_the_person_reduced(tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "odd_form", {})), AIMessage("Thanks."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        session.send("Ask me.")
        form = _event(session, "form")
        assert form["schema"] == REDUCED and form["message"] == "Tell me about you."
        answer = {"name": "Ada", "colour": "green", "size": "l", "count": 2, "tags": ["a", "b"]}
        session.answer_form(form["form_id"], "accept", answer)
        end = _event(session, "tool_end")
        _event(session, "turn_end")
    assert end["status"] == "ok" and end["text"] == f"accept: {answer}"


def test_a_form_that_cannot_be_reduced_is_declined_with_the_reason_and_no_person_sees_it(tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "nested_form", {})), AIMessage("No form."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        session.send("Ask me.")
        end = _event(session, "tool_end")
        _event(session, "turn_end")
        assert not [event for event in session.events() if event["type"] == "form"]
    # The server hears the decline; the call fails with the reason, which the model and the log see
    reason = "asks for a form ('Where do you live?') that cannot be shown: its field 'address' is of type 'object'"
    assert end["status"] == "tool_error" and "asked for input, which knime-mcp declined" in end["text"]
    assert reason in end["text"]


def test_without_a_person_a_form_is_reduced_before_its_defaults_answer_it(tools: list[MCPTool]) -> None:
    # A default that is not of its field's kind is no default: the form has fields without one and is declined
    config = AgentConfig(server_requests=ServerRequestPolicy(elicitation="defaults"))
    run = run_scripted(scripted(calls(("c1", "odd_form", {})), AIMessage("Done.")), tools, config=config)
    assert run.log[0].status == "tool_error"
    assert "these fields have no default: name, colour, size, count, tags" in (run.log[0].error or "")
    assert run.conversation.new_messages[-1].text == "Done."


@pytest.mark.parametrize(
    "schema",
    [
        [], {"type": "array"}, {"properties": []}, {"properties": {"a": "text"}}, {"required": "a"},
        {"properties": {"a": {"type": "string", "enum": [{"x": 1}]}}},
        {"properties": {"a": {"type": "string", "enum": []}}},
        {"properties": {"a": {"type": "string", "oneOf": [{"title": "no const"}]}}},
        {"properties": {"a": {"type": "array", "items": {"type": "string"}}}},
        {"properties": {"a": {"type": "array"}}}, {"properties": {"a": {}}},
    ],
)  # fmt: skip
def test_a_schema_that_leaves_what_may_be_answered_unclear_cannot_be_reduced(schema: Any) -> None:
    with pytest.raises(FormSchemaError):
        reduce_form(schema)


def test_a_reduced_form_keeps_every_part_of_the_right_kind() -> None:
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "minLength": 3, "maxLength": 99, "default": "a@b.c",
                      "title": "E-mail", "description": "Where to write", "x-extra": {"kept": False}},
            "level": {"type": "number", "minimum": 0.5, "maximum": 2, "default": 1.5},
            "agree": {"type": "boolean", "default": True},
            "colour": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"], "default": "g"},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "minItems": 1,
                     "default": ["a"]},
        },
        "required": ["email", "email"],
    }  # fmt: skip
    reduced = reduce_form(schema)
    del schema["properties"]["email"]["x-extra"]
    assert reduced == {**schema, "required": ["email"]}
