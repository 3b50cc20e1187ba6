"""The nodes as KNIME handles them around configure and execute (Given/When/Then).

What KNIME's launcher builds from the node classes (the description from docstrings and port texts, the dialog's
schema and UI schema) exists only in KNIME's own sources: those checks are marked ``knime_launcher`` and run on the
real-API leg only (``tests/conftest.py``). The rest runs on both hosts through ``node_host``: settings saved, loaded
and checked, flow variables overriding settings, specs through a workflow configured before anything runs, the chat
model port in a saved workflow, credentials, cancellation, and tables without batches.

Settings saved by an older version that lack a parameter: a parameter without ``since_version`` counts as present
since the first version. ``validateParameters``, which KNIME calls on settings being applied, rejects such settings
('Parameter missing for key "…".'), while ``setParameters`` alone leaves the parameter at its default. A parameter
added later therefore gets ``since_version`` (``SINCE``), and settings from before it load with its default.
"""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from typing import Any

import knime.extension as knext
import pyarrow as pa
import pytest

import node_host
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from knime_mcp.agent.call_log import LOG_COLUMNS
from knime_mcp.errors import CancelledByUser, ConfigError
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext
from nodes import CATEGORY
from nodes.agent_chat import AgentChat
from nodes.agent_prompter import AgentPrompter
from nodes.chat_model_connector import NO_API_KEY, ChatModelConnector
from nodes.http_tool_provider import HTTPToolProvider
from nodes.knime_io.chat_model_port import CHAT_MODEL_PORT_ID, ChatModelPortObject
from nodes.knime_io.tables import knime_columns
from nodes.parameters.credentials import NO_CREDENTIAL
from nodes.parameters.server import server_spec
from nodes.program_tool_provider import ProgramToolProvider
from nodes.prompt import MCPPrompt
from nodes.resource_reader import MCPResourceReader
from nodes.tool_caller import MCPToolCaller
from nodes.tool_provider import MCPToolProvider
from nodes.tool_statistics import ToolStatistics

pytestmark = pytest.mark.knime_node
launcher_only = pytest.mark.knime_launcher

NODES: dict[str, Callable[[], Any]] = {
    "MCPToolProvider": MCPToolProvider,
    "MCPToolCaller": MCPToolCaller,
    "ChatModelConnector": ChatModelConnector,
    "AgentPrompter": AgentPrompter,
    "AgentChat": AgentChat,
    "MCPResourceReader": MCPResourceReader,
    "MCPPrompt": MCPPrompt,
    "HTTPToolProvider": HTTPToolProvider,
    "ProgramToolProvider": ProgramToolProvider,
    "ToolStatistics": ToolStatistics,
}
CREDENTIALS = {"llm": ("", "sk-in-knime-canary-93d1"), "mcp-token": ("", "tok-in-knime-canary-5e02")}
API_KEY = CREDENTIALS["llm"][1]
TLS_SETTINGS = ("ca_bundle", "system_trust", "client_cert", "client_key", "key_credential", "skip_verification")
"""The TLS group's settings (nodes/parameters/tls.py): in the server settings, and on their own in the HTTP Tool
Provider; all advanced."""
ADVANCED = {
    "MCPToolProvider": {
        "server.headers", "server.environment", "server.trust_flow_variable", "selection.unannotated_destructive",
        "auth.client_id", "auth.scope", "auth.issuer", "auth.sign_in_again", "auth.browser_sign_in", "server.roots",
        "auth.private_key_jwt", "auth.dpop", "timeouts.progress_max", "auth.idp_client_id", "auth.idp_secret",
        *(f"server.tls.{name}" for name in TLS_SETTINGS), "team_seal_key", "fail_on_server_failure",
        "catalog.registry_url",
    },
    "MCPToolCaller": {
        "calls.retries", "calls.concurrent_writes", "calls.trust_all_servers", "calls.browser_sign_in",
        "calls.elicitation", "team_seal_key", "calls.granted_permissions",
    },
    "ChatModelConnector": {"timeout", "trust_flow_variable"},
    "AgentPrompter": {
        "tool_errors", "max_concurrency", "call_timeout", "output_cap", "allow", "deny", "unannotated_destructive",
        "trust_all_servers", "browser_sign_in", "elicitation", "sampling", "sampling_max_tokens",
        "sampling_max_prompt_bytes", "sampling_max_requests", "resources", "ask_unannotated", "ask_pattern",
        "team_seal_key", "only_tagged", "tool_budget", "tool_budget_bytes", "pinned_tools", "server_instructions",
        "granted_permissions",
        "skills", "skill_scripts", "tool_hints",
    },
}  # fmt: skip
ADVANCED["AgentChat"] = ADVANCED["AgentPrompter"] - {"elicitation", "browser_sign_in"}
_SERVER_ADVANCED = ADVANCED["MCPToolProvider"] - {
    "selection.unannotated_destructive", "team_seal_key", "fail_on_server_failure", "catalog.registry_url",
}  # fmt: skip
ADVANCED |= {"MCPResourceReader": _SERVER_ADVANCED, "MCPPrompt": _SERVER_ADVANCED}
ADVANCED["HTTPToolProvider"] = {
    "document.trust_flow_variable", "document.trust_webhooks", "document.max_document_mb",
    "document.max_response_mb",
    "selection.unannotated_destructive", "timeouts.progress_max", *(f"tls.{name}" for name in TLS_SETTINGS),
    "team_seal_key",
}  # fmt: skip
"""The settings each dialog shows only under "advanced settings"; the Resource Reader and the Prompt node share the
provider's server settings."""
ADVANCED["ToolStatistics"] = set()
ADVANCED["ProgramToolProvider"] = {
    "program.environment", "program.max_output_mb", "program.trust_flow_variable", "team_seal_key",
    "selection.unannotated_destructive",
}  # fmt: skip
SINCE = {
    "calls.concurrent_writes": "0.2.0", "unannotated_destructive": "0.2.0",
    "selection.unannotated_destructive": "0.2.0",
    "auth.client_id": "0.3.0", "auth.scope": "0.3.0", "auth.sign_in_again": "0.3.0", "auth.browser_sign_in": "0.3.0",
    "calls.browser_sign_in": "0.3.0", "browser_sign_in": "0.3.0",
    "server.roots": "0.3.0", "calls.elicitation": "0.3.0", "elicitation": "0.3.0", "sampling": "0.3.0",
    "sampling_max_tokens": "0.3.0", "sampling_max_requests": "0.3.0", "resources": "0.3.0",
    "auth.issuer": "0.4.0", "sampling_max_prompt_bytes": "0.4.0", "document.max_document_mb": "0.4.0",
    "provider": "0.5.0", "api_version": "0.5.0",
    "ask_destructive": "0.5.0", "ask_unannotated": "0.5.0", "ask_pattern": "0.5.0", "ask_all": "0.5.0",
    "show_tool_calls": "0.5.0", "initial_message": "0.5.0", "pasted_config": "0.5.0", "server_key": "0.5.0",
    "team_seal_key": "0.5.0", "show_apps": "0.5.0", "fail_on_server_failure": "0.5.0",
    "selection.tags": "0.5.0", "tool.tags": "0.5.0", "only_tagged": "0.5.0",
    "auth.private_key_jwt": "0.5.0", "auth.dpop": "0.5.0", "timeouts.progress_max": "0.5.0", "calls.tasks": "0.5.0",
    "tasks": "0.5.0", "server_instructions": "0.5.0", "skills": "0.5.0", "document.max_response_mb": "0.5.0",
    "tool_budget": "0.5.0", "tool_budget_bytes": "0.5.0", "pinned_tools": "0.5.0", "tool_hints": "0.5.0",
    "auth.token_file": "0.5.0", "auth.identity_assertion": "0.5.0", "auth.idp_token_endpoint": "0.5.0",
    "auth.idp_client_id": "0.5.0", "auth.idp_secret": "0.5.0", "trust_flow_variable": "0.5.0",
    "granted_permissions": "0.5.0", "calls.granted_permissions": "0.5.0",
    **{f"{group}tls.{name}": "0.5.0" for group in ("", "server.") for name in TLS_SETTINGS},
    "skill_scripts": "0.5.0",
    **{f"catalog.{name}": "0.5.0" for name in ("source", "preset", "name", "version", "registry_url")},
    **{f"program.{name}": "0.5.0" for name in (
        "name", "description", "command", "arguments", "input_schema", "working_folder", "environment", "timeout",
        "max_output_mb", "trust_flow_variable",
    )},
}  # fmt: skip
"""Settings added after the first version, and the version that added them."""
CHANGED = {
    "MCPToolProvider": {"server.server": "demo", "auth.kind": "BEARER", "auth.credential": "mcp-token"},
    "MCPToolCaller": {
        "tool.name": "echo", "tool.mapping": '{"text": "{x}"}', "calls.concurrency": 8,
        "calls.granted_permissions": ["NETWORK"],
    },
    "ChatModelConnector": {
        "provider": "AZURE", "base_url": "https://example-resource.openai.azure.com", "api_version": "2024-10-21",
        "model": "local-model", "credential": "llm", "set_temperature": False, "max_tokens": 512,
    },
    "AgentPrompter": {
        "user_message": "Hi", "mcp_column": "MCP Tool", "iteration_limit": 3, "errors": "COLUMN",
        "granted_permissions": ["FILES", "PROCESSES"],
    },
    "AgentChat": {"initial_message": "Hello", "show_tool_calls": False, "iteration_limit": 3, "ask_all": True},
    "MCPResourceReader": {"server.server": "demo", "contents.read": "LISTED", "contents.concurrency": 8},
    "MCPPrompt": {"server.server": "demo", "prompt.name": "review_chart", "prompt.arguments": '{"values": "1"}'},
    "HTTPToolProvider": {
        "document.document": "http://nonexistent.invalid/openapi.json", "auth.kind": "BEARER",
        "auth.credential": "mcp-token",
    },
    "ToolStatistics": {},
    "ProgramToolProvider": {"program.name": "word_count", "program.command": "wc", "program.arguments": "-w\n{path}"},
}
"""Settings other than the defaults, to see them saved and loaded."""
_SCOPE = "#/properties/model/properties/"


def _node(node_id: str, **settings: Any) -> Any:
    """A node of ``node_id`` with ``settings`` (paths like ``server.server``) set."""
    node = NODES[node_id]()
    for path, value in settings.items():
        *groups, name = path.split(".")
        target = node
        for group in groups:
            target = getattr(target, group)
        setattr(target, name, value)
    return node


def _leaves(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Saved settings as ``{"group.name": value}``."""
    leaves: dict[str, Any] = {}
    for name, value in settings.items():
        if isinstance(value, dict):
            leaves.update(_leaves(value, f"{prefix}{name}."))
        else:
            leaves[prefix + name] = value
    return leaves


def _saved(node: Any) -> dict[str, Any]:
    return _leaves(json.loads(node_host.save_settings(node))["model"])


def _with(settings: str, path: str, value: Any = None, drop: bool = False) -> str:
    """``settings`` (saved JSON) with the setting at ``path`` set to ``value``, or left out."""
    data = json.loads(settings)
    *groups, name = path.split(".")
    target = data["model"]
    for group in groups:
        target = target[group]
    if drop:
        del target[name]
    else:
        target[name] = value
    return json.dumps(data)


def _controlled(node_id: str, node: Any, ctx: Any, path: str, variable: str, value: Any) -> Any:
    """``node`` as KNIME hands it its settings when the flow variable ``variable`` controls the setting at ``path``:
    the Java side writes the variable's value into the settings before Python gets them (``setParameters``), and the
    variable is among the node's flow variables."""
    ctx.flow_variables[variable] = value
    settings = _with(node_host.save_settings(node), path, value)
    return node_host.load_settings(node_id, settings, node_host.EXTENSION_VERSION)


def _no_rows(column: str) -> Any:
    """An input table of one text column and no rows, which KNIME may hand over without a batch."""
    return node_host.source_table(pa.table({column: pa.array([], pa.string())}))


def _empty_tools() -> Any:
    return _no_rows("MCP Tool")


def _model_port(base_url: str, ctx: ExecuteContext | None = None) -> Any:
    connector = _node("ChatModelConnector", base_url=base_url, model="fake-gpt", credential="llm")
    (port,) = node_host.execute_node(connector, ctx or ExecuteContext(CREDENTIALS))
    return port


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    """The specs at the nodes' input ports in a workflow configured before anything ran: the Chat Model Connector's
    and the MCP Tool Provider's configure outputs, and a data table with a list and a text column."""
    (model,) = node_host.configure_node(_node("ChatModelConnector", credential="llm"), ConfigureContext(CREDENTIALS))
    (tools,) = node_host.configure_node(_node("MCPToolProvider", **{"server.server": "demo"}), ConfigureContext())
    data = knext.Schema.from_columns(
        [knext.Column(knext.list_(knext.double()), "values"), knext.Column(knext.string(), "text")]
    )
    return {"model": model, "tools": tools, "data": data}


def _input_specs(node_id: str, upstream: dict[str, Any]) -> tuple[Any, ...]:
    return {
        "MCPToolProvider": (),
        "ChatModelConnector": (),
        "MCPToolCaller": (upstream["data"], upstream["tools"]),
        "AgentPrompter": (upstream["model"], upstream["tools"], None, []),
        "AgentChat": (upstream["model"], upstream["tools"], None, []),
        "MCPResourceReader": (None,),
        "MCPPrompt": (None,),
        "HTTPToolProvider": (None,),
        "ProgramToolProvider": (),
        "ToolStatistics": (knext.Schema.from_columns(knime_columns(LOG_COLUMNS)),),
    }[node_id]


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> Any:
    """The MCP Tool Provider's table of the demo server's tools."""
    (table,) = node_host.execute_node(_node("MCPToolProvider", **{"server.server": demo_http_url}), ExecuteContext())
    return table


# -- what KNIME's launcher builds: descriptions and dialogs -----------------------------------------------------------


def _xhtml(text: str) -> ElementTree.Element:
    """``text`` as KNIME's node description takes it: well-formed XHTML, with no Markdown left unrendered."""
    assert not any(marker in text for marker in ("**", "`", "](")), text
    return ElementTree.fromstring(f"<div>{text}</div>")


def _options(entry: dict[str, Any]) -> list[dict[str, str]]:
    """The options of a description: its own, or those of its tabs (top-level parameter groups)."""
    return entry["options"] or [option for tab in entry["tabs"] for option in tab["options"]]


def _controls(element: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every control of a UI schema, in the dialog's order."""
    if "scope" in element:
        yield element
    for child in element.get("elements", []):
        yield from _controls(child)


def _path(scope: str) -> str:
    return scope.removeprefix(_SCOPE).replace("/properties/", ".")


@launcher_only
@pytest.mark.parametrize("node_id", NODES)
def test_knime_describes_the_node_from_its_docstring_ports_and_parameters(node_id: str) -> None:
    # When KNIME reads the extension's nodes
    entry = node_host.describe_node(node_id)
    # Then the node sits under its id in the registered MCP category
    registered = {f"{c['path'].rstrip('/')}/{c['level_id']}": c["name"] for c in node_host.categories()}
    assert entry["id"] == node_id and entry["category"] == CATEGORY and registered[CATEGORY] == "MCP"
    # And its descriptions, every port's and every setting's, are there and render as KNIME's description takes them
    assert entry["short_description"].strip() and "Missing description." not in entry["short_description"]
    assert len(_xhtml(entry["full_description"])) > 1 and "Missing description." not in entry["full_description"]
    node = _node(node_id)
    ports = entry["input_port_specifier"] + entry["output_port_specifier"]
    assert [port["name"] for port in ports] == [port.name for port in [*node.input_ports, *node.output_ports]]
    options = _options(entry)
    assert len(options) == len(_saved(node))
    for described in [*ports, *options]:
        assert "No description available" not in described["description"]
        assert "".join(_xhtml(described["description"]).itertext()).strip()
    for tab in entry["tabs"]:
        _xhtml(tab["description"])


@launcher_only
@pytest.mark.parametrize("node_id", NODES)
def test_the_dialog_has_a_control_for_every_setting_described_and_advanced_as_intended(
    node_id: str, upstream: dict[str, Any]
) -> None:
    # Given the node in a workflow with credentials, its inputs connected as configured
    node = _node(node_id)
    # When KNIME opens its dialog
    shown = node_host.dialog(node, ConfigureContext(CREDENTIALS), *_input_specs(node_id, upstream))
    # Then the dialog shows the saved settings, each with one control, labelled as the description names it
    controls = list(_controls(shown["ui_schema"]))
    assert _leaves(shown["data"]["model"]) == _saved(node)
    assert [_path(c["scope"]) for c in controls] == list(_saved(node))
    assert [c["label"] for c in controls] == [option["name"] for option in _options(node_host.describe_node(node_id))]
    # And exactly the advanced settings are marked advanced, and every text renders
    assert {_path(c["scope"]) for c in controls if c["options"].get("isAdvanced")} == ADVANCED[node_id]
    for text in _descriptions(shown["schema"]):
        _xhtml(text)


def _descriptions(schema: dict[str, Any]) -> Iterator[str]:
    for key, value in schema.items():
        if isinstance(value, dict):
            yield from _descriptions(value)
        elif key == "description":
            yield value


@launcher_only
def test_the_agents_tool_column_choices_are_the_string_columns_and_the_workflow_tool_columns(
    upstream: dict[str, Any],
) -> None:
    from knime.types.tool import WorkflowTool

    # Given a tools table with the provider's columns and a workflow tool column
    tools = knext.Schema.from_columns([*upstream["tools"], knext.Column(knext.logical(WorkflowTool), "Workflow Tool")])
    # When the Agent Prompter's dialog opens
    shown = node_host.dialog(_node("AgentPrompter"), ConfigureContext(), upstream["model"], tools, None, [])
    # Then the MCP tool column offers the text columns ('MCP Tool' among them) and no other, the workflow tool
    # column only the workflow tool column
    choices = {
        _path(c["scope"]): [value["id"] for value in c["options"]["possibleValues"]]
        for c in _controls(shown["ui_schema"])
        if "possibleValues" in c["options"]
    }
    text_columns = [c.name for c in upstream["tools"] if c.ktype == knext.string()]
    assert "MCP Tool" in choices["mcp_column"] and choices["mcp_column"] == text_columns
    assert not {"Read-only", "Workflow Tool"} & set(choices["mcp_column"])
    assert choices["workflow_column"] == ["Workflow Tool"]


def _choices(shown: dict[str, Any], *path: str) -> list[str]:
    properties = shown["schema"]["properties"]["model"]
    for group in path[:-1]:
        properties = properties["properties"][group]
    return [choice["const"] for choice in properties["properties"][path[-1]]["oneOf"]]


@launcher_only
def test_the_providers_credential_selector_offers_no_credential_and_the_workflows_credentials() -> None:
    shown = node_host.dialog(_node("MCPToolProvider"), ConfigureContext(CREDENTIALS))
    assert _choices(shown, "auth", "credential") == [NO_CREDENTIAL, "llm", "mcp-token"]
    assert _choices(shown, "server", "tls", "key_credential") == [NO_CREDENTIAL, "llm", "mcp-token"]


@launcher_only
def test_after_a_dialog_showed_the_credentials_a_new_oauth_sign_in_binds_none_of_them() -> None:
    # Given the dialogs of a provider and an HTTP Tool Provider shown in a workflow with two credentials (KNIME makes
    # the first choice the default of an empty parameter, for every node of the kind made afterwards)
    node_host.dialog(_node("MCPToolProvider"), ConfigureContext(CREDENTIALS))
    node_host.dialog(_node("HTTPToolProvider"), ConfigureContext(CREDENTIALS), None)
    # When a new provider signs in with OAuth, whose client secret is optional, with a client certificate and no
    # passphrase, and a new HTTP Tool Provider sends a bearer token without a credential chosen
    provider = _node("MCPToolProvider", **{"server.server": "https://mcp.example.com/mcp", "auth.kind": "OAUTH"})
    provider.server.tls.client_cert = "/certs/client.pem"
    spec = server_spec(provider.server, provider.auth, provider.timeouts)
    http = _node("HTTPToolProvider", **{"auth.kind": "BEARER"})
    # Then no credential of the workflow is bound silently: the sign-in sends no secret, the key no passphrase, and the
    # bearer token asks for its credential
    assert spec.auth.credential is None and spec.tls.key_credential is None
    with pytest.raises(ConfigError, match="Choose the credential"):
        http._auth()


@launcher_only
def test_the_connectors_key_selector_offers_no_key_and_the_credentials_and_new_connectors_keep_no_key() -> None:
    # When the connector's dialog opens in a workflow with two credentials flow variables
    shown = node_host.dialog(_node("ChatModelConnector"), ConfigureContext(CREDENTIALS))
    # Then it offers no key and the credentials, and a connector added afterwards still sends no key (KNIME makes the
    # first choice the default of a parameter whose default is empty)
    assert _choices(shown, "credential") == [NO_API_KEY, "llm", "mcp-token"]
    assert shown["data"]["model"]["credential"] == NO_API_KEY
    (spec,) = node_host.configure_node(_node("ChatModelConnector"), ConfigureContext(CREDENTIALS))
    assert spec.config.credential is None


# -- settings: saved, loaded and checked as KNIME does ---------------------------------------------------------------


@pytest.mark.parametrize("node_id", NODES)
def test_saved_settings_load_unchanged_into_a_fresh_node_and_pass_knimes_check(node_id: str) -> None:
    # Given a node whose settings differ from the defaults
    node = _node(node_id, **CHANGED[node_id])
    # When KNIME saves them and loads them into a fresh node
    saved = node_host.save_settings(node)
    loaded = node_host.load_settings(node_id, saved, node_host.EXTENSION_VERSION)
    # Then the fresh node has them all, and KNIME's check accepts them
    assert node_host.save_settings(loaded) == saved
    assert CHANGED[node_id].items() <= _leaves(json.loads(saved)["model"]).items()
    assert node_host.validate_settings(node_id, saved, node_host.EXTENSION_VERSION) is None


@pytest.mark.parametrize(
    ("node_id", "path"),
    [(node_id, path) for node_id in NODES for path in _saved(NODES[node_id]()) if path not in SINCE],
)
def test_settings_of_an_older_version_without_a_parameter_are_rejected_and_load_its_default(
    node_id: str, path: str
) -> None:
    # Given settings saved by an older version that did not have the parameter at ``path``
    defaults = node_host.save_settings(_node(node_id))
    older = _with(node_host.save_settings(_node(node_id, **CHANGED[node_id])), path, drop=True)
    # When KNIME checks and loads them
    message = node_host.validate_settings(node_id, older, "0.0.9")
    loaded = node_host.load_settings(node_id, older, "0.0.9")
    # Then the check names the missing key (no parameter has since_version), and loading leaves its default
    assert message == f'Parameter missing for key "{path.split(".")[-1]}".'
    assert _saved(loaded)[path] == _leaves(json.loads(defaults)["model"])[path]


def test_caller_settings_saved_before_concurrent_writes_existed_pass_the_check_and_keep_writes_one_at_a_time() -> None:
    # Given Tool Caller settings saved by 0.1.0, whose concurrency of 4 then applied to every tool
    saved = node_host.save_settings(_node("MCPToolCaller", **{"calls.concurrency": 4}))
    older = _with(saved, "calls.concurrent_writes", drop=True)
    # When KNIME checks and loads them
    message = node_host.validate_settings("MCPToolCaller", older, "0.1.0")
    loaded = node_host.load_settings("MCPToolCaller", older, "0.1.0")
    # Then they pass, the 4 still holds for read-only tools, and a tool that may write runs one call at a time
    assert message is None
    assert _saved(loaded)["calls.concurrency"] == 4
    assert _saved(loaded)["calls.concurrent_writes"] is False


def test_agent_settings_saved_before_the_unannotated_setting_existed_pass_and_offer_unannotated_tools() -> None:
    # Given Agent Prompter settings saved by 0.1.0, which had no setting for tools without annotations
    saved = node_host.save_settings(_node("AgentPrompter", user_message="Hi"))
    older = _with(saved, "unannotated_destructive", drop=True)
    # When KNIME checks and loads them
    message = node_host.validate_settings("AgentPrompter", older, "0.1.0")
    loaded = node_host.load_settings("AgentPrompter", older, "0.1.0")
    # Then they pass, and tools without annotations are offered (the default)
    assert message is None
    assert _saved(loaded)["unannotated_destructive"] is False


@pytest.mark.parametrize(
    ("node_id", "path", "value", "message"),
    [
        ("MCPToolProvider", "timeouts.connect", "10", "10 is of type <class 'str'>, but should be a number."),
        ("MCPToolProvider", "server.server", 5, "5 is of type <class 'int'>, but should be of type string."),
        ("MCPToolCaller", "calls.concurrency", 2.5, "2.5 is of type <class 'float'>, but should be of type int."),
        ("MCPToolCaller", "calls.retries", 11, "11 is > the max value 10"),
        ("ChatModelConnector", "set_temperature", "yes", "yes is not a boolean"),
        ("AgentPrompter", "iteration_limit", 0, "0 is smaller than the minimal value 1"),
        (
            "AgentPrompter",
            "destructive",
            "NOPE",
            "The selection 'NOPE' for parameter 'Destructive tools' is not one of the available options: 'ALLOW', "
            "'BLOCK', 'READ_ONLY'.",
        ),
    ],
)
def test_settings_with_a_wrong_value_are_rejected_with_knimes_message(
    node_id: str, path: str, value: Any, message: str
) -> None:
    settings = _with(node_host.save_settings(_node(node_id)), path, value)
    assert node_host.validate_settings(node_id, settings, node_host.EXTENSION_VERSION) == message


# -- flow variables: KNIME applies them to the settings before Python gets them -------------------------------------


def _flow_variable_server(ctx: ExecuteContext, url: str, trusted: bool) -> Any:
    """A provider whose server the flow variable ``mcp_url`` sets to ``url`` (instead of the address typed)."""
    settings = {"server.server": "http://typed.invalid/mcp", "server.trust_flow_variable": trusted}
    return _controlled("MCPToolProvider", _node("MCPToolProvider", **settings), ctx, "server.server", "mcp_url", url)


def test_a_server_address_from_a_flow_variable_is_data_whose_loopback_address_is_refused(demo_http_url: str) -> None:
    ctx = ExecuteContext()
    node = _flow_variable_server(ctx, demo_http_url, trusted=False)
    with pytest.raises(knext.InvalidParametersError, match="flow variable 'mcp_url'"):
        node_host.execute_node(node, ctx)


def test_a_trusted_server_address_from_a_flow_variable_is_the_one_listed(demo_http_url: str) -> None:
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(_flow_variable_server(ctx, demo_http_url, trusted=True), ctx)
    assert {tool.server.target for tool in tools_from_frame(table.to_pandas())} == {demo_http_url}


def test_the_caller_calls_the_tool_a_flow_variable_names(demo_tools: Any) -> None:
    ctx = ExecuteContext()
    node = _controlled(
        "MCPToolCaller", _node("MCPToolCaller", **{"tool.name": "echo"}), ctx, "tool.name", "tool", "add"
    )
    data = node_host.source_table(pa.table({"a": [2], "b": [3]}))
    (table,) = node_host.execute_node(node, ctx, data, demo_tools)
    assert table.to_pandas()["Result"].tolist() == ["5"]


def test_the_connector_passes_on_the_model_a_flow_variable_names() -> None:
    ctx = ExecuteContext(CREDENTIALS)
    node = _controlled("ChatModelConnector", _node("ChatModelConnector"), ctx, "model", "model_name", "from-variable")
    (port,) = node_host.execute_node(node, ctx)
    assert port.spec.config.model == "from-variable"


def test_the_agent_sends_the_user_message_a_flow_variable_holds() -> None:
    with FakeOpenAIEndpoint([answer("4.")]) as endpoint:
        ctx = ExecuteContext(CREDENTIALS)
        typed = _node("AgentPrompter", user_message="typed in the dialog")
        node = _controlled("AgentPrompter", typed, ctx, "user_message", "prompt", "What is 2 + 2?")
        (conversation, _, _) = node_host.execute_node(
            node, ctx, _model_port(endpoint.base_url), _empty_tools(), None, []
        )
    assert endpoint.requests[0]["messages"][-1] == {"role": "user", "content": "What is 2 + 2?"}
    assert conversation.to_pandas()["Content"].tolist() == ["What is 2 + 2?", "4."]


# -- specs, port objects, credentials, cancellation --------------------------------------------------------------------


def test_a_workflow_configured_before_anything_runs_gets_each_nodes_output_specs(upstream: dict[str, Any]) -> None:
    # Given the specs KNIME sends from the upstream nodes' configure (with KNIME's column metadata)
    # When the caller and the agent are configured with them
    (results,) = node_host.configure_node(
        _node("MCPToolCaller", **{"tool.name": "render_chart"}), ConfigureContext(), upstream["data"], upstream["tools"]
    )
    conversation, log, data = node_host.configure_node(
        _node("AgentPrompter", user_message="Hi"),
        ConfigureContext(CREDENTIALS),
        *_input_specs("AgentPrompter", upstream),
    )

    # Then each output spec has the node's columns, as KNIME shows their types downstream
    def shown(schema: knext.Schema) -> list[tuple[str, str]]:
        return [(column.name, column.metadata["displayed_column_type"]) for column in schema]

    assert upstream["model"].config.credential == "llm" and API_KEY not in json.dumps(upstream["model"].serialize())
    assert shown(upstream["tools"])[:2] == [("MCP Tool", "String"), ("Name", "String")]
    assert ("Read-only", "Boolean") in shown(upstream["tools"])
    assert shown(results) == [
        ("values", "List (Collection of: Number (Float))"), ("text", "String"), ("Result", "String"),
        ("Structured result", "String"), ("Image", "PNG Image"), ("Other content", "String"), ("Is error", "Boolean"),
        ("Error", "String"),
        ("Duration (ms)", "Number (Float)"),
    ]  # fmt: skip
    assert shown(conversation)[:2] == [("Role", "String"), ("Content", "String")]
    assert shown(log)[0] == ("Turn", "Number (Long Integer)") and data == []


class _ReadingCredentials:
    """Records which credentials the node reads, and in which threads (KNIME's context asks the workflow for each)."""

    def _start_reading(self) -> None:
        self.read: list[str] = []
        self.threads: set[int] = set()

    def get_credentials(self, identifier: str) -> Any:
        self.read.append(identifier)
        self.threads.add(threading.get_ident())
        return super().get_credentials(identifier)  # type: ignore[misc]


class ReadingConfigureContext(_ReadingCredentials, ConfigureContext):
    def __init__(self) -> None:
        super().__init__(CREDENTIALS)
        self._start_reading()


class ReadingExecuteContext(_ReadingCredentials, ExecuteContext):
    def __init__(self) -> None:
        super().__init__(CREDENTIALS)
        self._start_reading()


@pytest.mark.parametrize("node_id", NODES)
def test_configure_reads_no_credential(node_id: str, upstream: dict[str, Any]) -> None:
    ctx = ReadingConfigureContext()
    node_host.configure_node(_node(node_id, **CHANGED[node_id]), ctx, *_input_specs(node_id, upstream))
    assert ctx.read == []


@pytest.mark.parametrize(
    "node_id", ["MCPToolProvider", "MCPToolCaller", "AgentPrompter", "MCPResourceReader", "MCPPrompt"]
)
def test_execute_reads_the_credentials_in_the_nodes_own_thread(node_id: str, demo_tools: Any) -> None:
    # Given a node that connects to servers, in a workflow with two credentials flow variables
    ctx = ReadingExecuteContext()
    # When it executes (the provider on the demo server, the caller on no rows, the agent with no tools)
    with FakeOpenAIEndpoint([answer("Hi.")]) as endpoint:
        inputs = {
            "MCPToolProvider": (),
            "MCPToolCaller": (_no_rows("x"), demo_tools),
            "AgentPrompter": (_model_port(endpoint.base_url), _empty_tools(), None, []),
            "MCPResourceReader": (None,),
            "MCPPrompt": (None,),
        }[node_id]
        node_host.execute_node(_node(node_id, **CHANGED[node_id]), ctx, *inputs)
    # Then it has read them, in its own thread (KNIME's context belongs to it)
    assert sorted(ctx.read) == sorted(CREDENTIALS) and ctx.threads == {threading.get_ident()}


def test_the_chat_model_port_survives_a_saved_workflow_exactly_and_holds_no_secret() -> None:
    # Given the connector's output, its key in a credentials flow variable (which the connector never reads)
    ctx = ReadingExecuteContext()
    port = _model_port("http://127.0.0.1:11434/v1", ctx)
    # When the workflow is saved and opened again
    spec_json, data = node_host.save_port_object(port)
    reopened = node_host.load_port_object(spec_json, data)
    # Then the spec (with the port type's id) and the object are as before, the key in neither
    assert ctx.read == []
    assert json.loads(spec_json) == {"id": CHAT_MODEL_PORT_ID, "data": port.spec.serialize()}
    assert API_KEY not in spec_json and API_KEY.encode() not in data
    assert isinstance(reopened, ChatModelPortObject) and reopened.config == port.config
    assert node_host.save_port_object(reopened) == (spec_json, data)


@pytest.mark.parametrize("node_id", ["ChatModelConnector", "MCPToolCaller"])
def test_a_node_canceled_while_it_runs_gives_no_output(node_id: str, demo_tools: Any) -> None:
    # Given a node that finishes without waiting for anything (the caller's input has no rows)
    inputs = {"ChatModelConnector": (), "MCPToolCaller": (_no_rows("x"), demo_tools)}
    # When the user cancels it, Then KNIME marks it canceled and drops its outputs
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(
            _node(node_id, **CHANGED[node_id]), ExecuteContext(CREDENTIALS, cancel_when=lambda: True), *inputs[node_id]
        )


# -- tables without batches ------------------------------------------------------------------------------------------


def test_an_input_without_batches_is_read_from_its_schema_where_knimes_own_reading_fails() -> None:
    from nodes.knime_io.tables import read_pandas, read_pyarrow

    # Given an input table without rows, which KNIME hands over without a batch
    table = node_host.source_table(pa.table({"values": pa.array([], pa.list_(pa.float64()))}))
    # When a node reads it, Then KNIME's to_pyarrow fails, but the nodes' readers give its columns and types
    with pytest.raises(pa.ArrowInvalid):
        table.to_pyarrow()
    assert list(read_pandas(table).columns) == ["values"]
    arrow = read_pyarrow(table)
    assert arrow.column_names == ["<RowID>", "values"] and arrow.schema.field("values").type == pa.list_(pa.float64())
