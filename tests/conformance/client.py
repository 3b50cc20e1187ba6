"""The client under test of the official MCP conformance suite (``@modelcontextprotocol/conformance``).

    conformance client --command "python tests/conformance/client.py" --scenario initialize

The suite starts a server for its scenario and runs this script with the server's URL as the last argument, the
scenario's name in ``MCP_CONFORMANCE_SCENARIO`` and what the scenario gives a client (client ids, secrets, keys) as
JSON in ``MCP_CONFORMANCE_CONTEXT``. The script does what a user of knime-mcp's public API would: it names the server
in a :class:`~knime_mcp.ServerSpec`, its sign-in in an :class:`~knime_mcp.AuthRef` (:func:`auth_for`, the one place
that maps a scenario's context to settings), connects with :class:`~knime_mcp.McpClient`, lists the tools and calls
each. Secrets from the context go into environment variables that the settings reference as ``${VAR}``, as they would
for a person. An interactive sign-in opens the "browser" the ``BROWSER`` variable names (:mod:`webbrowser`): here
``tests/scripted_browser.py``, which follows the authorization server's redirect back to knime-mcp's loopback listener.
Exit code 0 when the run went through, 1 with the error on stderr when it did not.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from knime_mcp import (
    AuthRef,
    McpClient,
    MCPTool,
    McpToolError,
    ServerRequestPolicy,
    ServerRequests,
    ServerSpec,
)

BROWSER = f"{sys.executable} {Path(__file__).resolve().parent.parent / 'scripted_browser.py'} %s"
"""The headless browser of the interactive sign-ins (``webbrowser`` substitutes the URL for ``%s``)."""

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document this client names itself by (auth/basic-cimd): a user's client id that is an
https URL; where the authorization server takes no such clients, knime-mcp registers itself instead."""

ECHO = "json_schema_echo"
"""The tool of json-schema-2020-12-preservation that takes back an input schema as the client listed it."""


def secret(name: str, value: str) -> str:
    """Put a secret from the context where a person would keep it, an environment variable; its ``${VAR}``."""
    os.environ[name] = value
    return "${" + name + "}"


def _client_credentials(context: dict[str, Any]) -> AuthRef:
    return AuthRef(
        kind="oauth-client-credentials",
        client_id=context["client_id"],
        secret=secret("CONFORMANCE_CLIENT_SECRET", context["client_secret"]),
    )


def _private_key_jwt(context: dict[str, Any]) -> AuthRef:
    return AuthRef(
        kind="oauth-client-credentials",
        client_id=context["client_id"],
        client_auth="private_key_jwt",
        secret=secret("CONFORMANCE_PRIVATE_KEY", context["private_key_pem"]),
    )


def _workload_identity(context: dict[str, Any]) -> AuthRef:
    """The platform's token in a file, as Kubernetes projects it; the setting names the file by a variable."""
    folder = Path(tempfile.mkdtemp(prefix="conformance-wif-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "token").write_text(context["valid_jwt"])
    os.environ["CONFORMANCE_TOKEN_FILE"] = str(folder / "token")
    return AuthRef(
        kind="oauth-workload-identity", client_id=context["client_id"], token_file="${CONFORMANCE_TOKEN_FILE}"
    )


def _id_jag(context: dict[str, Any]) -> AuthRef:
    return AuthRef(
        kind="oauth-id-jag",
        client_id=context["client_id"],
        secret=secret("CONFORMANCE_CLIENT_SECRET", context["client_secret"]),
        assertion=secret("CONFORMANCE_ID_TOKEN", context["idp_id_token"]),
        idp_token_endpoint=context["idp_token_endpoint"],
        idp_client_id=context["idp_client_id"],
    )


AUTH: dict[str, Callable[[dict[str, Any]], AuthRef]] = {
    "auth/client-credentials-basic": _client_credentials,
    "auth/client-credentials-jwt": _private_key_jwt,
    "auth/wif-jwt-bearer": _workload_identity,
    "auth/cross-app-access-complete-flow": _id_jag,
    "auth/enterprise-managed-authorization": _id_jag,
}
"""The sign-ins that are not the interactive one, by scenario: a new grant adds its line here."""


def auth_for(scenario: str, context: dict[str, Any]) -> AuthRef:
    """The authentication a user would set for ``scenario``, given what the suite hands the client."""
    if scenario in AUTH:
        return AUTH[scenario](context)
    if scenario.startswith("auth/"):
        client_id = context.get("client_id") or CLIENT_METADATA_URL
        client_secret = context.get("client_secret")
        return AuthRef(
            kind="oauth",
            client_id=client_id,
            secret=secret("CONFORMANCE_CLIENT_SECRET", client_secret) if client_secret else None,
        )
    return AuthRef()


REQUESTS = ServerRequests(ServerRequestPolicy(elicitation="defaults"))
"""Forms answered with their defaults (the nodes' *When a tool asks for input* → *Use the defaults*). Sampling
is declined, as everywhere but the Agent Prompter (which answers with its chat model): no client scenario samples,
and a chat model would cost every run the import of langchain."""


def arguments(tool: MCPTool) -> dict[str, Any]:
    """Arguments for a tool: each property's default, else a value of its type."""
    samples = {"string": "test", "number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}
    values = {}
    for name, schema in tool.input_schema.get("properties", {}).items():
        if "default" in schema:
            values[name] = schema["default"]
        else:
            values[name] = samples.get(schema.get("type"), "test") if isinstance(schema.get("type"), str) else "test"
    return values


def calls(tools: list[MCPTool], context: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the scenario names (``toolCalls`` in its context), else one call of each tool. The echo tool of
    json-schema-2020-12-preservation gets the input schemas of the others, as knime-mcp listed them."""
    if "toolCalls" in context:
        return [(call["name"], call.get("arguments") or {}) for call in context["toolCalls"]]
    others = [tool.input_schema for tool in tools if tool.name != ECHO]
    return [(tool.name, {"schema": others[0]} if tool.name == ECHO else arguments(tool)) for tool in tools]


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    spec = ServerSpec(target=url, name=scenario, auth=auth_for(scenario, context))
    async with McpClient(spec, show_sign_in=lambda link: print(f"sign in at {link}", file=sys.stderr),
                         requests=REQUESTS) as client:  # fmt: skip
        for name, given in calls(await client.list_tools(), context):
            try:
                await client.call_tool(name, given)
            except McpToolError as error:
                print(f"{name}: {error}", file=sys.stderr)


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    os.environ["BROWSER"] = BROWSER
    try:
        anyio.run(run, url, scenario, context)
    except Exception as error:  # noqa: BLE001 - the suite reads the exit code and stderr
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
