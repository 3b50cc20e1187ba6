"""VS Code's ``inputs`` (``${input:ID}``) in ``--config FILE``: the value comes from the environment variable
``KNIME_MCP_INPUT_<ID>`` (the id upper-cased, other characters than letters and digits as ``_``), or, with a person
at the terminal, from a hidden prompt.

In KNIME an input names a KNIME credential; the command line has none, so each input becomes the ``${VAR}``
reference of its variable in the server's spec (a tools table written from it names the variable, never the value),
and a value typed at the prompt is set in this process's environment only, where the reference resolves it.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace

from knime_mcp.config import ServerSpec
from knime_mcp.config.pasted import input_ids
from knime_mcp.config.references import INPUT_REF
from knime_mcp.errors import ConfigError

__all__ = ["INPUT_VARIABLE_PREFIX", "bind_inputs", "input_variable"]

INPUT_VARIABLE_PREFIX = "KNIME_MCP_INPUT_"

Ask = Callable[[str], str]
"""Asks a person for a value without showing it (:func:`getpass.getpass`)."""


def input_variable(input_id: str) -> str:
    """The environment variable that holds the input ``input_id``: ``mcp-token`` is ``KNIME_MCP_INPUT_MCP_TOKEN``."""
    return INPUT_VARIABLE_PREFIX + re.sub(r"[^A-Za-z0-9]+", "_", input_id).strip("_").upper()


def bind_inputs(specs: Mapping[str, ServerSpec], ask: Ask | None = None) -> dict[str, ServerSpec]:
    """``specs`` with each input as its variable's reference; a variable that is not set is asked for when someone
    is at the terminal (``ask``, default: :func:`getpass.getpass` when stdin is a terminal), else a ConfigError
    naming it."""
    if ask is None and sys.stdin.isatty():
        ask = getpass.getpass
    return {name: _bound(name, spec, ask) for name, spec in specs.items()}


def _bound(name: str, spec: ServerSpec, ask: Ask | None) -> ServerSpec:
    used = input_ids(spec)
    if not used:
        return spec
    for input_id in used:
        _provide(name, input_id, ask)
    env = {
        key: INPUT_REF.sub(lambda match: f"${{{input_variable(match[1])}}}", value) for key, value in spec.env.items()
    }
    auth = spec.auth
    if auth.credential is not None:
        auth = replace(auth, credential=None, secret=f"${{{input_variable(auth.credential)}}}")
    return replace(spec, env=env, auth=auth)


def _provide(server: str, input_id: str, ask: Ask | None) -> None:
    variable = input_variable(input_id)
    if variable in os.environ:
        return
    if ask is None:
        raise ConfigError(
            f"Server {server!r} of --config uses the input {input_id!r}, and nobody is at the terminal to type it.",
            hint=f"Set {variable} in the environment of this command to the input's value.",
        )
    value = ask(f"Value of input {input_id!r} for server {server!r} (hidden; or set {variable}): ")
    if not value:
        raise ConfigError(f"No value was given for the input {input_id!r} of server {server!r}.")
    os.environ[variable] = value
