"""The ``http`` tools of a UTCP manual as tools: one :class:`~knime_mcp.tools.tool.MCPTool` per tool, shaped like an
OpenAPI operation, so that it is listed, sealed, judged by origin and called exactly as one is.

A manual (``{"utcp_version", "manual_version", "tools": [...]}``, utcp.io) is data wherever it came from. So the
``utcp`` package reads its format only, one tool at a time (an unsupported tool is left out with a note, the rest
kept); its client, variable substitutor and protocol plugins never run (docs/design/utcp.md: they send a credential
to any host a manual names and read it from the environment). Per tool:

- its URL's origin (and query) becomes the server, its path the operation's path, ``{x}`` a path parameter,
  ``header_fields`` header parameters, ``body_field`` the JSON body, every other input a query parameter;
- static headers are kept; a ``$VAR``/``${VAR}`` anywhere in the URL or headers leaves the tool out (nothing is
  substituted, nothing read from the environment): the secret comes from the person's authentication only;
- the manual's ``auth`` is a hint: an API key's header or query name (:func:`manual_api_key_name`); OAuth2 (whose
  ``token_url`` would get the client secret) and a key in a cookie leave the tool out;
- any other call template type (cli, file, text, mcp, sse, …) is left out, the note saying what to do instead.

Layer: beside :mod:`knime_mcp.http.openapi`; :mod:`knime_mcp.http.descriptions` picks between them, and
:mod:`knime_mcp.http.origins` then decides where the credential may go.

    tools, notes = utcp_tools(parse_document(text, "http://127.0.0.1:8000/utcp", "http://127.0.0.1:8000/utcp"))
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from knime_mcp.config import (
    DEFAULT_TIMEOUTS,
    DEFAULT_TLS,
    AuthRef,
    ServerSpec,
    Timeouts,
    TlsSettings,
    header_value_problem,
)
from knime_mcp.errors import ConfigError
from knime_mcp.http.annotations import method_annotations
from knime_mcp.http.document import UtcpManual
from knime_mcp.net.urlguard import shown_url
from knime_mcp.tools.http_operation import HttpOperation, HttpParameter
from knime_mcp.tools.tool import MCPTool

__all__ = ["manual_api_key_name", "manual_credential_note", "utcp_tools"]

_REFERENCE = re.compile(r"\$(?:\{[^}]*\}?|[A-Za-z_]\w*)")
"""A UTCP variable reference, which its client fills in from its configuration or the environment."""
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header or query parameter name a manual may give the person's key (an HTTP token, RFC 9110)."""
_JSON_MEDIA = re.compile(r"application/(?:[\w.+-]+\+)?json(?:;.*)?", re.IGNORECASE)
_FRAMING_HEADERS = frozenset({"host", "content-length", "content-type", "transfer-encoding", "connection"})
"""Static headers the HTTP client writes itself, from the request it sends."""

_OTHER_TYPES = {
    "mcp": "it calls MCP servers; add the server in the MCP Tool Provider (knime-mcp tools) instead",
    "streamable_http": "it streams over HTTP; if it is an MCP server, add it in the MCP Tool Provider instead",
    "sse": "it streams server-sent events; if it is an MCP server, add it in the MCP Tool Provider instead",
    "cli": "it runs a command-line program, and a program named by a manual (data) never runs here; configure the "
    "program yourself if you trust it",
    "file": "it reads a file of this machine that the manual names, which a manual (data) may not",
    "text": "it reads text the manual names, which knime-mcp does not do for a manual",
    "websocket": "WebSocket tools are not supported",
}
"""Why a tool of each other call template type is left out, and what the person can do."""


def manual_api_key_name(manual: UtcpManual, location: Literal["header", "query"]) -> str:
    """The header or query parameter name of the manual's first ``api_key`` auth sent in ``location``, for an API
    key whose name is left to the API's description (the key itself never comes from the manual)."""
    found = []
    for raw in _raw_tools(manual):
        auth = (raw.get("tool_call_template") or {}).get("auth") if isinstance(raw, dict) else None
        if isinstance(auth, dict) and auth.get("auth_type") == "api_key":
            where, name = auth.get("location", "header"), auth.get("var_name", "X-Api-Key")
            if where == location and isinstance(name, str) and _TOKEN.fullmatch(name):
                return name
            found.append(f"{name!r} (in the {where})")
    said = f"only {', '.join(dict.fromkeys(found))}" if found else "none"
    raise ConfigError(
        f"The UTCP manual has no tool with an API key in the {location}, so the {location} name cannot come from it: "
        f"it has {said}.",
        hint=f"Enter the {'header' if location == 'header' else 'query parameter'} name yourself.",
    )


def manual_credential_note(manual: UtcpManual) -> list[str]:
    """The note for a manual whose every ``http`` tool names an ``auth`` when no authentication is set: the tools
    would call the API without a credential."""
    kinds = []
    for raw in _raw_tools(manual):
        template = raw.get("tool_call_template") if isinstance(raw, dict) else None
        if isinstance(template, dict) and template.get("call_template_type") == "http":
            if not isinstance(auth := template.get("auth"), dict):
                return []
            kinds.append(str(auth.get("auth_type")))
    if not kinds:
        return []
    return [
        f"The UTCP manual asks a credential of every tool ({', '.join(sorted(set(kinds)))}), but no authentication is "
        "set, so the tools call the API without a credential; set the Authentication setting to send one"
    ]


def utcp_tools(
    manual: UtcpManual,
    *,
    base_url: str | None = None,
    auth: AuthRef | None = None,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    tls: TlsSettings = DEFAULT_TLS,
    max_response_bytes: int | None = None,
) -> tuple[list[MCPTool], list[str]]:
    """The manual's ``http`` tools in its order, unsealed (:func:`knime_mcp.http.origins.judge_servers` decides),
    and a note on each tool left out. ``base_url``: a relative tool URL is taken under it (a manual file's tools
    keep their own absolute URLs). No tool that can be called is a ConfigError."""
    raw_tools = _raw_tools(manual)
    reader = _ToolReader(manual, base_url, auth or AuthRef(), (timeouts, tls, max_response_bytes))
    with _quiet_utcp():
        from utcp.data.tool import ToolSerializer
        from utcp.plugins.plugin_loader import ensure_plugins_initialized

        ensure_plugins_initialized()
        serializer = ToolSerializer()
    tools: list[MCPTool] = []
    notes: list[str] = []
    for index, raw in enumerate(raw_tools):
        name = raw.get("name") if isinstance(raw, dict) and isinstance(raw.get("name"), str) else f"#{index + 1}"
        try:
            tools.append(reader.tool(serializer, raw))
        except _LeftOut as left_out:
            notes.append(f"Left out the UTCP tool {name!r} of the manual {manual.source}: {left_out}")
    if raw_tools and not tools:
        raise ConfigError(
            f"None of the {len(raw_tools)} tools of the UTCP manual {manual.source} can be called here. {notes[0]}",
            hint="Only tools whose call template is 'http' (a REST endpoint) are offered.",
        )
    return tools, notes


@contextlib.contextmanager
def _quiet_utcp() -> Iterator[None]:
    """Run utcp code, first of all its import, without its side effects: it calls ``logging.basicConfig(INFO)``
    (a handler on the root logger that would print every library's INFO records, tokens in URLs too), logs its
    plugin loading at INFO and ``print()``\\ s, where the command line writes its tables. The root logger's handlers
    and level are put back as they were."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    for name in ("utcp", "utcp_http"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


class _LeftOut(Exception):
    """Why one tool of a manual is not offered: said in the listing's notes."""


def _raw_tools(manual: UtcpManual) -> list[Any]:
    tools = manual.data.get("tools")
    if not isinstance(tools, list):
        raise ConfigError(f"The 'tools' of the UTCP manual {manual.source} is not a list.")
    return tools


@dataclass
class _ToolReader:
    """Turns one raw tool of ``manual`` into an MCPTool, or raises :class:`_LeftOut`."""

    manual: UtcpManual
    base_url: str | None
    auth: AuthRef
    limits: tuple[Timeouts, TlsSettings, int | None]
    servers: dict[tuple[str, tuple[tuple[str, str], ...]], ServerSpec] = field(default_factory=dict)

    def tool(self, serializer: Any, raw: Any) -> MCPTool:
        template = raw.get("tool_call_template") if isinstance(raw, dict) else None
        kind = template.get("call_template_type") if isinstance(template, dict) else None
        if kind != "http":
            if not isinstance(kind, str):
                raise _LeftOut("it has no tool_call_template with a call_template_type.")
            why = _OTHER_TYPES.get(kind, "only 'http' tools are offered")
            raise _LeftOut(f"its call template type is {kind!r}: {why}.")
        with _quiet_utcp():
            try:
                tool = serializer.validate_dict(raw)
            except Exception as exc:  # utcp wraps pydantic's errors in its own, with a whole traceback as text
                raise _LeftOut(f"it is not a valid UTCP tool ({_first_problem(exc)}).") from exc
        return self._http_tool(tool)

    def _http_tool(self, tool: Any) -> MCPTool:
        template = tool.tool_call_template
        self._check_auth(template.auth)
        headers = self._static_headers(template.headers or {})
        if reference := _REFERENCE.search(template.url):
            raise _LeftOut(_reference_reason("URL", reference.group()))
        target, path = self._where(template.url)
        inputs = tool.inputs.model_dump(exclude_none=True, by_alias=True)
        properties: dict[str, Any] = dict(inputs.get("properties") or {})
        required: list[str] = [name for name in inputs.get("required") or [] if isinstance(name, str)]
        parameters: list[HttpParameter] = []
        for name in _PLACEHOLDER.findall(path):
            properties.setdefault(name, {"type": "string"})
            required += [] if name in required else [name]
            parameters.append(HttpParameter(name=name, location="path"))
        placed = {parameter.name for parameter in parameters}
        for name in template.header_fields or []:
            if name not in placed:
                properties.setdefault(name, {"type": "string"})
                parameters.append(HttpParameter(name=name, location="header"))
                placed.add(name)
        body = template.body_field if template.body_field in properties and template.body_field not in placed else None
        if body is not None and not _JSON_MEDIA.fullmatch(template.content_type):
            raise _LeftOut(f"it sends its body as {template.content_type}, and HTTP tools send JSON only.")
        parameters += [HttpParameter(name=name, location="query") for name in properties if name not in placed | {body}]
        notes: list[str] = []
        method = template.http_method
        schema = {**inputs, "type": "object", "properties": properties, "required": required}
        schema.pop("title", None)
        return MCPTool(
            name=tool.name,
            tool_name=tool.name,
            description=tool.description or f"{method} {path}",
            input_schema=schema,
            parameter_schema=schema,
            output_schema=_output_schema(tool.outputs.model_dump(exclude_none=True, by_alias=True)),
            annotations=method_annotations(method, None, tool.name, notes),
            server=self._server(target, headers),
            notes=tuple(notes),
            http=HttpOperation(method=method, path=path, parameters=tuple(parameters), body=body),
        )

    def _check_auth(self, auth: Any) -> None:
        kind = getattr(auth, "auth_type", None)
        if kind == "oauth2":
            raise _LeftOut(
                f"it signs in with OAuth2 at {shown_url(str(auth.token_url))}, which HTTP tools do not do (nothing is "
                "sent there); use a token or API key the API issued, in the Authentication setting (--auth)."
            )
        if kind == "api_key" and auth.location == "cookie":
            raise _LeftOut("it sends its API key in a cookie, which HTTP tools cannot do.")

    def _static_headers(self, headers: dict[str, str]) -> tuple[tuple[str, str], ...]:
        kept = []
        for name, value in headers.items():
            if reference := _REFERENCE.search(f"{name}: {value}"):
                raise _LeftOut(_reference_reason(f"header {name!r}", reference.group()))
            if problem := header_value_problem(value) or header_value_problem(name):
                raise _LeftOut(f"its header {name!r} {problem}, which HTTP forbids.")
            if name.lower() not in _FRAMING_HEADERS:
                kept.append((name, value))
        return tuple(kept)

    def _where(self, url: str) -> tuple[str, str]:
        """The tool's server URL (scheme, host and port, and its URL's query if any) and its path."""
        url = url.strip()
        if not urlsplit(url).scheme:
            if self.base_url:
                url = f"{self.base_url.rstrip('/')}/{url.lstrip('/')}"
            elif self.manual.url:
                url = urljoin(self.manual.url, url)
            else:
                raise _LeftOut(f"its URL {url!r} is relative and the manual was read from a file; set the Base URL.")
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise _LeftOut(f"its URL {shown_url(url)} is not an http(s) URL.")
        if _PLACEHOLDER.search(parts.netloc) or _PLACEHOLDER.search(parts.query):
            raise _LeftOut(f"its URL {shown_url(url)} has a placeholder outside its path, which is not filled in.")
        target = f"{parts.scheme}://{parts.netloc}" + (f"?{parts.query}" if parts.query else "")
        return target, parts.path

    def _server(self, target: str, headers: tuple[tuple[str, str], ...]) -> ServerSpec:
        key = (target, headers)
        if key not in self.servers:
            timeouts, tls, max_response_bytes = self.limits
            try:
                self.servers[key] = ServerSpec(
                    target=target, name=f"UTCP manual {self.manual.source}", auth=self.auth, timeouts=timeouts,
                    tls=tls, headers=dict(headers), max_response_bytes=max_response_bytes,
                )  # fmt: skip
            except ConfigError as exc:  # a secret written out in its URL or headers, among others
                raise _LeftOut(f"{exc.message[0].lower()}{exc.message[1:]}") from exc
        return self.servers[key]


def _reference_reason(where: str, reference: str) -> str:
    return (
        f"its {where} holds the variable {reference}, which knime-mcp never fills in (nor reads from the "
        "environment): the credential comes from the Authentication setting (--auth) only."
    )


def _output_schema(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's output schema where it describes a JSON object, as MCP's output schemas do."""
    if outputs.get("type") != "object" or not outputs.get("properties"):
        return None
    return {key: value for key, value in outputs.items() if key != "title"}


def _first_problem(exc: Exception) -> str:
    """The first of pydantic's complaints behind utcp's error, without its traceback."""
    cause: BaseException | None = exc
    while cause is not None and not hasattr(cause, "errors"):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return type(exc).__name__
    first = cause.errors()[0]  # type: ignore[attr-defined]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
