"""The operations of an OpenAPI 3.0/3.1 document as tools: one :class:`~knime_mcp.tools.tool.MCPTool` per operation.

Layer: above :mod:`knime_mcp.http.document` (reading) and :mod:`knime_mcp.http.schemas` (``$ref``\\ s), below
:mod:`knime_mcp.calls.listing`, which shapes the tools as the MCP provider does. A tool's arguments are the
operation's path, query and header parameters and, as one argument ``body``, its JSON request body; its
annotations follow the HTTP method unless the operation says otherwise where the method allows it
(:mod:`knime_mcp.http.annotations`).

    tools = openapi_tools(parse_document(text, "openapi.json"), base_url="https://api.example.com/v1")
    tools[0].http   # HttpOperation(method="GET", path="/pets/{petId}", …)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, AuthRef, ServerSpec, Timeouts, TlsSettings
from knime_mcp.errors import ConfigError
from knime_mcp.http.annotations import ANNOTATIONS_EXTENSION, method_annotations
from knime_mcp.http.document import OpenApiDocument
from knime_mcp.http.schemas import DocumentSchemas
from knime_mcp.tools.http_operation import HttpOperation, HttpParameter
from knime_mcp.tools.tool import MCPTool

__all__ = ["DocumentApiKey", "api_key_scheme", "openapi_tools"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_MEDIA = re.compile(r"application/(?:[\w.+-]+\+)?json(?:;.*)?|\*/\*", re.IGNORECASE)
_BODY = "body"
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})


@dataclass(frozen=True, kw_only=True)
class DocumentApiKey:
    """An API key sent where the document's ``apiKey`` security scheme says, under the name it gives: the
    authentication to choose when the header or query parameter name is left to the document."""

    kind: Literal["header", "query"]

    credential: str | None = None
    """The KNIME credential whose password is the key."""

    secret: str | None = None
    """Or a ``${VAR}`` reference to it."""

    def for_document(self, document: OpenApiDocument) -> AuthRef:
        return self.named(api_key_scheme(document, self.kind))

    def named(self, name: str) -> AuthRef:
        """The key sent under ``name``, the one its API's description gives."""
        where = {"header": name} if self.kind == "header" else {"parameter": name}
        return AuthRef(kind=self.kind, credential=self.credential, secret=self.secret, **where)


def openapi_tools(
    document: OpenApiDocument,
    *,
    base_url: str | None = None,
    auth: AuthRef | None = None,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    tls: TlsSettings = DEFAULT_TLS,
    max_response_bytes: int | None = None,
) -> list[MCPTool]:
    """One tool per operation, in the document's order; names as the document gives them (shaping sanitises). The
    servers are not sealed: :func:`knime_mcp.http.origins.judge_servers` decides which may be. ``tls``: the API's
    TLS settings, which a person set (a document cannot ask for any); ``max_response_bytes``: the largest response
    a tool reads (None: the default)."""
    data = document.data
    schemas = DocumentSchemas(data)
    title = str((data.get("info") or {}).get("title") or "") or None
    servers: dict[str, ServerSpec] = {}

    def server(url: str) -> ServerSpec:
        if url not in servers:
            servers[url] = ServerSpec(
                target=url, name=title, auth=auth or AuthRef(), timeouts=timeouts, tls=tls,
                max_response_bytes=max_response_bytes,
            )  # fmt: skip
        return servers[url]

    tools = []
    for path, item in (data.get("paths") or {}).items():
        item = schemas.deref(item, f"path {path}")
        if not isinstance(item, dict):
            continue
        for method in _METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                where = base_url or _server_url(document, operation, item)
                tools.append(_tool(schemas, path, method.upper(), operation, item, server(_base(where))))
    return tools


def api_key_scheme(document: OpenApiDocument, location: Literal["header", "query"]) -> str:
    """The header or query parameter name of the document's first ``apiKey`` security scheme sent in
    ``location``, for an API key whose name is left to the document."""
    schemas = DocumentSchemas(document.data)
    found = []
    for name, scheme in (((document.data.get("components") or {}).get("securitySchemes")) or {}).items():
        scheme = schemas.deref(scheme, f"security scheme {name}")
        if isinstance(scheme, dict) and scheme.get("type") == "apiKey":
            if scheme.get("in") == location and isinstance(scheme.get("name"), str) and scheme["name"]:
                return scheme["name"]
            found.append(f"{name!r} (in the {scheme.get('in')})")
    said = f"only {', '.join(found)}" if found else "none"
    raise ConfigError(
        f"The OpenAPI document has no API key security scheme in the {location}, so the {location} name cannot come "
        f"from it: it has {said}.",
        hint=f"Enter the {'header' if location == 'header' else 'query parameter'} name yourself.",
    )


def _tool(
    schemas: DocumentSchemas,
    path: str,
    method: str,
    operation: dict[str, Any],
    item: dict[str, Any],
    server: ServerSpec,
) -> MCPTool:
    label = f"{method} {path}"
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[HttpParameter] = []
    notes: list[str] = []
    for parameter in _parameters(schemas, operation, item, label):
        location, wire = parameter["in"], parameter["name"]
        if location == "header" and wire.lower() in _IGNORED_HEADERS:
            continue  # OpenAPI: such a parameter definition is ignored (the media types and auth say it)
        if location == "cookie":
            notes.append(f"the cookie parameter {wire!r} is not sent")
            continue
        name = _argument_name(wire, location, properties)
        parameters.append(HttpParameter(name=name, location=location, wire_name=None if name == wire else wire))
        properties[name] = _described(schemas.convert(_parameter_schema(parameter)), parameter.get("description"))
        if parameter.get("required") or location == "path":
            required.append(name)
    annotations = method_annotations(method, operation.get(ANNOTATIONS_EXTENSION), label, notes)
    body = _body(schemas, operation, label, notes)
    body_name = None
    if body is not None:
        body_name = _BODY if _BODY not in properties else "request_body"
        properties[body_name] = body[0]
        required += [body_name] if body[1] else []
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    output = _output_schema(schemas, operation)
    if defs := schemas.defs_for(input_schema):
        input_schema["$defs"] = defs
    summary = str(operation.get("summary") or "").strip()
    detail = str(operation.get("description") or "").strip()
    operation_id = operation.get("operationId")
    return MCPTool(
        name=operation_id if isinstance(operation_id, str) and operation_id else _name_from(method, path),
        tool_name=operation_id if isinstance(operation_id, str) and operation_id else label,
        title=summary or None,
        description="\n\n".join(text for text in (summary, detail) if text) or label,
        input_schema=input_schema,
        parameter_schema=input_schema,
        output_schema=output,
        annotations=annotations,
        server=server,
        notes=tuple(notes),
        http=HttpOperation(method=method, path=path, parameters=tuple(parameters), body=body_name),
    )


def _parameters(
    schemas: DocumentSchemas, operation: dict[str, Any], item: dict[str, Any], label: str
) -> list[dict[str, Any]]:
    """The path item's parameters, overridden by the operation's of the same name and location."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for parameter in [*(item.get("parameters") or []), *(operation.get("parameters") or [])]:
        parameter = schemas.deref(parameter, f"parameter of {label}")
        if not isinstance(parameter, dict) or not isinstance(parameter.get("name"), str):
            raise ConfigError(f"A parameter of {label} has no name.")
        if parameter.get("in") not in ("path", "query", "header", "cookie"):
            raise ConfigError(f"The parameter {parameter['name']!r} of {label} is in {parameter.get('in')!r}.")
        merged[(parameter["name"], parameter["in"])] = parameter
    return list(merged.values())


def _parameter_schema(parameter: dict[str, Any]) -> Any:
    if "schema" in parameter:
        return parameter["schema"]
    content = parameter.get("content") or {}
    return next((media.get("schema", {}) for media in content.values() if isinstance(media, dict)), {})


def _argument_name(wire: str, location: str, taken: dict[str, Any]) -> str:
    """A name a model can use: the parameter's own when it is one, else a snake_case form (``X-Request-Id`` →
    ``x_request_id``); one taken already (``id`` in the path and the query) gets the location as a suffix."""
    name = wire if _ARGUMENT.fullmatch(wire) else re.sub(r"\W+", "_", wire).strip("_").lower() or location
    if name[0].isdigit():
        name = f"_{name}"
    return f"{name}_{location}" if name in taken else name


def _described(schema: Any, description: Any) -> Any:
    if isinstance(schema, dict) and isinstance(description, str) and description and "description" not in schema:
        return {**schema, "description": description}
    return schema


def _body(schemas: DocumentSchemas, operation: dict[str, Any], label: str, notes: list[str]) -> tuple[Any, bool] | None:
    """The JSON request body's schema and whether it is required; None for no body (or one that is not JSON)."""
    request = schemas.deref(operation.get("requestBody"), f"request body of {label}")
    if not isinstance(request, dict):
        return None
    content = request.get("content") or {}
    media = next((value for key, value in content.items() if _JSON_MEDIA.fullmatch(key)), None)
    if not isinstance(media, dict):
        kinds = ", ".join(content) or "no media type"
        if request.get("required"):
            notes.append(f"its request body ({kinds}) is not JSON, which knime-mcp cannot send yet; calls will fail")
        else:
            notes.append(f"its optional request body ({kinds}) is not JSON and is not sent")
        return None
    schema = _described(schemas.convert(media.get("schema", {})), request.get("description"))
    return schema, bool(request.get("required"))


def _output_schema(schemas: DocumentSchemas, operation: dict[str, Any]) -> dict[str, Any] | None:
    """The first 2xx JSON response's schema, when it is an object schema (MCP's output schemas are)."""
    for status, response in (operation.get("responses") or {}).items():
        if not str(status).startswith("2"):
            continue
        response = schemas.deref(response, f"response {status}")
        content = (response or {}).get("content") or {} if isinstance(response, dict) else {}
        media = next((value for key, value in content.items() if _JSON_MEDIA.fullmatch(key)), None)
        if not isinstance(media, dict) or "schema" not in media:
            continue
        schema = schemas.convert(media["schema"])
        defs = schemas.defs_for(schema)
        top = schemas.resolve(schema, defs)
        if not isinstance(top, dict) or top.get("type") != "object":
            return None
        needed = schemas.defs_for(top)  # the definition it came from only if it refers to itself
        return {**top, **({"$defs": needed} if needed else {})}
    return None


def _name_from(method: str, path: str) -> str:
    """``get_pets_petId`` for GET /pets/{petId}."""
    words = [word for word in re.split(r"[^A-Za-z0-9]+", path) if word]
    return "_".join([method.lower(), *words])


def _server_url(document: OpenApiDocument, operation: dict[str, Any], item: dict[str, Any]) -> str:
    """The operation's, path item's or document's first server, with its variables' defaults, made absolute
    against the document's URL; no servers at all means '/', as OpenAPI says."""
    servers = operation.get("servers") or item.get("servers") or document.data.get("servers") or [{"url": "/"}]
    first = servers[0] if isinstance(servers, list) and isinstance(servers[0], dict) else {}
    url = str(first.get("url") or "/")
    for name, variable in (first.get("variables") or {}).items():
        if isinstance(variable, dict) and "default" in variable:
            url = url.replace(f"{{{name}}}", str(variable["default"]))
    if urlsplit(url).scheme:
        return url
    if document.url is None:
        raise ConfigError(
            f"The document's server URL {url!r} is relative, and the document was read from a file.",
            hint="Give the API's base URL, e.g. https://api.example.com/v1.",
        )
    return urljoin(document.url, url)


def _base(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"The API's base URL {url!r} is not an http(s) URL.")
    return url.rstrip("/")
