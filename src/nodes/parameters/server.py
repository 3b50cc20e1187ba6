"""Parameters: the *MCP server* group, the settings of the nodes that reach servers of their own (a pasted
configuration, its server key, errors per row), and their translation into the core's ServerSpec.

Settings hold no secret: authentication names a KNIME credential (``nodes.parameters.auth``), and header or
environment values may only reference secrets as ``${VAR}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import knime.extension as knext

from knime_mcp.config import DEMO_SERVER, OAUTH_KINDS, ServerSpec, TlsSettings, demo_server_spec
from knime_mcp.errors import ConfigError
from nodes.parameters.auth import AuthSettings, auth_ref
from nodes.parameters.timeouts import TimeoutSettings, timeout_limits
from nodes.parameters.tls import TlsGroup, tls_settings

if TYPE_CHECKING:
    from knime_mcp.calls.rows import OnError

__all__ = [
    "TRUST_SERVER", "RowErrorOptions", "ServerSettings", "TransportOptions", "on_error", "pasted_config_parameter",
    "server_key_parameter", "server_spec", "setting_pairs", "untrusted_address_hint", "untrusted_hint",
]  # fmt: skip


TRUST_SERVER = "Trust a server address from a flow variable"
"""The setting that lets a server's address, command line or catalog entry come from a flow variable."""


class TransportOptions(knext.EnumParameterOptions):
    AUTO = ("Auto", "A URL ending in /sse uses SSE; another URL tries Streamable HTTP, then SSE; else stdio.")
    STREAMABLE_HTTP = ("Streamable HTTP", "The current MCP HTTP transport.")
    SSE = ("SSE", "The older HTTP + Server-Sent Events transport.")
    STDIO = ("stdio", "Start the server as a local process and talk over its standard input and output.")


_TRANSPORTS = {"AUTO": "auto", "STREAMABLE_HTTP": "streamable-http", "SSE": "sse", "STDIO": "stdio"}


@knext.parameter_group(label="MCP server")
class ServerSettings:
    """Which MCP server to connect to, and how."""

    server = knext.StringParameter(
        "Server",
        "An http(s) URL of an MCP server (e.g. http://localhost:8000/mcp), or a command line that starts a stdio "
        f"server (e.g. npx -y @modelcontextprotocol/server-memory). Enter '{DEMO_SERVER}' to try the nodes with the "
        "demo server bundled with this extension: it starts over stdio with the extension's own Python, needs no "
        "network, and offers tools that return text, numbers, structured results, a chart image and errors.",
        "",
    )
    transport = knext.EnumParameter(
        "Transport", "How to talk to the server.", TransportOptions.AUTO.name, TransportOptions
    )
    headers = knext.MultilineStringParameter(
        "Extra HTTP headers",
        "One 'Name: value' per line. Write secrets as ${VARIABLE} environment references, never as values.",
        "",
        is_advanced=True,
    )
    environment = knext.MultilineStringParameter(
        "Environment (stdio)",
        "One NAME=value per line for a stdio server; values may reference ${VARIABLE}s.",
        "",
        is_advanced=True,
    )
    roots = knext.MultilineStringParameter(
        "Folders the server may see (stdio)",
        "One folder per line, as a full path: the folders a stdio server is told it may work in when it asks for "
        "the client's roots (MCP roots/list). Empty: the server is offered no folders. Roots are a hint the server "
        "is trusted to follow, not a sandbox.",
        "",
        since_version="0.3.0",
        is_advanced=True,
    )
    trust_flow_variable = knext.BoolParameter(
        TRUST_SERVER,
        "A server URL, command line or stdio environment set by a flow variable may come from data (a table, a "
        "web form), so by default it may only be a public http(s) URL and a command line is never run. Switch "
        "this on if the flow variable is yours, e.g. set by a configuration node.",
        False,
        is_advanced=True,
    )
    tls = TlsGroup()


def setting_pairs(text: str, separator: str, setting: str) -> dict[str, str]:
    """The NAME<separator>value lines of the text setting labelled ``setting``; blank lines are skipped, and any other
    line without the separator is a ConfigError naming its number and the setting."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, found, value = line.partition(separator)
        if not found or not name.strip():
            raise ConfigError(f"Line {number} of '{setting}' is not of the form NAME{separator}value.")
        pairs[name.strip()] = value.strip()
    return pairs


def server_spec(server: ServerSettings, auth: AuthSettings, timeouts: TimeoutSettings) -> ServerSpec:
    """The core's description of the server; raises ConfigError for settings that cannot work."""
    limits = timeout_limits(timeouts)
    if server.server.strip() == DEMO_SERVER:
        return demo_server_spec(timeouts=limits)
    authentication = auth_ref(auth)
    spec = ServerSpec(
        target=server.server.strip(),
        transport=_TRANSPORTS[server.transport],  # type: ignore[arg-type]
        headers=setting_pairs(server.headers, ":", "Extra HTTP headers"),
        env=setting_pairs(server.environment, "=", "Environment (stdio)"),
        auth=authentication,
        timeouts=limits,
        roots=tuple(line.strip() for line in server.roots.splitlines() if line.strip()),
        tls=tls_settings(server.tls) if server.server.strip().startswith("https://") else TlsSettings(),
    )
    if authentication.kind in OAUTH_KINDS and not spec.is_url:
        raise ConfigError(
            "OAuth works with http(s) servers only.",
            hint="Enter the server's URL, or choose another authentication for a stdio server.",
        )
    return spec


def untrusted_address_hint(ctx: knext.ConfigurationContext, server: ServerSettings) -> str | None:
    """For a server address (or stdio environment) set by an untrusted flow variable, which makes it data, the
    hint on how to trust it; None for an address a person typed."""
    return untrusted_hint(
        ctx,
        (server.server, server.environment, server.roots),
        trusted=server.trust_flow_variable,
        subject="The address",
        switch=TRUST_SERVER,
    )


def untrusted_hint(
    ctx: knext.ConfigurationContext, settings: tuple[str, ...], *, trusted: bool, subject: str, switch: str
) -> str | None:
    """For ``settings`` of which one was set by a flow variable that ``trusted`` does not vouch for, the hint naming
    that flow variable and the ``switch`` that trusts it; else None. KNIME hands a node its settings with flow
    variables already applied, so an equal value is how a node can tell."""
    if trusted:
        return None
    texts = {text.strip() for text in settings if text.strip()}
    for name, value in ctx.flow_variables.items():
        if isinstance(value, str) and value.strip() in texts:
            return f"{subject} comes from flow variable {name!r}; if you trust it, switch on '{switch}'."
    return None


def pasted_config_parameter(use: str) -> knext.MultilineStringParameter:
    """The *Pasted configuration* setting, the same on every node that reaches servers of its own; ``use`` says
    what the node does with the servers in it."""
    return knext.MultilineStringParameter(
        "Pasted configuration",
        "An MCP configuration as READMEs give it, which replaces the server settings below: Claude Desktop's or "
        f'Cursor\'s {{"mcpServers": {{...}}}} or VS Code\'s {{"servers": {{...}}, "inputs": [...]}}. {use} A header\'s '
        "or a stdio server's environment entry's ${input:ID} sends the KNIME credential ID (from the credentials "
        "flow variables; its password), ${VARIABLE} an environment variable. A secret written out is refused. "
        "Empty: the server settings are used.",
        "",
        since_version="0.5.0",
        number_of_lines=6,
    )


def server_key_parameter() -> knext.StringParameter:
    """The *Server key* setting of a node that works on one server of a pasted configuration."""
    return knext.StringParameter(
        "Server key",
        'With a pasted configuration: the key of the server to use (as in "mcpServers" or "servers"). Empty: '
        "the configuration's only server.",
        "",
        since_version="0.5.0",
    )


class RowErrorOptions(knext.EnumParameterOptions):
    FAIL = ("Fail", "Stop at the first row that fails, and fail the node with that row's error.")
    COLUMN = (
        "Error column",
        "Go through every row; a row that fails keeps its place, with its message in the 'Error' column.",
    )


def on_error(option: str) -> OnError:
    return "column" if option == RowErrorOptions.COLUMN.name else "fail"
