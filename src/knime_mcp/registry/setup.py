"""A chosen registry entry (or preset) as a server setup: the ``mcpServers`` entry a person can keep, its
:class:`~knime_mcp.config.ServerSpec`, and the inputs it needs.

Layer: features (``registry``), on values only. A package runs pinned to the entry's version: npm through
``npx -y NAME@VERSION``, PyPI through ``uvx NAME==VERSION``, OCI through ``docker run -i --rm IMAGE:TAG``; a remote
is its Streamable HTTP or SSE URL. A package name, image or version that is not plainly one (shell characters, a
leading ``-`` that a runner would read as an option, a version range) is refused, and the command is a list of words,
never a shell line. Secrets are never written out: a secret input becomes a ``${NAME}`` reference, and a header value
from the registry that holds a literal secret is replaced by one.

    setup = server_setup(entry, {"ALLOWED_DIR": "/data"})
    setup.config   # {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/data"]}
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knime_mcp.config import ServerSpec, literal_secret_headers, parse_pasted
from knime_mcp.errors import ConfigError
from knime_mcp.registry.entries import RegistryEntry
from knime_mcp.registry.inputs import EntryInput, InputValues, variable_name

__all__ = ["RUNNERS", "ServerSetup", "server_setup"]

RUNNERS = {"npm": "npx", "pypi": "uvx", "oci": "docker"}
"""The package types a setup runs, and the program that runs each."""

_NPM = re.compile(r"(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*")
_PYPI = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_OCI = re.compile(r"[a-z0-9][a-z0-9._/-]*(?::[A-Za-z0-9_][A-Za-z0-9._-]*)?(?:@sha256:[a-f0-9]{64})?")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]*")
_REMOTES = {"streamable-http": "streamable-http", "sse": "sse"}


@dataclass(frozen=True, kw_only=True)
class ServerSetup:
    """How to run one entry: the way chosen, the ``mcpServers`` entry, and every input the entry declares."""

    entry: RegistryEntry
    way: str
    """In words: ``npm package @scope/name@1.2.3``, ``remote streamable-http https://…``."""

    config: dict[str, Any]
    """The ``mcpServers`` entry (``command`` and ``args``, or ``type`` and ``url``; ``env``, ``headers``)."""

    inputs: tuple[EntryInput, ...]
    missing: tuple[str, ...] = ()
    """Required inputs given no value; the environment ones are read from ``${NAME}`` when the server starts."""

    @property
    def key(self) -> str:
        """The ``mcpServers`` key: the last part of the entry's name (``io.github.user/weather`` → ``weather``)."""
        return self.entry.name.rsplit("/", 1)[-1] or "server"

    def spec(self, *, credentials: bool = False) -> ServerSpec:
        """The ServerSpec of :attr:`config`, checked as a pasted configuration is (a literal secret is refused)."""
        text = json.dumps({"mcpServers": {self.key: self.config}})
        return parse_pasted(text, credentials=credentials)[self.key]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.entry.name, "version": self.entry.version, "source": self.entry.source, "way": self.way,
            "mcpServers": {self.key: self.config}, "inputs": [item.to_dict() for item in self.inputs],
            "missing": list(self.missing),
        }  # fmt: skip


def server_setup(entry: RegistryEntry, values: Mapping[str, str] | None = None, *, strict: bool = True) -> ServerSetup:
    """The setup of ``entry``: its first package this project runs (npm, PyPI, OCI over stdio), else its first
    remote; ``values``: the person's values by input name (``servers show`` lists the names). A ConfigError says
    what cannot be set up, or (``strict``) which required arguments are missing; not ``strict``, such an argument
    is written ``<NAME>``, to show the setup."""
    given = InputValues(dict(values or {}), placeholders=not strict)
    for package in entry.packages:
        kind = _kind_of(package)
        transport = package.get("transport") if isinstance(package.get("transport"), dict) else {}
        if kind in RUNNERS and transport.get("type", "stdio") == "stdio":
            config, way = _package(entry, package, given)
            break
    else:
        remote = next((item for item in entry.remotes if item.get("type") in _REMOTES), None)
        if remote is None:
            kinds = sorted(
                {str(_kind_of(item)) for item in entry.packages} | {str(item.get("type")) for item in entry.remotes}
            )
            raise ConfigError(
                f"The server {entry.label} offers no way this project runs ({', '.join(kinds) or 'none'}).",
                hint="It runs npm, PyPI and OCI packages over stdio, and streamable-http and sse remotes.",
            )
        config, way = _remote(entry, remote, given)
    arguments = [name for name in given.missing if _kind(given, name) in ("argument", "URL variable")]
    if arguments and strict:
        listed = ", ".join(repr(name) for name in arguments)
        raise ConfigError(
            f"The server {entry.label} needs a value for {listed}.",
            hint=f"Give each as NAME=VALUE ({arguments[0]}=…).",
        )
    return ServerSetup(entry=entry, way=way, config=config, inputs=tuple(given.inputs), missing=tuple(given.missing))


def _kind_of(package: dict[str, Any]) -> Any:
    """The package's type; the registry's first format (2025-07) called it ``registry_name``, OCI ``docker``."""
    kind = package.get("registryType") or package.get("registryName")
    return "oci" if kind == "docker" else kind


def _kind(given: InputValues, name: str) -> str:
    return next((item.kind for item in given.inputs if item.name == name), "")


def _checked(pattern: re.Pattern[str], text: Any, what: str, entry: RegistryEntry) -> str:
    if not isinstance(text, str) or not pattern.fullmatch(text) or text.lower() == "latest":
        shown = json.dumps(text)[:80] if isinstance(text, str) else "none"
        raise ConfigError(
            f"The server {entry.label} gives the {what} {shown}, which is not a plain {what}; it is not run.",
            hint="A registry entry's package name and version may not hold shell characters, spaces, a leading '-' "
            "or a range.",
        )
    return text


def _package(entry: RegistryEntry, package: dict[str, Any], given: InputValues) -> tuple[dict[str, Any], str]:
    kind = _kind_of(package)
    identifier = package.get("identifier") or package.get("name")  # "name" in the first format
    version = package.get("version") or (entry.version if kind != "oci" else None)
    env: dict[str, str] = {}
    for variable in package.get("environmentVariables") or ():
        if isinstance(variable, dict) and isinstance(variable.get("name"), str):
            name = _checked(_PYPI, variable["name"], "environment variable name", entry)
            value = given.value(name, variable, "environment variable", reference=True)
            if value is not None:
                env[name] = value
    arguments = _arguments(package.get("packageArguments"), given)
    if kind == "npm":
        name = _checked(_NPM, identifier, "npm package name", entry)
        pinned = f"{name}@{_checked(_VERSION, version, 'version', entry)}"
        command, args = "npx", ["-y", pinned, *arguments]
    elif kind == "pypi":
        name = _checked(_PYPI, identifier, "PyPI package name", entry)
        pinned = f"{name}=={_checked(_VERSION, version, 'version', entry)}"
        command, args = "uvx", [pinned, *arguments]
    else:
        image = _checked(_OCI, identifier, "image", entry)
        if ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
            image = f"{image}:{_checked(_VERSION, version or entry.version, 'version', entry)}"
        pinned = image
        runtime = _arguments(package.get("runtimeArguments"), given)
        passed = [word for name in env for word in ("-e", name)]
        command, args = "docker", ["run", "-i", "--rm", *runtime, *passed, image, *arguments]
    config: dict[str, Any] = {"command": command, "args": args}
    if env:
        config["env"] = env
    return config, f"{kind} package {pinned}"


def _arguments(declared: Any, given: InputValues) -> list[str]:
    """The command-line words of a package's or runtime's arguments, in the entry's order; an optional argument
    without a value is left out."""
    words: list[str] = []
    for argument in declared if isinstance(declared, list) else ():
        if not isinstance(argument, dict):
            continue
        if argument.get("type") == "named" and isinstance(argument.get("name"), str):
            flag = argument["name"]
            value = given.value(flag.lstrip("-") or flag, argument, "argument", reference=False)
            if value is not None:
                words.append(f"{flag}={value}" if value else flag)
        elif isinstance(hint := argument.get("valueHint") or argument.get("value"), str):
            value = given.value(str(argument.get("valueHint") or hint), argument, "argument", reference=False)
            if value is not None:
                words.append(value)
    return words


def _remote(entry: RegistryEntry, remote: dict[str, Any], given: InputValues) -> tuple[dict[str, Any], str]:
    url = remote.get("url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ConfigError(f"The server {entry.label} gives a remote without an http(s) URL.")
    variables = remote.get("variables") if isinstance(remote.get("variables"), dict) else {}
    url = given.value("url", {"value": url, "variables": variables}, "URL variable", reference=False) or url
    headers: dict[str, str] = {}
    for header in remote.get("headers") or ():
        if isinstance(header, dict) and isinstance(header.get("name"), str):
            name = header["name"]
            value = given.value(name, header, "header", reference=True)
            if value is not None:
                headers[name] = value
    for name in literal_secret_headers(headers):  # a registry's literal secret: never kept, referenced instead
        secret = {"isSecret": True, "isRequired": True, "description": "a secret the registry gave written out"}
        headers[name] = given.value(name, secret, "header", reference=True) or f"${{{variable_name(name)}}}"
    config: dict[str, Any] = {"type": _REMOTES[remote["type"]], "url": url}
    if headers:
        config["headers"] = headers
    return config, f"remote {remote['type']} {url}"
