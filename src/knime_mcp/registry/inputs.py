"""The inputs a registry entry declares (environment variables, headers and their variables, arguments), and their
values as a person gives them.

Layer: features (``registry``), on values only. The registry's text is data: a value it gives for a secret input is
never used (the setup references ``${NAME}`` instead), a secret the person gives must be a ``${VAR}`` reference, and a
``{variable}`` in a value is replaced by that variable's value, never evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from knime_mcp.config import ENV_REF
from knime_mcp.config.references import INPUT_REF
from knime_mcp.errors import ConfigError
from knime_mcp.registry.entries import MAX_TEXT_CHARS

__all__ = ["EntryInput", "InputKind", "InputValues", "variable_name"]

InputKind = Literal["environment variable", "header", "argument", "URL variable"]

_TEMPLATE = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")


def variable_name(name: str) -> str:
    """The environment variable a secret input is read from: its name in capitals, other characters as ``_``
    (``X-API-Key`` → ``X_API_KEY``, ``token`` → ``TOKEN``)."""
    cleaned = _NOT_NAME.sub("_", name).strip("_").upper() or "VALUE"
    return cleaned if not cleaned[0].isdigit() else f"_{cleaned}"


@dataclass(frozen=True, kw_only=True)
class EntryInput:
    """One value a server entry asks for, as ``servers show`` lists it and ``--env NAME=VALUE`` gives it."""

    name: str
    kind: InputKind
    description: str = ""
    required: bool = False
    secret: bool = False
    default: str | None = None
    choices: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, name: str, kind: InputKind, spec: Mapping[str, Any]) -> EntryInput:
        """The input ``spec`` (an Input of the registry's schema) describes, its description cut as an entry's
        text is."""
        description = spec.get("description")
        return cls(
            name=name,
            kind=kind,
            description=description[:MAX_TEXT_CHARS] if isinstance(description, str) else "",
            required=spec.get("isRequired") is True,
            secret=spec.get("isSecret") is True,
            default=spec.get("default") if isinstance(spec.get("default"), str) else None,
            choices=tuple(choice for choice in spec.get("choices") or () if isinstance(choice, str)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "kind": self.kind, "description": self.description, "required": self.required,
            "secret": self.secret, "default": self.default, "choices": list(self.choices),
        }  # fmt: skip


@dataclass
class InputValues:
    """The person's values by input name, and what reading an entry with them found: its inputs, and the required
    ones nobody gave a value for."""

    given: Mapping[str, str]
    placeholders: bool = False
    """Write a required argument nobody gave as ``<NAME>`` (to show a setup before its values exist)."""

    inputs: list[EntryInput] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def value(self, name: str, spec: Mapping[str, Any], kind: InputKind, *, reference: bool) -> str | None:
        """The value of the input ``name`` described by ``spec`` (an Input of the schema): the entry's fixed value, its
        ``{variables}`` filled (the schema: not for the person to change; a secret one is never used), else the
        person's, else its default, else for a secret or required one a ``${NAME}`` reference where ``reference``
        allows one (not in a command line); None for an optional input left empty."""
        item = EntryInput.from_spec(name, kind, spec)
        fixed = spec.get("value") if isinstance(spec.get("value"), str) else None
        variables = spec.get("variables") if isinstance(spec.get("variables"), dict) else {}
        if fixed is not None and not item.secret:
            return self._fill(fixed, variables, kind, reference=reference)
        self._declare(item)
        if name in self.given:
            given = self.given[name]
            if item.secret and given and not (ENV_REF.search(given) or INPUT_REF.search(given)):
                raise ConfigError(
                    f"The value of {name!r} is a secret and was given written out; it would be kept in settings, "
                    "command lines and files.",
                    hint=f"Give it as {name}=${{VARIABLE}} and set VARIABLE in the environment (in KNIME also "
                    "${input:CREDENTIAL}, the password of a KNIME credential).",
                )
            return given
        if item.default is not None and not item.secret:
            return item.default
        if item.required:
            self.missing.append(name)
            if self.placeholders and not reference:
                return f"<{name}>"
        return f"${{{variable_name(name)}}}" if reference and (item.secret or item.required) else None

    def _fill(self, template: str, variables: Mapping[str, Any], kind: InputKind, *, reference: bool) -> str:
        def replace(match: re.Match[str]) -> str:
            spec = variables.get(match.group(1))
            if not isinstance(spec, dict):
                return match.group(0)  # the schema: an unknown {name} stays as it is
            return self.value(match.group(1), spec, kind, reference=reference) or ""

        return _TEMPLATE.sub(replace, template)

    def _declare(self, item: EntryInput) -> None:
        """Note ``item`` among the entry's inputs, once (a header's variable may be met again)."""
        if all(known.name != item.name for known in self.inputs):
            self.inputs.append(item)
