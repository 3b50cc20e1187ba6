"""HTTP Tool Provider: a source node that lists the operations of an OpenAPI document or the tools of a UTCP manual,
and webhooks, as tools."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import knime.extension as knext

from knime_mcp.config.limits import MAX_MESSAGE_BYTES
from knime_mcp.http.discovery import DOCUMENT_PATHS
from knime_mcp.http.document import MAX_DOCUMENT_BYTES
from nodes import CATEGORY
from nodes.knime_io.credentials import credential_lookup
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.tables import read_pandas
from nodes.knime_io.team_seal import team_seal
from nodes.knime_io.tools_table import output_schema, tools_output
from nodes.knime_io.warnings import warn_if_insecure
from nodes.parameters.auth import AuthOptions
from nodes.parameters.credentials import chosen_credential, credential_names
from nodes.parameters.selection import SelectionSettings, selection_options
from nodes.parameters.server import untrusted_hint
from nodes.parameters.team_seal import team_seal_key_parameter
from nodes.parameters.timeouts import TimeoutSettings, timeout_limits
from nodes.parameters.tls import TlsGroup, tls_settings

if TYPE_CHECKING:
    from knime_mcp.config import AuthRef
    from knime_mcp.http.openapi import DocumentApiKey
    from knime_mcp.http.webhooks import WebhookRow

LOGGER = logging.getLogger(__name__)


@knext.parameter_group(label="API description")
class DocumentSettings:
    """Which API to offer: its OpenAPI document or UTCP manual, and where to send the requests."""

    document = knext.StringParameter(
        "API description (OpenAPI or UTCP manual)",
        "The http(s) URL or file path of an OpenAPI 3.0 or 3.1 document, JSON or YAML (e.g. "
        "https://api.example.com/openapi.json), or of a UTCP manual (e.g. https://api.example.com/utcp), told apart "
        "by content: a manual has 'utcp_version' and 'tools'. Swagger 2.0 is refused: convert it first, e.g. with "
        "swagger2openapi. A manual's 'http' tools are offered; any other kind (cli, file, text, mcp, sse, …), a tool "
        "that signs in with OAuth2 and one holding a $VARIABLE in its URL or headers are left out, each named in the "
        "warning: the secret comes from the Authentication setting only, never from the manual or the environment. "
        "Empty with a Base URL: the description is looked for there, at the paths web frameworks serve an OpenAPI "
        f"document and UTCP providers their manual ({', '.join('/' + path for path in DOCUMENT_PATHS)}; under the "
        "Base URL's path, then at its host's root). Empty without one: only the webhooks of the input table.",
        "",
    )
    base_url = knext.StringParameter(
        "Base URL",
        "Where the requests go, e.g. https://staging.example.com/v1. Empty: the servers the document names (a "
        "relative one resolved against the document's URL). A UTCP manual's tools keep their own URLs (a relative one "
        "is taken under the Base URL). The credential goes only here or to the origin the document (or manual) was "
        "read from: a document from a file, or one that names another host, needs that server entered "
        "here to get the credential. Without a credential, such a server counts as data (agent and caller nodes call "
        "it only at a public address), and the node's warning names it.",
        "",
    )
    trust_flow_variable = knext.BoolParameter(
        "Trust a document address from a flow variable",
        "A document or base URL set by a flow variable may come from data, so by default the document may only be "
        "read from a public http(s) URL (never a file) and the API counts as data downstream, where agent and caller "
        "nodes send it no credential. Switch this on if the flow variable is yours.",
        False,
        is_advanced=True,
    )
    max_document_mb = knext.IntParameter(
        "Largest document (MB)",
        "The largest OpenAPI document or UTCP manual read, from a URL or a file; a larger one fails the node rather "
        "than fill the memory. The largest public API descriptions are a few MB.",
        MAX_DOCUMENT_BYTES // 2**20, min_value=1, since_version="0.4.0", is_advanced=True,
    )  # fmt: skip
    max_response_mb = knext.IntParameter(
        "Largest response (MB)",
        "The largest response a tool reads, of the API or a webhook; a larger one is a tool error that says so (the "
        "call ran, its result is lost), and the agent or caller goes on. The default is the limit of an MCP tool's "
        "result.",
        MAX_MESSAGE_BYTES // 2**20, min_value=1, since_version="0.5.0", is_advanced=True,
    )  # fmt: skip
    trust_webhooks = knext.BoolParameter(
        "Trust the webhook URLs of the input table",
        "The webhook table is data: by default its URLs may only be public http(s) URLs when the tools are called. "
        "Switch this on if the table is yours, e.g. made with a Table Creator, to call local or private-network "
        "webhooks.",
        False,
        is_advanced=True,
    )


class HttpAuthOptions(knext.EnumParameterOptions):
    NONE = AuthOptions.NONE.value
    BEARER = AuthOptions.BEARER.value
    BASIC = AuthOptions.BASIC.value
    HEADER = (
        "API key in a header",
        "Send the credential's password in a header; its name defaults to the document's API key scheme's (a UTCP "
        "manual's api_key auth's).",
    )
    QUERY = (
        "API key in a query parameter",
        "Send the credential's password as a query parameter of every request; its name defaults to the document's "
        "API key scheme's (a UTCP manual's api_key auth's). Query parameters end up in server and proxy logs: prefer "
        "a header where the API allows.",
    )


_AUTH_KINDS = {"NONE": "none", "BEARER": "bearer", "BASIC": "basic", "HEADER": "header", "QUERY": "query"}


@knext.parameter_group(label="Authentication")
class HttpAuthSettings:
    """Credentials for the API (never for the webhooks), always from a KNIME credentials flow variable."""

    kind = knext.EnumParameter(
        "Authentication", "What to send to the API; OAuth is not offered here.", HttpAuthOptions.NONE.name,
        HttpAuthOptions,
    )  # fmt: skip
    credential = knext.StringParameter(
        "Credential",
        "The credentials flow variable that holds the token or API key (password field) and, for basic, the user name.",
        "",
        choices=credential_names,
    ).rule(knext.OneOf(kind, [HttpAuthOptions.NONE.name]), knext.Effect.HIDE)
    name = knext.StringParameter(
        "Header or query parameter name",
        "The header (e.g. X-API-Key) or query parameter (e.g. api_key) that carries the key. Empty: the name the "
        "document's API key security scheme gives for that place.",
        "",
    ).rule(knext.OneOf(kind, [HttpAuthOptions.HEADER.name, HttpAuthOptions.QUERY.name]), knext.Effect.SHOW)


@knext.node(
    "HTTP Tool Provider", knext.NodeType.SOURCE, "icons/http_provider.png", category=CATEGORY, id="HTTPToolProvider"
)
@knext.input_table(
    "Webhooks",
    "Optional webhooks to offer as tools, one per row: Name, Description, URL, Method (default POST), Input "
    "Schema (a JSON Schema object of the payload) and Output Schema (a JSON Schema object every response must "
    "match; a response that does not is a tool error that keeps the body).",
    optional=True,
)
@knext.output_table(
    "Tools", "One row per operation and webhook, in the MCP Tool Provider's columns, for agent and caller nodes."
)
class HTTPToolProvider:
    """Lists the operations of an OpenAPI document or the tools of a UTCP manual, and webhooks, as tools.

    Reads an OpenAPI 3.0 or 3.1 document (JSON or YAML, from a URL or a file) and outputs one row per operation, in
    exactly the **MCP Tool Provider**'s columns: concatenate both tables to offer MCP and HTTP tools to one **Agent
    Prompter**, or call one with the **MCP Tool Caller**. A tool's arguments are the operation's path, query and
    header parameters and, as the argument *body*, its JSON request body, with every $ref resolved; its output
    schema is the JSON object its success response returns. A header whose name is no argument name is offered in
    snake case (X-Request-Id as x_request_id).

    Annotations follow the HTTP method and MCP's defaults: GET, HEAD and OPTIONS are read-only, PUT and DELETE
    idempotent, and every method that writes counts as destructive (POST, PUT, PATCH, DELETE), unless the operation
    says otherwise in an `x-mcp-annotations` extension with MCP's hints (`readOnlyHint`, `destructiveHint`,
    `idempotentHint`, `openWorldHint`), e.g. `destructiveHint: false` for a POST that only adds. So by default the
    Agent Prompter (which blocks destructive tools) offers only the reading operations. The method's facts win over
    the document's hints: a method that writes is never read-only (a POST that says `readOnlyHint: true` counts as
    non-destructive), and PUT, PATCH and DELETE are always destructive; the warning names each hint left out.

    A UTCP manual (utcp.io; from a URL such as `/utcp`, or a file) gives one row per tool whose call template is
    `http`, read like an operation: placeholders in its URL's path are path parameters, its `header_fields` headers,
    its `body_field` the JSON body, every other input a query parameter; its static headers are sent. The rows are
    HTTP tools like the document's, called by knime-mcp's own HTTP client under the same rules (TLS, proxies,
    redirects within the origin, *Largest response*); the manual's own auth only names the API key's header or
    query parameter. Other tools are left out with a note: `cli`, `file` and `text` tools (a manual is data and never
    runs a program or reads a file here), `mcp`, `sse` and `streamable_http` ones (add an MCP server in the **MCP
    Tool Provider**), OAuth2 (nothing is sent to a manual's token URL), an API key in a cookie, and a `$VARIABLE`
    in a URL or header (never filled in, nor read from the environment).

    The optional input table adds webhooks: each row is a tool that sends its arguments as the JSON body of one
    request to the row's URL. The authentication is sent to the API only, never to a webhook. A webhook URL whose query
    holds a secret written out (``?token=…``, ``?key=AIza…``) is refused, as everywhere: write it as
    ``?token=${VARIABLE}``, which is read from the environment when the tool is called, and switch on *Trust the
    webhook URLs of the input table*, since a URL from data never gets a secret of this machine.

    Authentication takes a KNIME credentials flow variable: a bearer token, basic authentication, or an API key
    in a header or a query parameter, whose name may be left to the document's API key security scheme. OAuth is
    not offered for HTTP tools. The *MCP Tool* column never holds a secret. The credential goes only to the origin
    the document (or manual) was read from or to the *Base URL* you set: a document is data, and one that names
    another host (or a document from a file, which has no origin) needs that server as *Base URL* before it gets the
    credential; a manual's tool on another host is left out, named in the warning.

    In a KNIME with its unified Tool type, the *KNIME Tool* column of the MCP Tool Provider is there too, so both
    tables concatenate; KNIME's type describes MCP servers only, so every HTTP tool gets a missing cell there, named
    in the warning.
    """

    team_seal_key = team_seal_key_parameter()  # before the groups, as KNIME's node description lists it
    document = DocumentSettings()
    auth = HttpAuthSettings()
    timeouts = TimeoutSettings()
    selection = SelectionSettings()
    tls = TlsGroup()

    def configure(self, ctx: knext.ConfigurationContext, webhooks: knext.Schema | None) -> knext.Schema:
        from knime_mcp.errors import ConfigError
        from knime_mcp.http.webhooks import check_webhook_columns

        with knime_errors():
            self._auth()
            tls_settings(self.tls)
            if webhooks is not None:
                check_webhook_columns(webhooks.column_names)
            elif not (self.document.document.strip() or self.document.base_url.strip()):
                raise ConfigError(
                    "No OpenAPI document given.",
                    hint="Enter the API description's URL or file path (an OpenAPI document or a UTCP manual), or the "
                    "API's Base URL to find it there, or connect webhooks.",
                )
        return output_schema()

    def execute(self, ctx: knext.ExecutionContext, webhooks: knext.Table | None) -> knext.Table:
        from knime_mcp.calls.listing import list_http_tools
        from knime_mcp.mcp.sync import run_sync

        with knime_errors(), team_seal(ctx, self.team_seal_key):
            auth = self._auth()
            rows = self._webhooks(webhooks)
            listing = run_sync(
                list_http_tools,
                self.document.document.strip() or None,
                base_url=self.document.base_url.strip() or None,
                auth=auth,
                timeouts=timeout_limits(self.timeouts),
                webhooks=rows,
                trust_webhooks=self.document.trust_webhooks,
                **selection_options(self.selection),
                untrusted_hint=self._untrusted_hint(ctx),
                max_document_bytes=self.document.max_document_mb * 2**20,
                max_response_bytes=self.document.max_response_mb * 2**20,
                tls=tls_settings(self.tls),
                credentials=credential_lookup(ctx),
                cancelled=ctx.is_canceled,
            )
            warn_if_insecure(ctx, {tool.server for tool in listing.tools})
            return tools_output(ctx, listing.tools, listing.notes)  # sealed as written

    def _auth(self) -> AuthRef | DocumentApiKey | None:
        """The API's authentication; a key whose name is left empty takes the document's (known once it is read)."""
        from knime_mcp.config import AuthRef
        from knime_mcp.errors import ConfigError
        from knime_mcp.http.openapi import DocumentApiKey

        kind = _AUTH_KINDS[self.auth.kind]
        if kind == "none":
            return None
        if not (credential := chosen_credential(self.auth.credential)):
            raise ConfigError("Choose the credential that holds the secret for the authentication.")
        name = self.auth.name.strip() or None
        if kind in ("header", "query") and name is None:
            return DocumentApiKey(kind=kind, credential=credential)  # type: ignore[arg-type]
        where = {"header": name} if kind == "header" else {"parameter": name} if kind == "query" else {}
        return AuthRef(kind=kind, credential=credential, **where)  # type: ignore[arg-type]

    def _webhooks(self, table: knext.Table | None) -> list[WebhookRow]:
        from knime_mcp.http.webhooks import check_webhook_columns, webhook_rows

        if table is None:
            return []
        frame = read_pandas(table)
        check_webhook_columns(frame.columns)
        return webhook_rows(
            (str(label), record) for label, record in zip(frame.index, frame.to_dict("records"), strict=True)
        )

    def _untrusted_hint(self, ctx: knext.ConfigurationContext) -> str | None:
        return untrusted_hint(
            ctx,
            (self.document.document, self.document.base_url),
            trusted=self.document.trust_flow_variable,
            subject="The document's address",
            switch="Trust a document address from a flow variable",
        )
