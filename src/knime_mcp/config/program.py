"""Command-line programs as tools: what a person configures for each, and the programs file (or pasted
configuration) that holds them; a message about the whole says which of the two it was.

Layer: values, beside :class:`~knime_mcp.config.spec.ServerSpec`, which a program becomes for its tool's row: the
program as a one-word command line, its working folder and environment, its timeout and largest output. A program's
tool (:mod:`knime_mcp.programs`) is sealed as a server a person named is, and one from data never runs.

The programs file (the CLI's ``--programs FILE``, the node's pasted configuration), JSON or YAML::

    {"programs": {"word_count": {"command": "wc", "args": ["-w", "{path}"], "description": "Count words",
                  "inputSchema": {...}, "cwd": "/data", "env": {"LANG": "C", "TOKEN": "${MY_TOKEN}"},
                  "timeout": 30, "maxOutputMb": 1, "annotations": {"readOnlyHint": true}}}}
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knime_mcp.config.limits import Timeouts
from knime_mcp.config.spec import ServerSpec
from knime_mcp.errors import ConfigError

__all__ = [
    "DEFAULT_PROGRAM_TIMEOUT",
    "HINT_NAMES",
    "MAX_PROGRAMS_FILE_BYTES",
    "PASTED",
    "PLACEHOLDER",
    "ProgramSpec",
    "derived_schema",
    "programs_from_file",
    "programs_from_mapping",
    "programs_from_text",
]

DEFAULT_PROGRAM_TIMEOUT = 60.0
"""Seconds a program may run unless its ``timeout`` says otherwise."""

MAX_PROGRAMS_FILE_BYTES = 1024 * 1024
"""The largest programs file read: a person types it, so a larger one is a mistake (a binary, a log)."""

HINT_NAMES = {
    "readOnlyHint": "read_only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open_world",
}
"""The MCP behaviour hints a program may declare, by their MCP names, and the fields they set."""

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_-]*)\}")
"""What an argument's template replaces: ``{name}`` (group 1) by the call's argument ``name``, ``{{`` and ``}}`` by
one brace each; any other brace stays as it is."""

_ENTRY_KEYS = frozenset({"command", "args", "description", "inputSchema", "cwd", "env", "timeout", "maxOutputMb",
                         "annotations"})  # fmt: skip
_FILE_HINT = (
    'Write {"programs": {"NAME": {"command": "PROGRAM", "args": ["--flag", "{argument}"]}}}: one entry per program, '
    "each with its command and, optionally, args, description, inputSchema, cwd, env, timeout, maxOutputMb and "
    "annotations."
)


@dataclass(frozen=True, kw_only=True)
class ProgramSpec:
    """One program a person made a tool of; checked as it is made.

    ProgramSpec(name="word_count", command="wc", args=("-w", "{path}")).placeholders   # ("path",)
    """

    name: str
    """The tool's name."""

    command: str
    """One program: a name looked up on ``PATH`` or a path; never split, never given to a shell."""

    args: tuple[str, ...] = ()
    """The arguments after the program, each one element of the command line, with ``{name}`` for the call's
    argument ``name`` (``{{`` and ``}}`` for braces)."""

    description: str = ""

    input_schema: dict[str, Any] | None = None
    """The arguments' JSON Schema; None: one required string per placeholder (:func:`derived_schema`)."""

    cwd: str | None = None
    """The folder the program runs in; None: the one knime-mcp runs in."""

    env: Mapping[str, str] = field(default_factory=dict)
    """Environment entries besides the few passed through; values may be ``${VAR}`` references, resolved at call
    time. A secret written out is refused, as in a stdio server's environment."""

    timeout: float = DEFAULT_PROGRAM_TIMEOUT
    """Seconds a call may run before the program (and every process it started) is killed."""

    max_output_bytes: int | None = None
    """The largest output read; more is a tool error. None: the default, 64 MiB (as an HTTP tool's response)."""

    annotations: Mapping[str, bool] = field(default_factory=dict)
    """MCP behaviour hints by their MCP names (:data:`HINT_NAMES`); none: the MCP defaults (a destructive tool)."""

    _server: ServerSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Everything wrong is named now, with the program's name, not in a run."""
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError("A program has no name.", hint=_FILE_HINT)
        if not isinstance(self.command, str) or not self.command.strip():
            raise self._problem("has no command", 'Give the program to run, e.g. "command": "wc".')
        object.__setattr__(self, "args", _texts(self.args, self._problem))
        if not isinstance(self.description, str):
            raise self._problem("has a description that is not text", "Write the description as text.")
        if self.input_schema is not None:
            self._check_schema(self.input_schema)
        if (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, int | float)
            or not (0 < self.timeout < math.inf)
        ):
            raise self._problem(f"has the timeout {self.timeout!r}", "Give the seconds a call may take, above 0.")
        if self.max_output_bytes is not None and (
            isinstance(self.max_output_bytes, bool) or not isinstance(self.max_output_bytes, int)
            or self.max_output_bytes < 1
        ):  # fmt: skip
            raise self._problem("has a largest output below 1 byte", "Give maxOutputMb above 0, e.g. 1.")
        if wrong := [name for name in self.annotations if name not in HINT_NAMES]:
            raise self._problem(f"has the unknown annotation {wrong[0]!r}", f"Use {', '.join(HINT_NAMES)}.")
        if wrong := [name for name, value in self.annotations.items() if not isinstance(value, bool)]:
            raise self._problem(f"has the annotation {wrong[0]!r} that is not true or false", "Write true or false.")
        object.__setattr__(self, "annotations", dict(self.annotations))
        object.__setattr__(self, "env", dict(self.env))
        object.__setattr__(self, "_server", self._made_server())  # the environment's checks are the server's

    def _problem(self, what: str, hint: str) -> ConfigError:
        return ConfigError(f"Program {self.name!r} {what}.", hint=hint)

    def _check_schema(self, schema: object) -> None:
        if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
            raise self._problem("has an inputSchema that is not an object schema", 'Write {"type": "object", …}.')
        properties = schema.get("properties") or {}
        if missing := [name for name in self.placeholders if name not in properties]:
            raise self._problem(
                f"uses the argument {missing[0]!r} that its inputSchema does not describe",
                f"Add {missing[0]!r} to the inputSchema's properties, or leave inputSchema out to have one made.",
            )

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The argument names the template uses, in order, each once."""
        names = (match.group(1) for arg in self.args for match in PLACEHOLDER.finditer(arg))
        return tuple(dict.fromkeys(name for name in names if name is not None))

    @property
    def schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema: the one given, or one required string per placeholder."""
        return dict(self.input_schema) if self.input_schema is not None else derived_schema(self.placeholders)

    @property
    def server(self) -> ServerSpec:
        """The program as its tool's server: a one-word stdio command line (so that a program from data is refused
        as a stdio server from data is), its folder, environment, timeout and largest output."""
        return self._server

    def _made_server(self) -> ServerSpec:
        try:
            return ServerSpec(
                target=shlex.join([self.command]),
                transport="stdio",
                name=self.name,
                cwd=self.cwd,
                env=self.env,
                timeouts=Timeouts(call=float(self.timeout)),
                max_response_bytes=self.max_output_bytes,
            )
        except (ConfigError, TypeError, AttributeError) as exc:
            message, hint = getattr(exc, "message", str(exc)), getattr(exc, "hint", None)
            raise ConfigError(f"Program {self.name!r}: {message}", hint=hint) from exc


def derived_schema(placeholders: tuple[str, ...]) -> dict[str, Any]:
    """An object schema with one required string property per placeholder."""
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in placeholders},
        "required": list(placeholders),
    }


PASTED = "The programs configuration"
"""What messages call programs a person pasted (the node's *Programs configuration*), where they start."""


def programs_from_mapping(data: object, *, where: str = PASTED) -> list[ProgramSpec]:
    """The programs of a parsed programs configuration: its ``programs`` object, one entry per program. ``where``
    starts a message about the whole: :data:`PASTED`, or ``The programs file '…'``."""
    programs = data.get("programs") if isinstance(data, Mapping) else None
    if not isinstance(programs, Mapping) or not programs:
        raise ConfigError(f'{where} has no "programs" object with at least one program.', hint=_FILE_HINT)
    return [_program(str(name), entry) for name, entry in programs.items()]


def programs_from_text(text: str, *, where: str = PASTED) -> list[ProgramSpec]:
    """The programs of a programs configuration's text: JSON, else YAML (``where`` as :func:`programs_from_mapping`
    takes it)."""
    if not text.strip():
        raise ConfigError(f"{where} is empty.", hint=_FILE_HINT)
    try:
        data = json.loads(text)
    except ValueError:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where} is neither JSON nor YAML ({exc}).", hint=_FILE_HINT) from exc
    return programs_from_mapping(data, where=where)


def programs_from_file(path: str | Path) -> list[ProgramSpec]:
    """The programs of the file at ``path`` (UTF-8 JSON or YAML)."""
    file = Path(path)
    where = f"The programs file {str(file)!r}"
    try:
        if file.stat().st_size > MAX_PROGRAMS_FILE_BYTES:
            raise ConfigError(
                f"{where} is larger than {MAX_PROGRAMS_FILE_BYTES // 1024} KiB.",
                hint="Give the programs file a person wrote (JSON or YAML).",
            )
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} could not be read ({exc}).", hint="Check the path and that it is text.") from exc
    return programs_from_text(text, where=where)


def _program(name: str, entry: object) -> ProgramSpec:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"Program {name!r} is not an object.", hint=_FILE_HINT)
    if unknown := sorted(set(entry) - _ENTRY_KEYS):
        raise ConfigError(f"Program {name!r} has the unknown key {unknown[0]!r}.", hint=_FILE_HINT)
    env = entry.get("env") or {}
    if not isinstance(env, Mapping) or not all(isinstance(value, str | int | float) for value in env.values()):
        raise ConfigError(f"Program {name!r} has an env that is not an object of texts.", hint=_FILE_HINT)
    hints = entry.get("annotations") or {}
    if not isinstance(hints, Mapping):
        raise ConfigError(f"Program {name!r} has annotations that are not an object.", hint=_FILE_HINT)
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"Program {name!r} has a cwd that is not text.", hint="Write the folder as text.")
    return ProgramSpec(
        name=name,
        command=entry.get("command") or "",
        args=_scalars_as_text(entry.get("args") or ()),
        description=entry.get("description") or "",
        input_schema=entry.get("inputSchema"),
        cwd=cwd or None,
        env={str(key): str(value) for key, value in env.items()},
        timeout=entry.get("timeout", DEFAULT_PROGRAM_TIMEOUT),
        max_output_bytes=_bytes(name, entry.get("maxOutputMb")),
        annotations=hints,
    )


def _bytes(name: str, megabytes: object) -> int | None:
    if megabytes is None:
        return None
    if isinstance(megabytes, bool) or not isinstance(megabytes, int | float) or not 0 < megabytes < math.inf:
        raise ConfigError(
            f"Program {name!r} has the maxOutputMb {megabytes!r}.", hint="Give megabytes above 0, e.g. 1."
        )
    return max(1, int(megabytes * 1024 * 1024))


def _scalars_as_text(values: object) -> object:
    """A list's numbers as text (YAML reads ``- 5`` as a number); anything else as it is, for the checks to name."""
    if not isinstance(values, list | tuple):
        return values
    return tuple(
        str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value for value in values
    )


def _texts(values: object, problem: Callable[[str, str], ConfigError]) -> tuple[str, ...]:
    """``values`` as the argument template: texts only, none holding a NUL; else ``problem``'s error."""
    if not isinstance(values, list | tuple) or not all(isinstance(value, str) for value in values):
        raise problem("has args that are not a list of texts", 'Write args as a list, e.g. ["-w", "{path}"].')
    if any("\0" in value for value in values):
        raise problem("has an argument holding a NUL character", "Remove it: a command line cannot hold one.")
    return tuple(values)
