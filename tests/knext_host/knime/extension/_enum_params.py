"""Enum-backed parameter descriptors of ``knime.extension.parameter``: ``EnumParameter``, ``EnumSetParameter``.

Mirrored (knext-api 5.1-5.3): the parameters store member *names*; a custom validator is combined with the built-in
option check (it replaces it for the other parameters, see ``_params``); ``EnumParameter`` rejects member objects
and fails on a ``validator`` argument (a KNIME bug: only the ``@param.validator`` decorator works); without options
both offer KNIME's single default option. Stricter than KNIME: an ``EnumParameter`` default must be a member name
(only 5.10+ converts members).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from knime.extension._params import _BaseParameter
from knime.extension.version import Version


class EnumParameterOptions(Enum):
    """Subclass with members ``NAME = (label, description)``; parameters store the member *name*."""

    def __init__(self, label: str, description: str) -> None:
        self.label, self.description = label, description

    @classmethod
    def get_all_options(cls) -> list[str]:
        return list(cls._member_names_)


class _DefaultOption(EnumParameterOptions):
    DEFAULT_OPTION = ("Default", "This is the default option, since additional options have not been provided.")


class _EnumBase(_BaseParameter):
    """Enum-backed parameters: a custom validator is combined with the built-in option check."""

    _enum: type[EnumParameterOptions]

    def _custom(self, validator: Callable[[Any], None]) -> Callable[[Any], None]:
        def combined(value: Any) -> None:
            self._default_validator(value)
            validator(value)

        return combined

    def _options(self) -> str:
        return "'" + "', '".join(self._enum.get_all_options()) + "'"


class EnumParameter(_EnumBase):
    class Style(Enum):
        RADIO = "radio"
        VALUE_SWITCH = "valueSwitch"
        DROPDOWN = "string"

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: str | Callable[[Version], str] | None = None,
        enum: type[EnumParameterOptions] | None = None,
        validator: Callable[[str], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
        style: EnumParameter.Style | None = None,
    ) -> None:
        if enum is None or not enum.get_all_options():
            enum, default_value = _DefaultOption, _DefaultOption.DEFAULT_OPTION.name
        elif default_value is None:
            raise AttributeError(f"EnumParameter '{label}' with an enum needs a default_value (a member name)")
        elif isinstance(default_value, EnumParameterOptions):
            raise TypeError("default_value must be a member name (str); KNIME < 5.10 does not convert members")
        if validator is not None:  # KNIME's own bug, mirrored: the argument fails there; use @param.validator
            raise AttributeError("'EnumParameter' object has no attribute '_add_default_validator'")
        self._enum, self._style = enum, style
        super().__init__(label, description, default_value, validator, since_version, is_advanced)

    def _default_validator(self, value: Any) -> None:
        if value not in self._enum.get_all_options():
            raise ValueError(
                f"The selection '{value}' for parameter '{self._label}' is not one of the available options: "
                f"{self._options()}."
            )


class EnumSetParameter(_EnumBase):
    """A ``list`` of member names; the default selects every option."""

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: list[str] | Callable[[Version], list[str]] | None = None,
        enum: type[EnumParameterOptions] | None = None,
        validator: Callable[[list[str]], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
    ) -> None:
        self._enum = _DefaultOption if enum is None or not enum.get_all_options() else enum
        if default_value is None:
            default_value = self._enum.get_all_options()
        super().__init__(label, description, default_value, validator, since_version, is_advanced)

    def _default_validator(self, value: Any) -> None:
        if not isinstance(value, list):
            raise TypeError(f"{value} is of type {type(value)}, but should be a list.")
        if not set(value) <= set(self._enum.get_all_options()):
            raise ValueError(
                f"The selection '{value}' for parameter '{self._label}' is not a subset of the available options: "
                f"{self._options()}."
            )
