"""Schema modes (what a model is offered) and argument validation, on schemas real servers send."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.tools.argument_validation import validate_arguments
from knime_mcp.tools.schema import MAX_OFFERED_DEPTH, apply_schema_mode, shape_schemas
from tool_factory import ENTITIES_SCHEMA, make_tool, object_schema

PYDANTIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "units": {"$ref": "#/$defs/Units", "description": "Temperature units"},
        "days": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Days"},
        "note": {"type": ["string", "null"], "maxLength": 200},
        "where": {"$ref": "#/$defs/Point"},
        "value": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        "shape": {"oneOf": [{"$ref": "#/$defs/Point"}, {"type": "string"}]},
    },
    "required": ["city"],
    "$defs": {
        "Units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}},
    },
}

TREE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"root": {"$ref": "#/definitions/Node"}},
    "definitions": {
        "Node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
            },
        }
    },
}


def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def offered(schema: dict[str, Any], mode: str = "full") -> dict[str, Any]:
    tool = apply_schema_mode(make_tool(input_schema=schema), mode)  # type: ignore[arg-type]
    assert tool is not None
    return tool.parameter_schema


def contains_ref(schema: Any) -> bool:
    return "$ref" in json.dumps(schema)


# -- full mode ------------------------------------------------------------------------------------------------------


def test_full_mode_keeps_nested_arrays_of_objects_unchanged() -> None:
    tool = apply_schema_mode(make_tool("create_entities", ENTITIES_SCHEMA), "full")

    assert tool is not None
    assert tool.parameter_schema == ENTITIES_SCHEMA
    assert tool.notes == ()


def test_full_mode_inlines_local_refs_and_drops_the_definitions() -> None:
    schema = offered(PYDANTIC_SCHEMA)

    assert not contains_ref(schema) and "$defs" not in schema
    assert schema["properties"]["units"] == {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "description": "Temperature units",
    }
    assert schema["properties"]["shape"]["oneOf"][0]["properties"]["x"] == {"type": "number"}
    assert schema["properties"]["days"] == PYDANTIC_SCHEMA["properties"]["days"]
    assert schema["required"] == ["city"]


def test_full_mode_offers_a_recursive_reference_as_any_value_after_one_level_with_a_note() -> None:
    tool = apply_schema_mode(make_tool("tree", TREE_SCHEMA), "full")

    assert tool is not None
    root = tool.parameter_schema["properties"]["root"]
    assert root["properties"]["label"] == {"type": "string"}
    assert root["properties"]["children"]["items"] == {}
    assert not contains_ref(tool.parameter_schema)
    assert tool.notes == (
        "parameter 'root.children[]' refers back to #/definitions/Node recursively; "
        "the recursive part is offered as any value",
    )


def test_full_mode_offers_a_missing_definition_as_any_value_with_a_note() -> None:
    schema = object_schema(item={"$ref": "#/$defs/Missing", "description": "An item"})

    tool = apply_schema_mode(make_tool(input_schema=schema), "full")

    assert tool is not None
    assert tool.parameter_schema["properties"]["item"] == {"description": "An item"}
    assert "refers to #/$defs/Missing, which is not in the schema" in tool.notes[0]


def test_full_mode_turns_a_missing_or_empty_schema_into_an_object_without_parameters() -> None:
    assert offered({}) == {"type": "object", "properties": {}}
    assert offered({"type": "object"}) == {"type": "object", "properties": {}}


def test_full_mode_adds_the_object_type_a_server_left_out() -> None:
    assert offered({"properties": {"q": {"type": "string"}}}) == object_schema(q={"type": "string"})


def test_full_mode_inlines_a_reference_at_the_top_level() -> None:
    schema = {"$ref": "#/$defs/Args", "$defs": {"Args": object_schema(("q",), q={"type": "string"})}}

    assert offered(schema) == object_schema(("q",), q={"type": "string"})


def test_full_mode_cuts_a_schema_nested_1000_levels_deep_with_a_note() -> None:
    tool = apply_schema_mode(make_tool(input_schema=nested_schema(1000)), "full")

    assert tool is not None
    depth, node = 0, tool.parameter_schema
    while node.get("properties"):
        node, depth = node["properties"]["a"], depth + 1
    assert node == {}
    assert depth <= MAX_OFFERED_DEPTH + 1
    assert f"nested deeper than {MAX_OFFERED_DEPTH} levels" in tool.notes[0]


def test_full_mode_keeps_references_that_would_multiply_the_schema_beyond_reason() -> None:
    definitions = {f"L{level}": {"anyOf": [{"$ref": f"#/$defs/L{level + 1}"}] * 2} for level in range(20)}
    definitions["L20"] = {"type": "string"}
    schema = {**object_schema(x={"$ref": "#/$defs/L0"}), "$defs": definitions}

    tool = apply_schema_mode(make_tool(input_schema=schema), "full")

    assert tool is not None
    assert tool.parameter_schema["properties"]["x"] == {"$ref": "#/$defs/L0"}
    assert "$defs" in tool.parameter_schema
    assert tool.notes == ("the input schema is too large to inline its $ref definitions; it is offered with them",)


def test_full_mode_offers_a_tool_with_10000_parameters() -> None:
    schema = object_schema(**{f"p{index}": {"type": "string"} for index in range(10_000)})

    assert offered(schema) == schema


def test_shaping_twice_gives_the_same_schema_and_notes() -> None:
    once = apply_schema_mode(make_tool("tree", TREE_SCHEMA), "full")
    assert once is not None

    twice = apply_schema_mode(once, "full")

    assert twice == once


def test_unknown_schema_mode_is_a_config_error_listing_the_modes() -> None:
    with pytest.raises(ConfigError, match="Unknown schema mode 'fancy'; use one of full, simple"):
        apply_schema_mode(make_tool(), "fancy")  # type: ignore[arg-type]


def test_schema_module_does_not_import_jsonschema_until_arguments_are_validated() -> None:
    code = "import sys, knime_mcp.tools.argument_validation; print('jsonschema' in sys.modules)"

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "False"


# -- simple mode ----------------------------------------------------------------------------------------------------


def test_simple_mode_offers_primitives_nullable_primitives_and_string_enums() -> None:
    tool = apply_schema_mode(make_tool("weather", PYDANTIC_SCHEMA), "simple")

    assert tool is not None
    assert tool.parameter_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "units": {"type": "string", "description": "Temperature units", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "title": "Days"},
            "note": {"type": "string", "maxLength": 200},
            "value": {"type": ["string", "number"]},
        },
        "required": ["city"],
    }


def test_simple_mode_reports_every_dropped_optional_parameter() -> None:
    tool = apply_schema_mode(make_tool("weather", PYDANTIC_SCHEMA), "simple")

    assert tool is not None
    assert tool.notes == (
        "parameter 'where' dropped: an object is not offered in simple schema mode",
        "parameter 'shape' dropped: a choice of schemas (oneOf) is not offered in simple schema mode",
    )


def test_simple_mode_drops_an_optional_array_of_objects_with_a_note() -> None:
    schema = object_schema(("query",), query={"type": "string"}, entities=ENTITIES_SCHEMA["properties"]["entities"])

    tool = apply_schema_mode(make_tool("search", schema), "simple")

    assert tool is not None
    assert list(tool.parameter_schema["properties"]) == ["query"]
    assert tool.notes == ("parameter 'entities' dropped: an array is not offered in simple schema mode",)


def test_simple_mode_leaves_out_a_tool_with_a_required_array_and_says_why() -> None:
    tools = [make_tool("create_entities", ENTITIES_SCHEMA), make_tool("read_graph", {})]

    shaped, notes = shape_schemas(tools, "simple")

    assert [tool.name for tool in shaped] == ["read_graph"]
    assert notes == [
        "tool 'create_entities' left out: required parameter 'entities' (an array) is not offered in simple schema mode"
    ]
    assert apply_schema_mode(tools[0], "simple") is None


def test_simple_mode_names_every_required_complex_parameter_of_a_left_out_tool() -> None:
    schema = object_schema(("a", "b"), a={"type": "object"}, b={"type": ["string", "array"]})

    _, notes = shape_schemas([make_tool("both", schema)], "simple")

    assert notes == [
        "tool 'both' left out: required parameters 'a' (an object), 'b' (a union of types string|array) "
        "are not offered in simple schema mode"
    ]


def test_simple_mode_offers_a_union_of_simple_types_as_a_list_of_types() -> None:
    schema = object_schema(
        ("flag",),
        flag={"type": ["boolean", "string"], "description": "Whether"},
        limit={"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["all"]}, {"type": "null"}]},
        mode={"type": ["string", "null"], "enum": ["a", "b", None]},
    )

    tool = apply_schema_mode(make_tool(input_schema=schema), "simple")

    assert tool is not None
    assert tool.parameter_schema == {
        "type": "object",
        "properties": {
            "flag": {"type": ["boolean", "string"], "description": "Whether"},
            "limit": {"type": ["integer", "string"]},
            "mode": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["flag"],
    }
    assert tool.notes == ()


def test_simple_mode_still_drops_a_union_that_includes_a_complex_type() -> None:
    schema = object_schema(
        either={"anyOf": [{"type": "string"}, {"type": "object"}]}, pair={"type": ["number", "array"]}
    )

    tool = apply_schema_mode(make_tool(input_schema=schema), "simple")

    assert tool is not None
    assert tool.parameter_schema["properties"] == {}
    assert tool.notes == (
        "parameter 'either' dropped: a choice of schemas (anyOf) is not offered in simple schema mode",
        "parameter 'pair' dropped: a union of types number|array is not offered in simple schema mode",
    )


def test_simple_mode_offers_a_parameter_declared_by_an_untyped_string_enum() -> None:
    schema = object_schema(mode={"enum": ["fast", "exact"]}, anything={"description": "Any JSON"})

    tool = apply_schema_mode(make_tool(input_schema=schema), "simple")

    assert tool is not None
    assert tool.parameter_schema["properties"] == {"mode": {"type": "string", "enum": ["fast", "exact"]}}
    assert tool.notes == ("parameter 'anything' dropped: a value of any type is not offered in simple schema mode",)


def test_simple_mode_handles_10000_parameters() -> None:
    schema = object_schema(**{f"p{index}": {"type": "integer" if index % 2 else "object"} for index in range(10_000)})

    tool = apply_schema_mode(make_tool(input_schema=schema), "simple")

    assert tool is not None
    assert len(tool.parameter_schema["properties"]) == 5_000
    assert len(tool.notes) == 5_000


def test_simple_mode_leaves_the_server_schema_for_validation_untouched() -> None:
    tool = apply_schema_mode(make_tool("weather", PYDANTIC_SCHEMA), "simple")

    assert tool is not None
    assert tool.input_schema == PYDANTIC_SCHEMA


# -- argument validation --------------------------------------------------------------------------------------------


def test_valid_arguments_have_no_problems() -> None:
    arguments = {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}]}

    assert validate_arguments(make_tool("create_entities", ENTITIES_SCHEMA), arguments) == []


def test_validation_lists_every_problem_with_where_it_is() -> None:
    arguments = {"entities": [{"name": 5, "observations": "none"}, {"name": "Bob", "entityType": "x", "extra": 1}]}

    problems = validate_arguments(make_tool("create_entities", ENTITIES_SCHEMA), arguments)

    assert problems == [
        "entities[0]: 'entityType' is a required property",
        "entities[0].name: 5 is not of type 'string'",
        "entities[0].observations: 'none' is not of type 'array'",
        "entities[1]: 'observations' is a required property",
        "entities[1]: Additional properties are not allowed ('extra' was unexpected)",
    ]


def test_validation_reports_a_missing_required_argument_and_a_wrong_enum_value() -> None:
    problems = validate_arguments(make_tool("weather", PYDANTIC_SCHEMA), {"units": "kelvin"})

    assert problems == ["'city' is a required property", "units: 'kelvin' is not one of ['celsius', 'fahrenheit']"]


def test_validation_follows_local_refs_and_never_fetches_remote_ones() -> None:
    schema = object_schema(remote={"$ref": "http://127.0.0.1:9/schema.json"}, units={"$ref": "#/$defs/Units"})
    schema["$defs"] = PYDANTIC_SCHEMA["$defs"]
    tool = make_tool(input_schema=schema)

    assert validate_arguments(tool, {"units": "kelvin"}) == ["units: 'kelvin' is not one of ['celsius', 'fahrenheit']"]
    assert validate_arguments(tool, {"remote": 1}) == []


def test_validation_uses_the_draft_the_schema_names() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", **object_schema(n={"type": "number"})}
    draft4["properties"]["n"]["maximum"] = 10
    draft4["properties"]["n"]["exclusiveMaximum"] = True

    assert validate_arguments(make_tool(input_schema=draft4), {"n": 10}) == [
        "n: 10 is greater than or equal to the maximum of 10"
    ]


def test_validation_leaves_an_invalid_schema_to_the_server() -> None:
    assert validate_arguments(make_tool(input_schema={"type": "no-such-type"}), {"a": 1}) == []


def test_validation_of_a_1000_level_schema_is_left_to_the_server() -> None:
    assert validate_arguments(make_tool(input_schema=nested_schema(1000)), {"a": {}}) == []


def test_validation_shortens_a_problem_quoting_a_huge_value() -> None:
    tool = make_tool(input_schema=object_schema(text={"type": "string"}))

    (problem,) = validate_arguments(tool, {"text": list(range(10_000))})

    assert problem.startswith("text: [0, 1, 2") and problem.endswith("…") and len(problem) == 300


def test_validation_compiles_a_tool_schema_once_for_many_calls() -> None:
    import jsonschema

    tool = make_tool(input_schema=object_schema(text={"type": "string"}))
    lookup = jsonschema.validators.validator_for
    compiled: list[Any] = []

    def counting(schema: Any, default: Any) -> Any:
        compiled.append(schema)
        return lookup(schema, default=default)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonschema.validators, "validator_for", counting)
        problems = [validate_arguments(tool, {"text": row}) for row in range(1000)]

    assert [schema for schema in compiled if schema is tool.input_schema] == [tool.input_schema]
    assert problems[999] == ["text: 999 is not of type 'string'"]


@pytest.mark.anyio
async def test_simple_mode_keeps_the_sequential_thinking_tool_whose_flags_are_boolean_or_string(
    sequential_thinking_stdio_command: list[str],
) -> None:
    import shlex

    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.config import ServerSpec

    listing = await list_server_tools(
        ServerSpec(target=shlex.join(sequential_thinking_stdio_command)), schema_mode="simple"
    )

    assert [tool.name for tool in listing.tools] == ["sequentialthinking"]
    properties = listing.tools[0].parameter_schema["properties"]
    assert properties["nextThoughtNeeded"]["type"] == ["boolean", "string"]
    assert {"isRevision", "needsMoreThoughts"} <= set(properties)
    assert listing.notes == []


# -- server-supplied patterns, checked in bounded time --------------------------------------------------------------

PATTERNED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": r"^\d{3}-[a-z]+$"},
        "word": {"type": "string", "pattern": r"\bcat\b"},
        "tags": {
            "type": "object",
            "patternProperties": {"^x_": {"type": "integer"}, "^y_": {"type": "string"}},
            "additionalProperties": False,
        },
        "open": {"type": "object", "patternProperties": {"^n_": {"type": "number"}}, "additionalProperties": True},
    },
}


@pytest.mark.parametrize(
    "arguments",
    [
        {"code": "123-abc", "word": "a cat sat", "tags": {"x_a": 1, "y_b": "s"}, "open": {"n_a": 1, "z": []}},
        {"code": "12-abc", "word": "concatenate", "tags": {"x_a": "one", "z": 1, "w": 2}, "open": {"n_a": "x"}},
        {"code": "123-ABC\n", "word": "CAT", "tags": {"x_": 1.5, "y_": 2, "q": None}},
        {"code": 123, "tags": {}, "open": {}},
    ],
)
def test_patterns_are_matched_as_python_re_and_jsonschema_match_them(arguments: dict[str, Any]) -> None:
    # Given a schema using pattern, patternProperties and additionalProperties beside them
    import jsonschema

    expected = sorted(
        jsonschema.Draft202012Validator(PATTERNED).iter_errors(arguments), key=lambda e: (e.json_path, e.message)
    )
    # When the arguments are validated
    problems = validate_arguments(make_tool(input_schema=PATTERNED), arguments)
    # Then the problems are those jsonschema's own (re-based) keywords find, in the same words
    assert [problem.split(": ", 1)[-1] for problem in problems] == [error.message for error in expected]


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (object_schema(word={"type": "string", "pattern": "^(a|aa)+$"}), {"word": "a" * 30 + "!"}),
        (
            object_schema(tags={"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}}}),
            {"tags": {"a" * 30 + "!": 1}},
        ),
        (
            object_schema(
                tags={"type": "object", "patternProperties": {"^(a|aa)+$": {}}, "additionalProperties": False}
            ),
            {"tags": {"a" * 30 + "!": 1}},
        ),
    ],
    ids=["pattern", "patternProperties", "additionalProperties"],
)
def test_a_pattern_that_takes_too_long_makes_the_arguments_invalid_saying_so(
    schema: dict[str, Any], arguments: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a pattern that backtracks without bound, and a time limit far below what it needs on a 31-letter key
    import knime_mcp.tools.argument_validation

    monkeypatch.setattr(knime_mcp.tools.argument_validation, "PATTERN_TIMEOUT", 0.001)
    # When arguments it must check are validated
    problems = validate_arguments(make_tool(input_schema=schema), arguments)
    # Then that is the one problem, naming the pattern and the value
    assert len(problems) == 1
    assert "the tool's pattern '^(a|aa)+$' took too long to check against 'aaaaaaaaaa" in problems[0]
    assert problems[0].endswith("the pattern backtracks without bound, so these arguments are refused")
