"""Fidelity checks of the headless ``knime.extension`` host against KNIME's documented behaviour (knext-api).

Skipped when KNIME's own ``knime-extension`` package is installed, because then the host is not in use.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import knext_bootstrap

if not knext_bootstrap.USING_HOST:
    pytest.skip("KNIME's knime-extension package is installed; the host is not in use", allow_module_level=True)

import knext_host_tools  # noqa: E402
import knime.extension as knext  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
from knime.extension.parameter import (  # noqa: E402
    extract_parameters,
    inject_parameters,
    set_extension_version,
    validate_parameters,
)
from knime.extension.testing import TestingConfigurationContext, TestingExecutionContext  # noqa: E402

CATEGORY = knext.category("/community", "knext_host_tests", "Host tests", "Nodes of the host tests.", "icon.png")


class ModelSpec(knext.PortObjectSpec):
    def __init__(self, model: str, cache: dict | None = None) -> None:
        self.model, self.cache = model, cache

    def serialize(self) -> dict:
        return {"model": self.model}

    @classmethod
    def deserialize(cls, data: dict) -> ModelSpec:
        return cls(data["model"])


class Model(knext.PortObject):
    def serialize(self) -> bytes:
        return b""

    @classmethod
    def deserialize(cls, spec: knext.PortObjectSpec, storage: bytes) -> Model:
        return cls(spec)


MODEL_PORT = knext.port_type("Model", Model, ModelSpec, id="knext_host_tests.model")


class Mode(knext.EnumParameterOptions):
    FAST = ("Fast", "Quick.")
    SAFE = ("Safe", "Careful.")


@knext.parameter_group("Connection")
class Connection:
    url = knext.StringParameter("URL", "Server URL.", "http://localhost")
    retries = knext.IntParameter("Retries", "How often.", 1, min_value=0)

    def validate(self, values: dict[str, Any]) -> None:
        if values["retries"] > 5:
            raise ValueError("too many retries")


@knext.node("Echo", knext.NodeType.MANIPULATOR, "icon.png", CATEGORY)
@knext.input_port("Model", "The model.", MODEL_PORT)
@knext.input_table("Tools", "Tool table.")
@knext.input_table("Conversation", "Earlier messages.", optional=True)
@knext.output_table("Result", "Echoed tools.")
class Echo:
    """Echoes its tools table."""

    column = knext.ColumnParameter("Column", "Tool name column.", port_index=1)
    mode = knext.EnumParameter("Mode", "How.", Mode.FAST.name, Mode)
    connection = Connection()

    def configure(self, ctx: knext.ConfigurationContext, model: ModelSpec, tools: knext.Schema, conv: Any) -> Any:
        self.seen_conversation = conv
        return tools.append(knext.Column(knext.string(), "echo"))

    def execute(self, ctx: knext.ExecutionContext, model: Model, tools: knext.Table, conv: Any) -> Any:
        frame = tools.to_pandas()
        frame["echo"] = frame[self.column or tools.column_names[0]]
        return knext.Table.from_pandas(frame)


class _NoOp:
    """configure/execute doing nothing, for nodes whose test needs only one of them."""

    def configure(self, ctx: Any, *specs: Any) -> Any:
        return None

    def execute(self, ctx: Any, *inputs: Any) -> Any:
        return None


def _echo_inputs() -> tuple[ModelSpec, knext.Table]:
    return ModelSpec("gpt"), knext_host_tools.source_table(pd.DataFrame({"name": ["a", "b"]}))


def test_node_decorator_returns_a_factory_that_instantiates_the_class_three_times_while_decorating() -> None:
    created = []

    @knext.node("Count", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    @knext.output_table("Out", "Output.")
    class Count(_NoOp):
        def __init__(self) -> None:
            created.append(self)

    assert len(created) == 3
    instance = Count()
    assert type(instance).__name__ == "Count" and not isinstance(Count, type)
    with pytest.raises(TypeError):
        isinstance(instance, Count)


def test_node_init_with_a_required_argument_fails_at_decoration() -> None:
    with pytest.raises(TypeError):

        @knext.node("Bad", knext.NodeType.SOURCE, "icon.png", CATEGORY)
        class Bad:
            def __init__(self, url: str) -> None:
                self.url = url


def test_parameters_created_in_a_node_init_are_rejected_when_the_node_is_created() -> None:
    @knext.node("Composed", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    class Composed:
        def __init__(self) -> None:
            self.limit = knext.IntParameter("Limit", "Limit.", 3)

    with pytest.raises(AttributeError, match="Only parameter group composition"):
        Composed()


def test_node_without_execute_fails_when_the_factory_is_called() -> None:
    @knext.node("NoExecute", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    class NoExecute:
        def configure(self, ctx: Any) -> None:
            return None

    with pytest.raises(AttributeError, match="no attribute 'execute'"):
        NoExecute()


def test_python_node_subclass_without_execute_fails_at_decoration() -> None:
    with pytest.raises(TypeError):

        @knext.node("Half", knext.NodeType.SOURCE, "icon.png", CATEGORY)
        class Half(knext.PythonNode):
            def configure(self, ctx: Any) -> None:
                return None


def test_ports_keep_source_order_and_are_set_on_each_instance() -> None:
    node = Echo()
    assert [p.name for p in node.input_ports] == ["Model", "Tools", "Conversation"]
    assert [p.optional for p in node.input_ports] == [False, False, True]
    assert node.input_ports[1].type == "PortType.TABLE" == knext.PortType.TABLE
    assert node.input_ports[0].type is MODEL_PORT
    assert node.output_view is None


def test_port_decorator_above_the_node_decorator_is_silently_lost() -> None:
    @knext.output_table("Lost", "Never declared.")
    @knext.node("Top", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    class Top(_NoOp):
        pass

    assert Top().output_ports == []


def test_configure_materializes_lazy_schema_views_and_turns_tuples_into_lists() -> None:
    @knext.node("Two", knext.NodeType.MANIPULATOR, "icon.png", CATEGORY)
    @knext.input_table("In", "Input.")
    @knext.output_table("A", "First.")
    @knext.output_table("B", "Second.")
    class Two(_NoOp):
        def configure(self, ctx: Any, schema: knext.Schema) -> Any:
            return schema.append(knext.Column(knext.int64(), "n")), schema

    schema = knext.Schema.from_columns([knext.Column(knext.string(), "s")])
    first, second = result = Two().configure(TestingConfigurationContext(), schema)
    assert isinstance(result, list) and isinstance(first, knext.Schema)
    assert first.column_names == ["s", "n"] and second is schema


def test_category_returns_the_full_path_of_the_new_level() -> None:
    assert CATEGORY == "/community/knext_host_tests"
    assert knext.category("/community/", "x", "X", "X.", "icon.png") == "/community/x"


def test_port_type_returns_a_port_type_and_rejects_a_second_registration() -> None:
    assert (MODEL_PORT.id, MODEL_PORT.object_class) == ("knext_host_tests.model", Model)
    with pytest.raises(ValueError):
        knext.port_type("Again", Model, ModelSpec)


def test_int_parameter_accepts_bool_but_rejects_text_with_type_error() -> None:
    node = Echo()
    node.connection.retries = True
    assert node.connection.retries is True
    with pytest.raises(TypeError):
        node.connection.retries = "3"


def test_out_of_range_value_raises_value_error_and_keeps_the_old_value() -> None:
    node = Echo()
    with pytest.raises(ValueError):
        node.connection.retries = -1
    assert node.connection.retries == 1


def test_custom_validator_replaces_the_built_in_check_but_is_combined_for_enums() -> None:
    class Node:
        limit = knext.IntParameter("Limit", "Limit.", 1, min_value=0, validator=lambda v: None)
        mode = knext.EnumParameter("Mode", "Mode.", "FAST", Mode, validator=lambda v: None)

    node = Node()
    node.limit = -5
    node.limit = "x"
    with pytest.raises(ValueError):
        node.mode = "SLOW"


def test_enum_parameter_stores_member_names_and_rejects_member_objects() -> None:
    node = Echo()
    assert node.mode == "FAST"
    node.mode = Mode.SAFE.name
    with pytest.raises(ValueError):
        node.mode = Mode.FAST
    assert node.mode == "SAFE"


def test_enum_parameter_with_an_enum_but_no_default_fails_at_class_definition() -> None:
    with pytest.raises(AttributeError):
        knext.EnumParameter("Mode", "Mode.", enum=Mode)


def test_string_parameter_neither_checks_enum_membership_nor_calls_choices() -> None:
    def choices(ctx: Any) -> list[str]:
        raise AssertionError("choices run only when a dialog opens")

    class Node:
        level = knext.StringParameter("Level", "Level.", enum=["low", "high"])
        key = knext.StringParameter("Key", "Credentials.", choices=choices)

    node = Node()
    assert node.level == "low"
    node.level = "zzz"
    node.key = "my-credentials"
    with pytest.raises(TypeError):
        node.level = None


def test_default_is_stored_on_first_read_without_validation() -> None:
    class Node:
        limit = knext.IntParameter("Limit", "Limit.", -1, min_value=0)

    node = Node()
    assert node.limit == -1
    assert node.__parameters__ == {"limit": -1}


def test_callable_default_needs_the_extension_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("knime.extension._params._extension_version", None)

    class Node:
        limit = knext.IntParameter("Limit", "Limit.", lambda version: 10 if version >= (1, 0, 0) else 5)

    with pytest.raises(RuntimeError, match="extension version"):
        Node().limit
    set_extension_version("1.2.0")
    assert Node().limit == 10


def test_each_group_access_returns_a_new_copy_bound_to_the_same_values() -> None:
    node = Echo()
    assert node.connection is not node.connection
    node.connection.url = "http://example.org"
    assert node.connection.url == "http://example.org"
    assert Echo().connection.url == "http://localhost"


def test_assigning_a_parameter_group_raises_runtime_error() -> None:
    node = Echo()
    with pytest.raises(RuntimeError):
        node.connection = Connection()


def test_extract_parameters_uses_the_model_shape_and_saves_no_column_as_empty_string() -> None:
    settings = extract_parameters(Echo())
    assert settings == {
        "model": {"column": "", "mode": "FAST", "connection": {"url": "http://localhost", "retries": 1}}
    }


def test_inject_parameters_validates_values_and_loads_empty_column_as_none() -> None:
    node = Echo()
    node.column = "name"
    inject_parameters(node, {"model": {"column": "", "connection": {"retries": 4}}})
    assert node.column is None and node.connection.retries == 4
    with pytest.raises(ValueError):
        inject_parameters(node, {"model": {"mode": "SLOW"}})
    with pytest.raises(KeyError):
        inject_parameters(node, {"column": ""})


def test_inject_sets_the_old_versions_default_for_parameters_added_later() -> None:
    class Node:
        old = knext.IntParameter("Old", "Old.", 1)
        new = knext.IntParameter("New", "New.", lambda v: 0 if v < (2, 0, 0) else 7, since_version="2.0.0")

    node = Node()
    inject_parameters(node, {"model": {"old": 3}}, parameters_version="1.0.0")
    assert (node.old, node.new) == (3, 0)


def test_validate_parameters_reports_missing_keys_and_runs_group_validators() -> None:
    node = Echo()
    with pytest.raises(ValueError, match='Parameter missing for key "mode"'):
        validate_parameters(node, {"model": {"column": "", "connection": {"url": "", "retries": 1}}})
    with pytest.raises(ValueError, match="too many retries"):
        validate_parameters(node, {"model": {"column": "", "mode": "FAST", "connection": {"url": "", "retries": 9}}})
    assert node.connection.retries == 1


def test_parameter_group_rejects_reserved_constructor_keywords() -> None:
    @knext.parameter_group("Bad")
    class Bad:
        def __init__(self, validator: Any = None) -> None:
            self.v = validator

    with pytest.raises(SyntaxError):
        Bad()


@pytest.mark.parametrize(
    ("index", "row_ids", "expected"),
    [
        (None, "auto", ["Row0", "Row1"]),
        ([5, 7], "auto", ["Row5", "Row7"]),
        (["r1", "r2"], "auto", ["r1", "r2"]),
        ([5, 7], "keep", ["5", "7"]),
        (["r1", "r2"], "generate", ["Row0", "Row1"]),
    ],
)
def test_from_pandas_derives_row_ids_like_the_knime_runtime(index: Any, row_ids: str, expected: list[str]) -> None:
    frame = pd.DataFrame({"x": [1, 2]}, index=index)
    assert knext.Table.from_pandas(frame, row_ids=row_ids).to_pandas().index.tolist() == expected


def test_to_pandas_returns_row_ids_as_index_and_strings_as_string_dtype() -> None:
    out = knext.Table.from_pandas(pd.DataFrame({"s": ["a", None], "i": [1, 2]})).to_pandas()
    assert out.index.name == "<RowID>"
    assert out["s"].dtype == pd.StringDtype("python", na_value=pd.NA)
    assert out["s"].isna().tolist() == [False, True] and out["i"].dtype == "int64"


def test_to_pyarrow_starts_with_the_row_id_column() -> None:
    table = knext.Table.from_pandas(pd.DataFrame({"x": [1]})).to_pyarrow()
    assert table.column_names == ["<RowID>", "x"]


@pytest.mark.parametrize(
    "column", [pd.Series([1], dtype="int8"), pd.Series([1], dtype="uint32"), pd.Series([b"x"]), pd.Series([{"a": 1}])]
)
def test_unsupported_pandas_columns_raise_value_error(column: pd.Series) -> None:
    with pytest.raises(ValueError, match="not supported in KNIME Python"):
        knext.Table.from_pandas(pd.DataFrame({"c": column}))


def test_from_pyarrow_rejects_foreign_extension_types() -> None:
    class Json(pa.ExtensionType):
        def __init__(self) -> None:
            super().__init__(pa.string(), "knext_host_tests.json")

        def __arrow_ext_serialize__(self) -> bytes:
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> Json:
            return cls()

    column = pa.ExtensionArray.from_storage(Json(), pa.array(["{}"]))
    with pytest.raises(TypeError, match="Cannot convert PyArrow type"):
        knext.Table.from_pyarrow(pa.table({"tool": column}))


def test_duplicate_row_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="Duplicate RowID"):
        knext.Table.from_pandas(pd.DataFrame({"x": [1, 2]}, index=["a", "a"]))


def test_batches_exist_only_on_tables_passed_into_execute() -> None:
    frame = pd.DataFrame({"x": range(5)})
    with pytest.raises(RuntimeError, match="only allowed for unmodified tables"):
        next(knext.Table.from_pandas(frame).batches())
    source = knext_host_tools.source_table(frame, batch_size=2)
    assert source.num_batches == 3
    assert [b.to_pandas()["x"].tolist() for b in source.batches()] == [[0, 1], [2, 3], [4]]
    assert knext_host_tools.source_table(source).num_batches == 3


def test_input_schema_columns_carry_metadata_so_they_differ_from_built_schemas() -> None:
    source = knext_host_tools.source_table(pd.DataFrame({"x": [1]}))
    built = knext.Schema.from_columns([knext.Column(knext.int64(), "x")])
    assert source.schema != built
    assert source.schema["x"].metadata["displayed_column_type"] == "Number (Long Integer)"


def test_batch_output_table_keeps_str_index_or_numbers_rows_across_batches() -> None:
    kept = knext.BatchOutputTable.create()
    kept.append(pd.DataFrame({"x": [1, 2]}, index=[10, 11]))
    assert kept.to_pandas().index.tolist() == ["10", "11"]
    generated = knext.BatchOutputTable.from_batches(pd.DataFrame({"x": [i, i]}) for i in range(2))
    assert (generated.num_batches, generated.to_pandas().index.tolist()) == (2, ["Row0", "Row1", "Row2", "Row3"])


def test_batch_output_table_keep_mode_rejects_repeated_default_indices() -> None:
    out = knext.BatchOutputTable.create()
    out.append(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="Duplicate RowID"):
        out.append(pd.DataFrame({"x": [2]}))


def test_batch_output_table_rejects_other_columns_short_middle_batches_and_other_objects() -> None:
    out = knext.BatchOutputTable.create(row_ids="generate")
    out.append(pd.DataFrame({"x": [1, 2]}))
    with pytest.raises(ValueError):
        out.append(pd.DataFrame({"y": [1, 2]}))
    out.append(pd.DataFrame({"x": [3]}))
    with pytest.raises(ValueError):
        out.append(pd.DataFrame({"x": [4]}))
    with pytest.raises(TypeError):
        out.append([1, 2])
    with pytest.raises(ValueError):
        knext.BatchOutputTable.create(row_ids="auto")


def test_batch_output_table_is_not_a_table() -> None:
    assert not isinstance(knext.BatchOutputTable.create(), knext.Table)
    with pytest.raises(RuntimeError):
        knext.Table()


def test_schema_indexing_is_lazy_and_only_the_view_side_compares_equal() -> None:
    schema = knext.Schema.from_columns([knext.Column(knext.string(), "a"), knext.Column(knext.int64(), "b")])
    view = schema[["a"]]
    expected = knext.Schema.from_columns([knext.Column(knext.string(), "a")])
    assert not isinstance(view, knext.Schema) and view == expected and expected != view
    assert schema["b"].ktype is knext.int64()
    with pytest.raises(IndexError):
        schema["zzz"].get()
    with pytest.raises(ValueError):
        schema.remove("zzz")
    with pytest.raises(TypeError):
        len(schema)


def test_column_equality_includes_metadata() -> None:
    assert knext.Column(knext.string(), "a") != knext.Column(knext.string(), "a", {})


def test_logical_types_cannot_be_created_for_any_class() -> None:
    with pytest.raises(TypeError):
        knext.logical(dict)
    with pytest.raises(TypeError):
        knext.Column(dict, "tool")


@pytest.mark.parametrize("module", ["knime.types", "knime.types.tool", "knime.types.message"])
def test_knime_host_type_modules_are_absent(module: str) -> None:
    with pytest.raises(ImportError):
        importlib.import_module(module)


def test_set_progress_checks_type_and_range_like_the_knime_runtime() -> None:
    ctx = TestingExecutionContext()
    ctx.set_progress(1)
    ctx.set_progress(1.00005, "almost")
    with pytest.raises(TypeError):
        ctx.set_progress("0.5")
    with pytest.raises(ValueError):
        ctx.set_progress(1.5)
    with pytest.raises(TypeError):
        ctx.set_progress(0.5, 3)


def test_flow_variables_follow_knimes_naming_and_deletion_rules() -> None:
    variables = TestingExecutionContext().flow_variables
    variables["count"] = 3
    for key, value, error in [(1, 1, TypeError), ("knime.x", 1, ValueError), ("obj", object(), TypeError)]:
        with pytest.raises(error):
            variables[key] = value
    with pytest.raises(RuntimeError):
        del variables["count"]


def test_testing_contexts_offer_no_credentials_or_folders() -> None:
    ctx = TestingExecutionContext()
    for call in (ctx.get_credential_names, lambda: ctx.get_credentials("key"), ctx.get_workflow_temp_dir):
        with pytest.raises(RuntimeError, match="Not implemented for testing"):
            call()
    assert ctx.is_canceled() is False


def test_configure_node_passes_none_for_an_unconnected_optional_port_and_adds_metadata() -> None:
    node = Echo()
    model, tools = _echo_inputs()
    spec, = knext_host_tools.configure_node(node, TestingConfigurationContext(), model, tools.schema, None)
    assert spec.column_names == ["name", "echo"] and spec["echo"].metadata is not None


def test_execute_node_uses_a_fresh_instance_with_the_settings_of_the_given_node() -> None:
    node = Echo()
    node.column = "name"
    model_spec, tools = _echo_inputs()
    knext_host_tools.configure_node(node, TestingConfigurationContext(), model_spec, tools.schema, None)
    out, = knext_host_tools.execute_node(node, TestingExecutionContext(), Model(model_spec), tools, None)
    assert not hasattr(node, "seen_conversation")
    assert out.to_pandas()["echo"].tolist() == ["a", "b"] and out.num_batches == 1


def test_custom_port_specs_reach_the_node_and_its_consumers_freshly_deserialized() -> None:
    seen = []

    @knext.node("Pass", knext.NodeType.MANIPULATOR, "icon.png", CATEGORY)
    @knext.input_port("Model", "Model.", MODEL_PORT)
    @knext.output_port("Model", "Model.", MODEL_PORT)
    class Pass(_NoOp):
        def configure(self, ctx: Any, spec: ModelSpec) -> ModelSpec:
            seen.append(spec.cache)
            spec.cache = {"client": "in memory"}
            return spec

    out, = knext_host_tools.configure_node(Pass(), TestingConfigurationContext(), ModelSpec("gpt", {"k": "v"}))
    assert seen == [None]
    assert (out.model, out.cache) == ("gpt", None)


def test_execute_node_rejects_a_dataframe_as_table_output() -> None:
    @knext.node("Frame", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    @knext.output_table("Out", "Output.")
    class Frame(_NoOp):
        def execute(self, ctx: Any) -> Any:
            return pd.DataFrame({"x": [1]})

    with pytest.raises(TypeError, match="Table or BatchOutputTable"):
        knext_host_tools.execute_node(Frame(), TestingExecutionContext())


def test_duplicate_output_column_names_fail_at_the_knime_boundary() -> None:
    @knext.node("Dup", knext.NodeType.SOURCE, "icon.png", CATEGORY)
    @knext.output_table("Out", "Output.")
    class Dup(_NoOp):
        def configure(self, ctx: Any) -> Any:
            return knext.Schema([knext.string(), knext.string()], ["a", "a"])

    with pytest.raises(RuntimeError, match="Duplicate column names"):
        knext_host_tools.configure_node(Dup(), TestingConfigurationContext())


def test_column_parameter_pointing_at_a_non_table_port_fails_before_configure() -> None:
    @knext.node("Wrong", knext.NodeType.SINK, "icon.png", CATEGORY)
    @knext.input_port("Model", "Model.", MODEL_PORT)
    class Wrong(_NoOp):
        column = knext.ColumnParameter("Column", "Column.", port_index=0)

        def configure(self, ctx: Any, model: Any) -> None:
            raise AssertionError("configure must not run")

    with pytest.raises(TypeError, match="does not point to a table"):
        knext_host_tools.configure_node(Wrong(), TestingConfigurationContext(), ModelSpec("gpt"))


def test_canceled_execution_drops_the_outputs() -> None:
    class Canceled(TestingExecutionContext):
        def is_canceled(self) -> bool:
            return True

    model_spec, tools = _echo_inputs()
    with pytest.raises(knext_host_tools.NodeCanceled):
        knext_host_tools.execute_node(Echo(), Canceled(), Model(model_spec), tools, None)
