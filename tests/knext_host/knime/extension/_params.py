"""Parameter descriptors of ``knime.extension.parameter`` (KNIME runtime and ktest behave alike here).

Mirrored (knext-api 5.1-5.3): class-level descriptors whose values live in ``instance.__parameters__``; a
default is stored on first read without validation; every assignment validates (``TypeError`` for types,
``ValueError`` for values); ``bool`` passes ``IntParameter``; a custom validator replaces the built-in check of
Int/Double/Bool/String/Multiline parameters; ``StringParameter`` never checks ``enum`` membership; rules only
describe the dialog. Stricter than KNIME: ``choices`` must be a callable (static lists need 5.8). The enum-backed
parameters live in ``_enum_params``. Not provided: multi-column, column-filter, array, date/time and path
parameters, ``Contains``, ``DialogContextCondition``, ``hidden_choices``.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from knime.extension import _schema as ks
from knime.extension.version import Version

_extension_version: Version | None = None


def set_extension_version(version: str) -> None:
    """Set the version callable defaults receive (KNIME does this from knime.yml; ktest does not)."""
    global _extension_version
    _extension_version = Version.parse_version(version)


def _get_extension_version() -> Version:
    if _extension_version is None:
        raise RuntimeError("The extension version has not been set by the backend.")
    return _extension_version


class Effect(Enum):
    SHOW = "SHOW"
    HIDE = "HIDE"
    ENABLE = "ENABLE"
    DISABLE = "DISABLE"


class Condition(ABC):
    """A dialog-rule condition; rules never affect values or validation."""


class OneOf(Condition):
    def __init__(self, subject: Any, values: list[Any]) -> None:
        self._subject, self._values = subject, values


class _Combination(Condition):
    def __init__(self, *conditions: Condition) -> None:
        if not conditions:
            raise ValueError(f"At least one condition is required in {type(self).__name__} condition.")
        self._conditions = conditions


class And(_Combination):
    pass


class Or(_Combination):
    pass


@dataclass
class Rule:
    condition: Condition
    effect: Effect


class _BaseParameter(ABC):
    __kind__ = "parameter"

    def __init__(
        self,
        label: str | None,
        description: str | None,
        default_value: Any,
        validator: Callable[[Any], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
    ) -> None:
        self._label, self._default_value = label, default_value
        self._validator = self._default_validator if validator is None else self._custom(validator)
        self.__doc__ = description or ""
        self._since_version = Version.parse_version(since_version)
        self._is_advanced = is_advanced
        self._rule: Rule | None = None

    def _default_validator(self, value: Any) -> None:
        """Parameters without built-in checks (e.g. ``ColumnParameter``) accept anything."""

    def _custom(self, validator: Callable[[Any], None]) -> Callable[[Any], None]:
        """How a user validator relates to the built-in one: it replaces it (overridden where KNIME combines)."""
        return validator

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        if self._label is None:
            self._label = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        return self if obj is None else self._get_value(obj, self._name)

    def __set__(self, obj: Any, value: Any) -> None:
        self._set_value(obj, value, self._name)

    def _get_value(self, obj: Any, name: str, for_dialog: bool = False) -> Any:
        params = _parameter_dict(obj)
        if name not in params:
            params[name] = self._get_default()
        return params[name]

    def _get_default(self, version: Version | None = None) -> Any:
        if callable(self._default_value):
            return self._default_value(_get_extension_version() if version is None else version)
        return self._default_value

    def _set_value(self, obj: Any, value: Any, name: str) -> None:
        self._validate(value)
        _parameter_dict(obj)[name] = value

    def _set_default_for_version(self, obj: Any, name: str, version: Version) -> None:
        self._set_value(obj, self._get_default(version), name)

    def _inject(self, obj: Any, value: Any, name: str, version: Version) -> None:
        self._set_value(obj, self._from_dict(value), name)

    def _extract_value(self, obj: Any, name: str, for_dialog: bool) -> Any:
        return self._to_dict(self._get_value(obj, name, for_dialog))

    def _to_dict(self, value: Any) -> Any:
        return value

    def _from_dict(self, value: Any) -> Any:
        return value

    def _validate(self, value: Any, version: Version | None = None) -> None:
        self._validator(value)

    def _validate_specs(self, specs: list[Any]) -> None:
        """Only column parameters check the input specs."""

    def validator(self, func: Callable[[Any], None]) -> None:
        """Decorator setting a custom validator; like KNIME it returns ``None``."""
        self._validator = self._custom(func)

    def rule(self, condition: Condition, effect: Effect) -> _BaseParameter:
        self._rule = Rule(condition, effect)
        return self


class _NumericParameter(_BaseParameter):
    def __init__(
        self,
        label: str | None,
        description: str | None,
        default_value: Any,
        validator: Callable[[Any], None] | None,
        min_value: float | None,
        max_value: float | None,
        since_version: str | Version | None,
        is_advanced: bool,
    ) -> None:
        self.min_value, self.max_value = min_value, max_value
        super().__init__(label, description, default_value, validator, since_version, is_advanced)

    @abstractmethod
    def _check_type(self, value: Any) -> None: ...

    def _default_validator(self, value: Any) -> None:
        self._check_type(value)
        if self.min_value is not None and value < self.min_value:
            raise ValueError(f"{value} is smaller than the minimal value {self.min_value}")
        if self.max_value is not None and value > self.max_value:
            raise ValueError(f"{value} is > the max value {self.max_value}")


class IntParameter(_NumericParameter):
    """An ``int`` (``bool`` passes, as in KNIME); bounds are inclusive."""

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: int | Callable[[Version], int] = 0,
        validator: Callable[[int], None] | None = None,
        min_value: int | None = None,
        max_value: int | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
    ) -> None:
        super().__init__(label, description, default_value, validator, min_value, max_value, since_version, is_advanced)

    def _check_type(self, value: Any) -> None:
        if not isinstance(value, int):
            raise TypeError(f"{value} is of type {type(value)}, but should be of type int.")


class DoubleParameter(_NumericParameter):
    """Any ``numbers.Number``, stored unchanged."""

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: float | Callable[[Version], float] = 0.0,
        validator: Callable[[float], None] | None = None,
        min_value: float | None = None,
        max_value: float | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
    ) -> None:
        super().__init__(label, description, default_value, validator, min_value, max_value, since_version, is_advanced)

    def _check_type(self, value: Any) -> None:
        if not isinstance(value, numbers.Number):
            raise TypeError(f"{value} is of type {type(value)}, but should be a number.")


class BoolParameter(_BaseParameter):
    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: bool | Callable[[Version], bool] = False,
        validator: Callable[[bool], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
    ) -> None:
        super().__init__(label, description, default_value, validator, since_version, is_advanced)

    def _default_validator(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"{value} is not a boolean")


class _TextParameter(_BaseParameter):
    def _default_validator(self, value: Any) -> None:
        if not isinstance(value, str):
            raise TypeError(f"{value} is of type {type(value)}, but should be of type string.")


class StringParameter(_TextParameter):
    """A ``str``; ``enum``/``choices`` only feed the dialog, membership is never checked."""

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: str | Callable[[Version], str] = "",
        enum: list[str] | None = None,
        validator: Callable[[str], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
        choices: Callable[[Any], list[str]] | None = None,
    ) -> None:
        if enum is not None and not isinstance(enum, list):
            raise TypeError("The enum parameter must be a list.")
        if enum and choices:
            raise ValueError("Cannot specify both enum and choices")
        if choices is not None and not callable(choices):
            raise TypeError("choices must be a callable taking a DialogCreationContext (static lists need KNIME 5.8)")
        if enum and not default_value:
            default_value = enum[0]
        self._enum, self._choices = enum, choices
        super().__init__(label, description, default_value, validator, since_version, is_advanced)


class MultilineStringParameter(_TextParameter):
    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        default_value: str | Callable[[Version], str] = "",
        validator: Callable[[str], None] | None = None,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
        number_of_lines: int = 3,
    ) -> None:
        if not isinstance(number_of_lines, int):
            raise TypeError("number_of_lines must be an int")
        if number_of_lines <= 0:
            raise ValueError("number_of_lines must be positive")
        self._number_of_lines = number_of_lines
        super().__init__(label, description, default_value, validator, since_version, is_advanced)


class ColumnParameter(_BaseParameter):
    """A column name or ``None``; persisted as ``""`` for ``None``. No value validation (as in KNIME)."""

    def __init__(
        self,
        label: str | None = None,
        description: str | None = None,
        port_index: int = 0,
        column_filter: Callable[[ks.Column], bool] | None = None,
        include_row_key: bool = False,
        include_none_column: bool = False,
        since_version: str | Version | None = None,
        is_advanced: bool = False,
        schema_provider: Callable[[Any], ks.Schema] | None = None,
        default_value: str | None = None,
    ) -> None:
        self._port_index, self._column_filter = port_index, column_filter or (lambda column: True)
        self._include_row_key, self._include_none_column = include_row_key, include_none_column
        self._schema_provider = schema_provider
        super().__init__(label, description, default_value, None, since_version, is_advanced)

    def _to_dict(self, value: Any) -> Any:
        return "" if value is None else value

    def _from_dict(self, value: Any) -> Any:
        return None if value == "" else value

    def _validate_specs(self, specs: list[Any]) -> None:
        if len(specs) <= self._port_index:
            raise ValueError(
                f"There are too few input specs. The column selection '{self._name}' requires a table input at "
                f"index {self._port_index}"
            )
        if not isinstance(specs[self._port_index], ks.Schema):
            raise TypeError(
                f"The port at index {self._port_index} is not a table. The ColumnFilter can only be used for table "
                f"ports. Available specs are: {specs}"
            )


def _parameter_dict(obj: Any) -> dict[str, Any]:
    if not hasattr(obj, "__parameters__"):
        obj.__parameters__ = {}
    return obj.__parameters__
