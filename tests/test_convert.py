"""Cell values become the JSON types a tool's schema asks for, and rows become arguments (no server needed)."""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from knime_mcp.caller.arguments import ArgumentError, ArgumentPlan
from knime_mcp.caller.convert import MAX_JSON_DEPTH, ConversionError, is_missing, to_json
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool

INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
STRING = {"type": "string"}
INTEGERS = {"type": "array", "items": INTEGER}
OBJECT = {"type": "object", "properties": {"a": INTEGER}}


def _tool(schema: dict) -> MCPTool:  # type: ignore[type-arg]
    return MCPTool(name="t", tool_name="t", input_schema=schema, server=ServerSpec(target="http://127.0.0.1:1/mcp"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [(np.int32(7), 7), (np.int64(2**40), 2**40), (3.0, 3), ("42", 42), (" 5 ", 5), ("1e3", 1000)],
)
def test_integer_parameters_take_int32_int64_whole_doubles_and_numeric_text(value: object, expected: int) -> None:
    converted = to_json(value, INTEGER)
    assert converted == expected and type(converted) is int


@pytest.mark.parametrize("value", [3.5, "abc", True, float("inf"), [1]])
def test_integer_parameters_reject_fractions_words_booleans_and_lists(value: object) -> None:
    with pytest.raises(ConversionError, match="expected an integer"):
        to_json(value, INTEGER)


@pytest.mark.parametrize(("value", "expected"), [(np.float64(2.5), 2.5), (np.int32(2), 2), ("0.25", 0.25), ("7", 7)])
def test_number_parameters_take_doubles_integers_and_numeric_text(value: object, expected: float) -> None:
    assert to_json(value, NUMBER) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (np.bool_(False), False), ("true", True), ("No", False), (1, True), (0.0, False)],
)
def test_boolean_parameters_take_booleans_zero_one_and_yes_no_text(value: object, expected: bool) -> None:
    assert to_json(value, BOOLEAN) is expected


def test_boolean_parameters_reject_other_text() -> None:
    with pytest.raises(ConversionError, match="expected a boolean, got 'maybe'"):
        to_json("maybe", BOOLEAN)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hi", "hi"),
        (np.int64(3), "3"),
        (10**400, "1" + "0" * 400),  # an integer no double holds is still text, not an OverflowError
        (2.5, "2.5"),
        (True, "true"),
        (np.array(["a", "b"]), '["a", "b"]'),
        (datetime.date(2024, 5, 17), "2024-05-17"),
    ],
)
def test_string_parameters_take_any_cell_as_text(value: object, expected: str) -> None:
    assert to_json(value, STRING) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [([1, 2], [1, 2]), (np.array([1, 2], dtype=np.int32), [1, 2]), (("3", 4.0), [3, 4]), ("[5, 6]", [5, 6])],
)
def test_array_parameters_take_list_cells_with_converted_items_and_json_array_text(
    value: object, expected: list[int]
) -> None:
    assert to_json(value, INTEGERS) == expected


def test_an_array_item_that_cannot_convert_is_named_by_its_index() -> None:
    with pytest.raises(ConversionError, match="item 1: expected an integer, got 'x'"):
        to_json(["1", "x"], INTEGERS)


@pytest.mark.parametrize(("value", "expected"), [('{"a": 1}', {"a": 1}), ({"a": "2"}, {"a": 2})])
def test_object_parameters_take_json_object_text_and_dict_cells(value: object, expected: dict[str, int]) -> None:
    assert to_json(value, OBJECT) == expected


@pytest.mark.parametrize(
    ("value", "message"), [("not json", "not JSON"), ("[1, 2]", "got JSON an array"), (5, "expected a JSON object")]
)
def test_object_parameters_reject_text_that_is_not_a_json_object(value: object, message: str) -> None:
    with pytest.raises(ConversionError, match=message):
        to_json(value, OBJECT)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize(("schema", "template"), [(OBJECT, '{{"a": [1, {}]}}'), (INTEGERS, "[1, {}]")])
def test_json_text_with_a_non_finite_number_is_refused_not_sent_as_null(
    constant: str, schema: dict[str, Any], template: str
) -> None:
    # Given JSON text with NaN or an infinity deep inside, which Python's parser takes but JSON has no value for
    text = template.format(constant)
    # When it is converted for an object or array parameter
    # Then it is refused, naming the value, instead of becoming a float that is sent as null
    with pytest.raises(ConversionError, match=f"got text with {constant}, which is not a JSON number"):
        to_json(text, schema)


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 5_000, 1_000_000])
def test_json_text_nested_deeper_than_the_limit_is_refused_without_exhausting_the_stack(levels: int) -> None:
    # Given JSON array text nested just past the limit, past what Python's parser can read, and far past that
    text = "[" * levels + "]" * levels
    # When it is converted for an array parameter
    # Then it is refused with the limit, not a RecursionError that would stop the whole run
    with pytest.raises(ConversionError, match=f"got JSON text nested deeper than {MAX_JSON_DEPTH} levels"):
        to_json(text, INTEGERS)


def test_json_text_nested_as_deep_as_the_limit_converts_whole() -> None:
    # Given JSON object text whose objects and arrays nest exactly MAX_JSON_DEPTH levels
    value: Any = []
    for _ in range(MAX_JSON_DEPTH - 2):
        value = [value]
    text = json.dumps({"a": value})
    # When it is converted for an object parameter, Then it arrives as written
    assert to_json(text, {"type": "object"}) == {"a": value}


def test_a_row_whose_json_text_is_too_deep_is_that_rows_error_naming_parameter_and_column() -> None:
    # Given a plan for an object parameter, and a row of JSON text the parser cannot read
    plan = ArgumentPlan(_tool({"type": "object", "properties": {"data": {"type": "object"}}}), ["data"])
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    # When the row's arguments are built
    # Then it is an ArgumentError naming parameter and column, which fails that row only
    with pytest.raises(ArgumentError, match="^parameter 'data' from column 'data': expected a JSON object text, got"):
        plan.build({"data": [deep]}, 0)


@pytest.mark.parametrize("value", [None, pd.NA, pd.NaT])
def test_every_form_of_a_missing_cell_is_missing(value: object) -> None:
    assert is_missing(value)
    assert to_json(value, INTEGER) is None


@pytest.mark.parametrize("value", [math.nan, np.nan, np.float32("nan")])
@pytest.mark.parametrize("schema", [NUMBER, STRING, {}, {"type": "array", "items": NUMBER}])
def test_a_nan_double_is_a_value_json_cannot_carry_not_a_missing_cell(value: object, schema: dict[str, Any]) -> None:
    # Given a double cell that holds NaN (KNIME keeps it apart from a missing cell, which arrives as None), alone or
    # in a list cell
    cell = [1.0, value] if schema.get("type") == "array" else value
    assert not is_missing(value)
    # When it is converted, Then it is refused, instead of leaving its parameter out or being sent as null or "nan"
    with pytest.raises(ConversionError, match="expected a finite number, got nan"):
        to_json(cell, schema)


@pytest.mark.parametrize("text", ["\u0663", "\uff13", "\u0663.5", "1\u0665", "\u0967", "\U0001d7d1"])
@pytest.mark.parametrize(("schema", "name"), [(INTEGER, "an integer"), (NUMBER, "a number")])
def test_number_text_with_digits_other_than_0_to_9_is_refused_not_read_as_a_number(
    text: str, schema: dict[str, Any], name: str
) -> None:
    # Given text written with Arabic-Indic, fullwidth, Devanagari or mathematical digits, which Python's int() and
    # float() read as numbers but JSON and every tool read as text
    # When it is converted for a number parameter, Then it is refused, saying why
    with pytest.raises(ConversionError, match=f"^expected {name}, got '.*', written with digits other than 0-9$"):
        to_json(text, schema)


@pytest.mark.parametrize("text", ["1_000", "0x10", "inf", "-Infinity", "nan"])
def test_number_text_that_is_no_json_number_is_refused(text: str) -> None:
    with pytest.raises(ConversionError, match="^expected a number, got"):
        to_json(text, NUMBER)


@pytest.mark.parametrize(
    ("text", "shown", "schema"),
    [
        ("[1e999]", "1e999", INTEGERS),
        ("[-1e999]", "-1e999", {"type": "array"}),
        ('{"a": {"b": 1.5e400}}', "1.5e400", {"type": "object"}),
        ("[" + "9" * 400 + "]", "9999", {"type": "array"}),  # an integer beyond the range of a double
        ("[" + "9" * 5000 + "]", "9999", INTEGERS),  # past Python's 4,300-digit limit for reading integers
    ],
    ids=["1e999", "-1e999", "nested", "400 digits", "5000 digits"],
)
def test_json_text_with_a_number_beyond_the_range_of_a_double_is_refused_not_sent_as_null(
    text: str, shown: str, schema: dict[str, Any]
) -> None:
    # Given JSON text with a number Python reads as an infinity (sent as null) or an integer no double holds
    # When it is converted, Then it is refused naming the number, never a ValueError that would stop the whole run
    with pytest.raises(ConversionError, match=f"got text with {shown}.*, a number beyond the range of a double$"):
        to_json(text, schema)


def test_a_union_keeps_a_value_whose_own_type_it_allows() -> None:
    assert to_json("3", {"type": ["integer", "string"]}) == "3"
    assert to_json(3, {"anyOf": [{"type": "string"}, {"type": "integer"}]}) == 3
    assert to_json("3", {"anyOf": [{"type": "integer"}, {"type": "null"}]}) == 3


def test_a_union_that_fits_nothing_names_every_type_it_allows() -> None:
    with pytest.raises(ConversionError, match="expected an integer or a boolean, got 'x'"):
        to_json("x", {"type": ["integer", "boolean"]})


def test_local_references_are_followed_to_the_type_they_name() -> None:
    root = {"$defs": {"Item": {"type": "object", "properties": {"n": INTEGER}}}}
    schema = {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    assert to_json([{"n": "1"}], schema, root) == [{"n": 1}]


def test_enum_and_untyped_schemas_convert_by_their_values() -> None:
    assert to_json(np.int64(2), {"enum": [1, 2, 3]}) == 2
    assert to_json(np.array([1.5]), {}) == [1.5]
    assert to_json("text", {}) == "text"


@pytest.mark.parametrize(
    ("value", "shown"),
    [(math.inf, "inf"), (-math.inf, "-inf"), ([1.0, math.inf], "inf"), ({"a": math.nan}, "nan"), (np.inf, "inf")],
)
def test_a_parameter_of_any_type_refuses_non_finite_numbers_json_cannot_carry(value: object, shown: str) -> None:
    # Given a double cell (or a list or struct cell holding one) that is infinite or NaN inside a struct
    # When it is converted for a parameter whose schema allows any value
    # Then it is refused, instead of being sent as null
    with pytest.raises(ConversionError, match=f"^expected a finite number, got {shown}$"):
        to_json(value, {})


ADD = {"type": "object", "properties": {"a": INTEGER, "b": INTEGER}, "required": ["a", "b"]}
ORDER = {
    "type": "object",
    "properties": {
        "customer": {"$ref": "#/$defs/Customer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": STRING, "quantity": INTEGER}}},
        "note": {"anyOf": [STRING, {"type": "null"}]},
    },
    "required": ["customer", "items"],
    "$defs": {"Customer": {"type": "object", "properties": {"name": STRING, "age": INTEGER}}},
}


def test_columns_feed_the_parameters_of_the_same_name_and_others_are_ignored() -> None:
    plan = ArgumentPlan(_tool(ADD), ["<RowID>", "a", "b", "comment"])
    assert plan.columns == ("a", "b")
    assert plan.build({"a": [1.0], "b": ["2"]}, 0) == {"a": 1, "b": 2}


def test_a_mapping_dict_feeds_parameters_from_other_columns() -> None:
    plan = ArgumentPlan(_tool(ADD), ["x", "b"], mapping={"a": "x"})
    assert plan.build({"x": [5], "b": [6]}, 0) == {"a": 5, "b": 6}
    assert plan.parameters == {"a": "column 'x'", "b": "column 'b'"}


def test_a_template_builds_nested_arguments_with_each_placeholder_in_the_type_its_place_asks_for() -> None:
    template = (
        '{"customer": {"name": "{who}", "age": "{age}"}, "items": [{"sku": "{sku}", "quantity": "{qty}"}],'
        ' "note": "for {who}, {qty} pieces"}'
    )
    plan = ArgumentPlan(_tool(ORDER), ["who", "age", "sku", "qty"], mapping=template)
    cells = {"who": ["Ada"], "age": ["36"], "sku": ["A-1"], "qty": [np.int32(2)]}
    assert plan.build(cells, 0) == {
        "customer": {"name": "Ada", "age": 36},
        "items": [{"sku": "A-1", "quantity": 2}],
        "note": "for Ada, 2 pieces",
    }


def test_a_missing_cell_omits_an_optional_parameter() -> None:
    plan = ArgumentPlan(_tool(ORDER), ["customer", "items", "note"])
    cells = {"customer": ['{"name": "Ada"}'], "items": ['[{"sku": "A"}]'], "note": [None]}
    assert plan.build(cells, 0) == {"customer": {"name": "Ada"}, "items": [{"sku": "A"}]}


def test_a_missing_cell_for_a_required_parameter_is_a_row_error_naming_parameter_and_column() -> None:
    plan = ArgumentPlan(_tool(ADD), ["a", "b"])
    with pytest.raises(ArgumentError, match="required parameter 'b' has no value \\(column 'b' is missing\\)"):
        plan.build({"a": [1], "b": [None]}, 0)


def test_a_nan_cell_for_an_optional_parameter_is_a_row_error_not_left_out() -> None:
    plan = ArgumentPlan(_tool({"type": "object", "properties": {"x": NUMBER}}), ["x"])
    with pytest.raises(ArgumentError, match="^parameter 'x' from column 'x': expected a finite number, got nan$"):
        plan.build({"x": [math.nan]}, 0)


@pytest.mark.parametrize(
    ("template", "shown"),
    [('{"a": 1e999, "b": 1}', "1e999, a number beyond the range of a double"), ('{"a": NaN}', "NaN, which is not")],
)
def test_a_mapping_with_a_number_json_cannot_carry_is_a_setting_error(template: str, shown: str) -> None:
    with pytest.raises(ConfigError, match=f"^The argument mapping holds a number JSON cannot carry: {shown}"):
        ArgumentPlan(_tool(ADD), ["a", "b"], mapping=template)


def test_a_cell_that_cannot_convert_is_a_row_error_naming_parameter_and_column() -> None:
    plan = ArgumentPlan(_tool(ADD), ["a", "b"])
    with pytest.raises(ArgumentError, match="parameter 'a' from column 'a': expected an integer, got 'one'"):
        plan.build({"a": ["one"], "b": [2]}, 0)


def test_a_required_parameter_that_nothing_feeds_is_a_setting_error_before_any_row() -> None:
    with pytest.raises(ConfigError, match="needs parameter 'b'") as error:
        ArgumentPlan(_tool(ADD), ["a"])
    assert '{"b": "{column}"}' in str(error.value)


def test_a_mapping_that_names_a_missing_column_lists_the_columns_there_are() -> None:
    with pytest.raises(ConfigError, match="refers to column 'x'.*Input columns: 'a', 'b'"):
        ArgumentPlan(_tool(ADD), ["a", "b"], mapping='{"a": "{x}"}')


def test_a_mapping_that_sets_an_unknown_parameter_lists_the_parameters() -> None:
    with pytest.raises(ConfigError, match="sets 'c', which is not a parameter.*'a', 'b'"):
        ArgumentPlan(_tool(ADD), ["a", "b"], mapping={"c": "a"})


@pytest.mark.parametrize(("text", "message"), [("{", "not valid JSON"), ("[1]", "must be a JSON object")])
def test_a_mapping_that_is_not_a_json_object_is_a_setting_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ArgumentPlan(_tool(ADD), ["a", "b"], mapping=text)
