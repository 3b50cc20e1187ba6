"""Parameter trees: finding parameters on nodes and groups, walking them, and ``parameter_group``.

Mirrored (knext-api 5.4-5.5): parameters are found through the MRO, then on the instance; a group instance is a
class-level descriptor whose every access returns a new copy bound to the same nested dict; assigning a group
raises ``RuntimeError``; group validators run only in ``validate_parameters``; settings walkers honour
``since_version``. Not provided: ``layout_direction``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from knime.extension._params import Condition, Effect, Rule, _BaseParameter, _parameter_dict
from knime.extension.version import Version


def _is_parameter_or_group(value: Any) -> bool:
    return hasattr(type(value), "__kind__") and not isinstance(value, type)


def _get_parameters(obj: Any) -> dict[str, Any]:
    """Parameters and groups of ``obj``: class-level ones through the MRO, then instance-level ones."""
    found: dict[str, Any] = {}
    for cls in type(obj).__mro__[:-1]:
        for name, value in vars(cls).items():
            if _is_parameter_or_group(value) and name not in found:
                found[name] = value
    for name, value in vars(obj).items():
        if _is_parameter_or_group(value):
            found[name] = value
    return found


def _extract(obj: Any, for_dialog: bool) -> dict[str, Any]:
    return {name: param._extract_value(obj, name, for_dialog) for name, param in _get_parameters(obj).items()}


def _inject(obj: Any, values: dict[str, Any], version: Version) -> None:
    for name, param in _get_parameters(obj).items():
        if name in values:
            param._inject(obj, values[name], name, version)
        elif param._since_version > version:
            param._set_default_for_version(obj, name, version)


def _validate(obj: Any, values: dict[str, Any], version: Version) -> None:
    for name, param in _get_parameters(obj).items():
        if param._since_version <= version:
            if name not in values:
                raise ValueError(f'Parameter missing for key "{name}".')
            param._validate(values[name], version)


def validate_specs(obj: Any, specs: list[Any]) -> None:
    """What KNIME checks before ``configure``: column parameters must point at table ports."""
    for param in _get_parameters(obj).values():
        param._validate_specs(specs)


class _GroupAccess:
    """Routes attribute access of instance-level (composed) parameters of a group to its values."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if isinstance(value, _BaseParameter):
            return value._get_value(self, name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        composed = self.__dict__.get(name)
        if isinstance(composed, _BaseParameter):
            composed._set_value(self, value, name)
        else:
            super().__setattr__(name, value)


_RESERVED_GROUP_KEYWORDS = {"since_version", "is_advanced", "validator"}


def parameter_group(label: str, since_version: str | Version | None = None, is_advanced: bool = False) -> Callable:
    """Turn a class into a parameter group; instantiate it as a class attribute of a node or another group."""

    def decorate(original: type) -> type:
        class ParameterGroupHolder(_GroupAccess, original):  # type: ignore[misc, valid-type]
            __kind__ = "parameter_group"
            __doc__ = original.__doc__

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                if _RESERVED_GROUP_KEYWORDS & set(inspect.signature(original.__init__).parameters):
                    raise SyntaxError(
                        "Please refrain from declaring reserved keyword arguments in the `__init__` method of your "
                        "parameter group class."
                    )
                self._since_version = Version.parse_version(kwargs.pop("since_version", since_version))
                self._is_advanced = kwargs.pop("is_advanced", is_advanced)
                self._validator = kwargs.pop("validator", None)
                self._override_internal_validator = False
                self._label, self._rule = label, None
                self.__parameters__: dict[str, Any] = {}
                super().__init__(*args, **kwargs)

            def __set_name__(self, owner: type, name: str) -> None:
                self._name = name

            def __get__(self, obj: Any, objtype: type | None = None) -> Any:
                if obj is None:
                    raise AttributeError("Parameter groups can only be accessed on instances")
                return self._holder(obj)

            def __set__(self, obj: Any, value: Any) -> None:
                raise RuntimeError("Cannot set parameter group values directly.")

            def _holder(self, obj: Any) -> Any:
                """A copy of this group bound to ``obj``'s nested dict (or ``self`` for a composed group)."""
                if "_name" not in self.__dict__:
                    return self
                holder = copy.deepcopy(self)
                for name, value in _get_parameters(self).items():
                    if _is_group(value) and "_name" not in value.__dict__:
                        holder.__dict__[name] = value
                params = _parameter_dict(obj)
                if self._name in params:
                    holder.__dict__["__parameters__"] = params[self._name]
                else:
                    params[self._name] = holder.__parameters__
                return holder

            def _get_value(self, obj: Any, name: str, for_dialog: bool = False) -> dict[str, Any]:
                holder = self._holder(obj)
                return {n: p._get_value(holder, n, for_dialog) for n, p in _get_parameters(holder).items()}

            def _extract_value(self, obj: Any, name: str, for_dialog: bool) -> dict[str, Any]:
                return _extract(self._holder(obj), for_dialog)

            def _inject(self, obj: Any, values: dict[str, Any], name: str, version: Version) -> None:
                _inject(self._holder(obj), values, version)

            def _set_default_for_version(self, obj: Any, name: str, version: Version) -> None:
                holder = self._holder(obj)
                for child_name, child in _get_parameters(holder).items():
                    child._set_default_for_version(holder, child_name, version)

            def _validate(self, values: dict[str, Any], version: Version | None = None) -> None:
                _validate(self, values, version or Version(0, 0, 0))
                if hasattr(original, "validate") and not self._override_internal_validator:
                    self.validate(values)
                if self._validator is not None:
                    self._validator(values)

            def _validate_specs(self, specs: list[Any]) -> None:
                validate_specs(self, specs)

            def validator(self, override: Any = None) -> Any:
                """``@group.validator`` (replaces ``validate``) or ``@group.validator(override=False)``."""
                if isinstance(override, bool):

                    def decorator(func: Callable[[dict[str, Any]], None]) -> None:
                        self._validator, self._override_internal_validator = func, override

                    return decorator
                self._validator, self._override_internal_validator = override, True
                return None

            def rule(self, condition: Condition, effect: Effect) -> Any:
                self._rule = Rule(condition, effect)
                return self

        ParameterGroupHolder.__name__ = ParameterGroupHolder.__qualname__ = original.__name__
        return ParameterGroupHolder

    return decorate


def _is_group(value: Any) -> bool:
    return getattr(type(value), "__kind__", None) == "parameter_group"
