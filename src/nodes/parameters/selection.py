"""Parameters: the *Tool selection* group of the tool providers (the MCP and the HTTP Tool Provider), and the core's
listing keywords of it."""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from nodes.parameters.tool_policy import DestructiveOptions, destructive_parameter, tool_policy, unannotated_parameter

__all__ = ["SchemaModeOptions", "SelectionSettings", "selection_options"]


class SchemaModeOptions(knext.EnumParameterOptions):
    FULL = ("Full", "Offer every parameter: nested objects, arrays, enums, unions and references.")
    SIMPLE = (
        "Simple",
        "Offer only string, number, integer and boolean parameters (for models that handle nothing else): "
        "optional complex parameters are dropped, tools with a required one are left out, and both are noted.",
    )


@knext.parameter_group(label="Tool selection")
class SelectionSettings:
    include = knext.StringParameter("Include (regex)", "Keep only tools whose name matches this expression.", "")
    exclude = knext.StringParameter("Exclude (regex)", "Drop tools whose name matches this expression.", "")
    prefix = knext.StringParameter(
        "Name prefix",
        "Prefix for every tool name, so that tools of several servers stay apart (e.g. github → github_search).",
        "",
    )
    tags = knext.StringParameter(
        "Tags",
        "Tags for every tool listed, separated by commas (e.g. github, internal): the agents' 'Only tools tagged' "
        "and the Tool Caller's 'Tool tags' select tools by them. Each tool also carries the key of its server in a "
        "pasted configuration (else the name prefix), the tags the configuration gives that server "
        '("tags": ["a", "b"]), and read-only or destructive from its MCP annotations; the Tags column shows them all.',
        "",
        since_version="0.5.0",
    )
    schema_mode = knext.EnumParameter(
        "Schema mode",
        "What the parameter schemas offered to a model may contain.",
        SchemaModeOptions.FULL.name,
        SchemaModeOptions,
    )
    destructive = destructive_parameter(DestructiveOptions.ALLOW)
    unannotated_destructive = unannotated_parameter()


def selection_options(selection: SelectionSettings) -> dict[str, Any]:
    """The core's listing keywords (shaping and tags) from the tool selection settings."""
    from knime_mcp.tools.tags import parse_tags

    return {
        "tags": parse_tags(selection.tags),
        "include": selection.include,
        "exclude": selection.exclude,
        "prefix": selection.prefix,
        "schema_mode": selection.schema_mode.lower(),
        "policy": tool_policy("", "", selection.destructive, unannotated_destructive=selection.unannotated_destructive),
    }
