"""``knime.extension.parameter``: parameter types and the settings helpers KNIME calls around a node.

KNIME injects saved settings (``inject_parameters``) before every ``configure``/``execute``, reads them back
(``extract_parameters``) afterwards, and checks settings being applied with ``validate_parameters``; all use the
``{"model": {...}}`` shape (knext-api 5.5). The classes live in ``_params`` and ``_enum_params`` (descriptors) and
``_groups``.
"""

from __future__ import annotations

from typing import Any

from knime.extension._enum_params import EnumParameter, EnumParameterOptions, EnumSetParameter
from knime.extension._groups import _extract, _inject, _validate, parameter_group, validate_specs
from knime.extension._params import (
    And,
    BoolParameter,
    ColumnParameter,
    Condition,
    DoubleParameter,
    Effect,
    IntParameter,
    MultilineStringParameter,
    OneOf,
    Or,
    StringParameter,
    set_extension_version,
)
from knime.extension.version import Version

__all__ = [
    "And", "BoolParameter", "ColumnParameter", "Condition", "DoubleParameter", "Effect", "EnumParameter",
    "EnumParameterOptions", "EnumSetParameter", "IntParameter", "MultilineStringParameter", "OneOf", "Or",
    "StringParameter", "Version", "extract_parameters", "inject_parameters", "parameter_group",
    "set_extension_version", "validate_parameters", "validate_specs",
]


def extract_parameters(obj: Any, for_dialog: bool = False) -> dict[str, Any]:
    return {"model": _extract(obj, for_dialog)}


def inject_parameters(
    obj: Any, parameters: dict[str, Any], parameters_version: str | None = None, exclude_validations: bool = False
) -> None:
    """Set saved values with validation; absent parameters newer than the settings get that version's default.

    ``exclude_validations`` only concerns KNIME's ``LocalPathParameter``, which this host does not provide.
    """
    _inject(obj, parameters["model"], Version.parse_version(parameters_version))


def validate_parameters(obj: Any, parameters: dict[str, Any], saved_version: str | None = None) -> None:
    """Check saved values without changing ``obj``: missing keys raise ``ValueError``, validators run."""
    _validate(obj, parameters["model"], Version.parse_version(saved_version))
