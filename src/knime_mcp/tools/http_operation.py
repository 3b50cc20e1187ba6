"""How an HTTP tool's arguments become a request: the method, the path under the base URL, where each parameter
goes, and which argument is the JSON body."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from knime_mcp.errors import ConfigError

__all__ = ["BODY_ARGUMENTS", "HttpOperation", "HttpParameter", "ParameterLocation"]

ParameterLocation = Literal["path", "query", "header"]

BODY_ARGUMENTS = "*"
""":attr:`HttpOperation.body` for a request whose JSON body is every argument that is not a parameter (a webhook's
payload), rather than one argument."""

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


@dataclass(frozen=True, kw_only=True)
class HttpParameter:
    """One argument that goes into the request's path, query or headers."""

    name: str
    """The argument's name in the tool's input schema."""

    location: ParameterLocation

    wire_name: str | None = None
    """The name in the request, where the argument's differs (a header ``X-Request-Id`` offered as
    ``x_request_id``); None: the same."""

    @property
    def sent_as(self) -> str:
        return self.wire_name or self.name


@dataclass(frozen=True, kw_only=True)
class HttpOperation:
    """The request one call of an HTTP tool makes."""

    method: str
    """Upper case: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS."""

    path: str = ""
    """Appended to the server's base URL, with ``{name}`` for each path parameter (``/pets/{petId}``); empty for a
    webhook, whose URL is the server's."""

    parameters: tuple[HttpParameter, ...] = ()

    body: str | None = None
    """The argument sent as the JSON request body, :data:`BODY_ARGUMENTS` for every argument that is not a
    parameter, or None for no body."""

    checks_output: bool = False
    """Whether a response must match the tool's output schema (a webhook's *Output Schema*, which a person wrote as
    a promise); an OpenAPI document's response schemas describe an API rather than promise, so they are not checked.
    Written to a table only when set, so the seals of tables made before it stay as they were."""

    def __post_init__(self) -> None:
        """A table may hold anything here; what is wrong is named now, not in a run."""
        if self.method not in _METHODS:
            raise ConfigError(f"The HTTP method {self.method!r} is not one of {', '.join(sorted(_METHODS))}.")
        if not isinstance(self.path, str) or (self.path and not self.path.startswith("/")):
            raise ConfigError(f"The HTTP path {self.path!r} does not start with '/'.")
        for parameter in self.parameters:
            if parameter.location not in get_args(ParameterLocation):
                raise ConfigError(
                    f"Parameter {parameter.name!r} goes to {parameter.location!r}; "
                    f"use one of {', '.join(get_args(ParameterLocation))}."
                )
            if parameter.location == "path" and f"{{{parameter.sent_as}}}" not in self.path:
                raise ConfigError(f"Path parameter {parameter.sent_as!r} is not in the path {self.path!r}.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "parameters": [
                {"name": p.name, "in": p.location, **({"wire_name": p.wire_name} if p.wire_name else {})}
                for p in self.parameters
            ],
            "body": self.body,
            **({"checks_output": True} if self.checks_output else {}),
        }

    @classmethod
    def from_dict(cls, data: object) -> HttpOperation:
        """The operation as a table holds it; malformed entries are a ConfigError."""
        if not isinstance(data, Mapping):
            raise ConfigError("The tool's HTTP operation is not a JSON object.")
        parameters = data.get("parameters") or []
        if not isinstance(parameters, list) or not all(isinstance(p, Mapping) for p in parameters):
            raise ConfigError("The HTTP operation's parameters are not a list of JSON objects.")
        try:
            return cls(
                method=str(data["method"]).upper(),
                path=data.get("path") or "",
                parameters=tuple(
                    HttpParameter(name=str(p["name"]), location=p["in"], wire_name=p.get("wire_name"))
                    for p in parameters
                ),
                body=data.get("body"),
                checks_output=data.get("checks_output") is True,
            )
        except KeyError as exc:
            raise ConfigError(f"The HTTP operation has no {exc.args[0]!r}.") from exc
