"""MCP server configurations as people copy them from READMEs, read into named :class:`ServerSpec` values.

Two formats: Claude Desktop's and Cursor's ``{"mcpServers": {name: {...}}}``, and VS Code's
``{"servers": {name: {...}}, "inputs": [...]}`` (also inside its settings' ``{"mcp": {...}}``); each server has
``command`` and ``args`` (stdio) or ``url`` (http), and ``env``, ``headers``, ``cwd``, ``type``. The text is untrusted:
its size is bounded, and each error names the server and the entry, never a value, which may be a secret.

Secrets follow this project's rule (:mod:`knime_mcp.config.references`): VS Code's ``${env:VAR}`` is ``${VAR}``, and
its ``${input:id}`` names the KNIME credential ``id``: in a credential header as an :class:`AuthRef`, in a stdio
server's environment as it is (:func:`~knime_mcp.config.resolve.resolve_env` reads the credential's password when the
server starts); a secret written out is refused with the reference to write instead.

A server may carry ``"tags": ["a", "b"]``, which this project adds (other clients ignore keys they do not know): the
tools table gives each of its tools those tags (:func:`pasted_tags`), by which agents and the Tool Caller select tools.

    specs = parse_pasted('{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@mcp/server-memory"]}}}')
    specs["memory"].target == "npx -y @mcp/server-memory"
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from knime_mcp.config.auth import AuthRef
from knime_mcp.config.references import INPUT_REF, literal_secret_env, literal_secret_headers
from knime_mcp.config.spec import ServerSpec, TransportKind
from knime_mcp.config.websocket import refuse_websocket
from knime_mcp.errors import ConfigError
from knime_mcp.redaction import CREDENTIAL_VALUE

__all__ = ["MAX_PASTED_CHARS", "MAX_PASTED_SERVERS", "MAX_TAG_CHARS", "input_ids", "parse_pasted", "pasted_tags"]

MAX_PASTED_CHARS = 256 * 1024
"""The longest configuration read: a configuration of many servers is a few kilobytes."""

MAX_PASTED_SERVERS = 100
"""The most servers one configuration may describe."""

MAX_TAG_CHARS = 100
"""The longest tag a server's ``"tags"`` may hold: a word or two, shown in a table's *Tags* column."""

_TYPES: dict[str, TransportKind] = {"stdio": "stdio", "http": "streamable-http", "streamable-http": "streamable-http",
                                    "streamableHttp": "streamable-http", "sse": "sse"}  # fmt: skip
"""The ``type`` values of the formats, as this project's transports."""

_ENV_VAR = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_BEARER = re.compile(r"bearer\s+\$\{input:([^}]*)\}", re.IGNORECASE)
_KEYS = ("mcpServers", "servers")
_CREDENTIAL_ENTRY = '"{key}": "${{input:CREDENTIAL}}" to pass the KNIME credential CREDENTIAL, or '
_FORMATS = '{"mcpServers": {NAME: {...}}} (Claude Desktop, Cursor) or {"servers": {NAME: {...}}} (VS Code)'


def parse_pasted(text: str, *, credentials: bool = True) -> dict[str, ServerSpec]:
    """The servers of a pasted configuration by their keys, in its order; a ConfigError saying what is wrong (and
    what to write instead of a secret) otherwise. ``credentials``: an input may be a KNIME credential here, so the
    advice for a secret written out offers one (False on the command line, which has none)."""
    data, servers = _configuration(text)
    inputs = _input_ids(data.get("inputs"))
    return {str(name): _server(str(name), entry, inputs, credentials) for name, entry in servers.items()}


def pasted_tags(text: str) -> dict[str, tuple[str, ...]]:
    """The tags of each server of a pasted configuration (its ``"tags"``; none without), by the servers' keys; a
    ConfigError for a configuration :func:`parse_pasted` refuses for its form or its tags."""
    _, servers = _configuration(text)
    return {str(name): _tags(str(name), entry) for name, entry in servers.items()}


def _configuration(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The configuration (inside VS Code's settings' ``"mcp"``) and its servers by their keys, bounded in size."""
    if len(text) > MAX_PASTED_CHARS:
        raise ConfigError(
            f"The MCP configuration is {len(text):,} characters long, more than {MAX_PASTED_CHARS:,}.",
            hint="Paste only the servers' part of the configuration.",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"The MCP configuration is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint=f"Paste it as {_FORMATS}.",
        ) from None
    except RecursionError:
        raise ConfigError("The MCP configuration is nested too deeply.", hint=f"Paste it as {_FORMATS}.") from None
    if isinstance(data, dict) and isinstance(data.get("mcp"), dict):
        data = data["mcp"]  # VS Code's settings.json
    servers = next((data[key] for key in _KEYS if isinstance(data, dict) and key in data), None)
    if not isinstance(servers, dict) or not servers:
        raise ConfigError("The MCP configuration names no servers.", hint=f"Paste it as {_FORMATS}.")
    if len(servers) > MAX_PASTED_SERVERS:
        raise ConfigError(
            f"The MCP configuration describes {len(servers)} servers, more than {MAX_PASTED_SERVERS}.",
            hint="Split it into several configurations.",
        )
    return data, servers


def input_ids(spec: ServerSpec) -> tuple[str, ...]:
    """The inputs (KNIME credentials, in KNIME) a server of a pasted configuration uses, each once: its header's and
    its stdio environment's."""
    used = [*INPUT_REF.findall(" ".join(spec.env.values()))]
    if spec.auth.credential is not None:
        used.append(spec.auth.credential)
    return tuple(dict.fromkeys(used))


def _input_ids(inputs: Any) -> frozenset[str] | None:
    """The ids of VS Code's ``inputs``; None when the configuration declares none (Claude Desktop's)."""
    if inputs is None:
        return None
    if not isinstance(inputs, list) or not all(isinstance(item, dict) and "id" in item for item in inputs):
        raise ConfigError('The "inputs" of the MCP configuration are not a list of objects with an "id".')
    return frozenset(str(item["id"]) for item in inputs)


def _refuse_websocket(name: str, url: str, kind: object) -> None:
    try:
        refuse_websocket(url, kind if isinstance(kind, str) else None)
    except ConfigError as exc:
        raise ConfigError(f"Server {name!r}: {exc.message}", hint=exc.hint) from None


def _server(name: str, entry: Any, inputs: frozenset[str] | None, credentials: bool) -> ServerSpec:
    if not isinstance(entry, dict):
        raise ConfigError(f"Server {name!r} of the MCP configuration is not an object.", hint=f"Write {_FORMATS}.")
    command, url = entry.get("command"), entry.get("url") or entry.get("serverUrl")
    if (command is None) == (url is None):
        raise ConfigError(
            f'Server {name!r} of the MCP configuration needs either a "command" (stdio) or a "url" (http).',
        )
    kind = entry.get("type") or entry.get("transport")
    _refuse_websocket(name, url if isinstance(url, str) else "", kind)
    if kind is not None and kind not in _TYPES:
        raise ConfigError(f"Server {name!r} has an unknown type {kind!r}; use one of {', '.join(_TYPES)}.")
    env = _env(name, _strings(name, "env", entry.get("env", {})), inputs, credentials)
    headers, auth = _headers(name, _strings(name, "headers", entry.get("headers", {})), inputs, credentials)
    if command is not None:
        args = entry.get("args", [])
        if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f'Server {name!r}: "command" must be text and "args" a list of texts.')
        _check_args(name, args)
        target = shlex.join([command, *map(_env_refs, args)])
    elif not isinstance(url, str):
        raise ConfigError(f'Server {name!r}: "url" must be text.')
    else:
        target = _env_refs(url)
    if INPUT_REF.search(target):
        raise ConfigError(
            f"Server {name!r}: its {'command line' if command is not None else 'URL'} references an input, which "
            "only a credential header or a stdio server's environment entry can take.",
            hint="Write ${VARIABLE} instead and set VARIABLE in the environment KNIME (or this command) runs in.",
        )
    _tags(name, entry)
    cwd = entry.get("cwd")
    try:
        return ServerSpec(
            target=target,
            transport=_TYPES[kind] if kind else "stdio" if command is not None else "auto",
            name=name,
            env=env,
            headers=headers,
            auth=auth,
            cwd=cwd if isinstance(cwd, str) else None,
        )
    except ConfigError as exc:
        raise ConfigError(f"Server {name!r}: {exc.message}", hint=exc.hint) from None


def _tags(name: str, entry: Any) -> tuple[str, ...]:
    """The server's ``"tags"``: a list of short texts, kept stripped and without empty ones."""
    tags = entry.get("tags", []) if isinstance(entry, dict) else []
    if not isinstance(tags, list) or not all(isinstance(tag, str) and len(tag) <= MAX_TAG_CHARS for tag in tags):
        raise ConfigError(
            f'Server {name!r}: "tags" must be a list of texts of at most {MAX_TAG_CHARS} characters.',
            hint='Write e.g. "tags": ["github", "read"].',
        )
    return tuple(tag.strip() for tag in tags if tag.strip())


def _strings(name: str, what: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(text, str) for text in value.values()):
        raise ConfigError(f'Server {name!r}: "{what}" must be an object of texts.')
    return {str(key): text for key, text in value.items()}


def _env_refs(text: str) -> str:
    """VS Code's ``${env:VAR}`` as this project's ``${VAR}``."""
    return _ENV_VAR.sub(r"${\1}", text)


def _env(name: str, env: dict[str, str], inputs: frozenset[str] | None, credentials: bool) -> dict[str, str]:
    """The stdio environment; an input stays as it is (the KNIME credential it names is read when the server
    starts), a secret written out is refused naming the ``${VAR}`` to write."""
    env = {key: _env_refs(value) for key, value in env.items()}
    for key, value in env.items():
        for credential in INPUT_REF.findall(value):
            if inputs is not None and credential not in inputs:
                raise ConfigError(f"Server {name!r}: the environment entry {key!r} references input {credential!r}, "
                                  "not declared.")  # fmt: skip
    plain = [key for key, value in env.items() if CREDENTIAL_VALUE.match(value.strip())]
    for key in literal_secret_env(env) or plain:
        raise ConfigError(
            f"Server {name!r}: the environment entry {key!r} holds a literal secret, which would be kept in settings "
            "and tables.",
            hint=f'Write {_CREDENTIAL_ENTRY.format(key=key) if credentials else ""}"{key}": "${{{key}}}" with {key} '
            "set in the environment KNIME (or this command) runs in.",
        )
    return env


def _headers(
    name: str, headers: dict[str, str], inputs: frozenset[str] | None, credentials: bool
) -> tuple[dict[str, str], AuthRef]:
    """The headers without the one that references an input, and that input as a KNIME credential: ``Bearer
    ${input:id}`` in ``Authorization`` is bearer authentication, ``${input:id}`` alone another header's value."""
    headers = {key: _env_refs(value) for key, value in headers.items()}
    auth = AuthRef()
    for key, value in list(headers.items()):
        if not INPUT_REF.search(value):
            continue
        bearer = _BEARER.fullmatch(value.strip()) if key.lower() == "authorization" else None
        whole = INPUT_REF.fullmatch(value.strip())
        if auth.kind != "none" or not (bearer or (whole and key.lower() != "authorization")):
            raise ConfigError(
                f"Server {name!r}: the header {key!r} references an input in a way a KNIME credential cannot stand "
                "for (one credential per server, as 'Bearer ${input:ID}' or a whole header value).",
                hint=f'Write "{key}": "…${{VARIABLE}}…" and set VARIABLE in the environment KNIME runs in.',
            )
        credential = (bearer or whole).group(1)  # type: ignore[union-attr]  # one of them matched
        if inputs is not None and credential not in inputs:
            raise ConfigError(f"Server {name!r}: the header {key!r} references input {credential!r}, not declared.")
        del headers[key]
        header = {} if bearer else {"header": key}
        auth = AuthRef(kind="bearer" if bearer else "header", credential=credential, **header)
    for key in literal_secret_headers(headers):
        words = headers[key].split()
        scheme = words[0] + " " if len(words) > 1 else ""
        takes_input = credentials and scheme.lower() == ("bearer " if key.lower() == "authorization" else "")
        credential = f'"{key}": "{scheme}${{input:CREDENTIAL}}" to send the KNIME credential CREDENTIAL, or '
        raise ConfigError(
            f"Server {name!r}: the header {key!r} holds a literal secret, which would be kept in settings and tables.",
            hint=f"Write {credential if takes_input else ''}"
            f'"{key}": "{scheme}${{VARIABLE}}" with VARIABLE set in the environment KNIME runs in.',
        )
    return headers, auth


def _check_args(name: str, args: list[str]) -> None:
    """A command-line word that is plainly a credential (a token in a vendor's format) is refused by position."""
    for number, word in enumerate(args, start=1):
        if CREDENTIAL_VALUE.search(word) and not _ENV_VAR.search(word):
            raise ConfigError(
                f"Server {name!r}: argument {number} holds a literal secret (its text is not shown), which would be "
                "kept in settings, tables and process lists.",
                hint='Pass the secret in "env" as ${VARIABLE}, set in the environment KNIME runs in, if the '
                "server reads it from there.",
            )
