"""OpenAPI documents become HTTP tools: published documents from `@readme/oas-examples` (pinned in tests/peers),
served as files, and the FastAPI test API's own OpenAPI 3.1 document, served over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from knime_mcp.calls.listing import ToolListing, list_http_tools
from knime_mcp.config import AuthRef
from knime_mcp.errors import ConfigError
from knime_mcp.http import HttpOperation, HttpParameter
from knime_mcp.http.document import load_document, parse_document
from knime_mcp.http.openapi import DocumentApiKey, openapi_tools
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.argument_validation import validate_arguments
from knime_mcp.tools.arrow import tools_from_frame, tools_to_frame
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool

PETSTORE_OPERATIONS = [
    "updatePet", "addPet", "findPetsByStatus", "findPetsByTags", "getPetById", "updatePetWithForm", "deletePet",
    "uploadFile", "getInventory", "placeOrder", "getOrderById", "deleteOrder", "createUser",
    "createUsersWithArrayInput", "createUsersWithListInput", "loginUser", "logoutUser", "getUserByName",
    "updateUser", "deleteUser",
]  # fmt: skip


def _list(source: str | Path, **options: Any) -> ToolListing:
    return anyio.run(lambda: list_http_tools(str(source), **options))


def _by_name(tools: list[MCPTool]) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in tools}


def _document(paths: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **extra})


@pytest.fixture(scope="module")
def petstore(oas_examples: Path) -> dict[str, MCPTool]:
    return _by_name(_list(oas_examples / "3.0/json/petstore.json").tools)


def test_every_operation_of_the_published_petstore_becomes_a_tool_at_the_documents_server(
    petstore: dict[str, MCPTool], oas_examples: Path
) -> None:
    assert list(petstore) == PETSTORE_OPERATIONS
    assert {tool.server.target for tool in petstore.values()} == {"http://petstore.swagger.io/v2"}
    assert {tool.server.display_name for tool in petstore.values()} == {"Swagger Petstore"}
    # A file has no origin of its own: the server it names is the document's word, not the person's, so it is not
    # sealed (agent and caller nodes check its address as data), and the listing says where the tools call
    assert not any(is_sealed_here(tool.server) for tool in petstore.values())
    notes = _list(oas_examples / "3.0/json/petstore.json").notes
    assert any(note.startswith("The tools of 20 operations") and "petstore.swagger.io/v2" in note for note in notes)


def test_path_query_and_header_parameters_become_arguments_with_their_places(petstore: dict[str, MCPTool]) -> None:
    get_pet = petstore["getPetById"]
    assert get_pet.http == HttpOperation(
        method="GET", path="/pet/{petId}", parameters=(HttpParameter(name="petId", location="path"),)
    )
    assert get_pet.input_schema["required"] == ["petId"]
    assert get_pet.input_schema["properties"]["petId"] == {
        "type": "integer", "format": "int64", "description": "ID of pet to return",
    }  # fmt: skip
    delete = petstore["deletePet"]
    assert [(p.name, p.location) for p in delete.http.parameters] == [("api_key", "header"), ("petId", "path")]
    assert delete.input_schema["required"] == ["petId"]
    login = petstore["loginUser"]
    assert [(p.name, p.location) for p in login.http.parameters] == [("username", "query"), ("password", "query")]
    assert login.title == "Logs user into the system" and login.description.startswith("Logs user into the system")


def test_a_json_body_behind_refs_is_one_required_argument_with_its_schema_resolved(
    petstore: dict[str, MCPTool],
) -> None:
    add = petstore["addPet"]
    assert add.http is not None and add.http.body == "body" and add.input_schema["required"] == ["body"]
    # The input schema holds the definitions it needs, so arguments validate against it alone
    assert add.input_schema["properties"]["body"]["$ref"] == "#/$defs/Pet"
    assert set(add.input_schema["$defs"]) == {"Pet", "Category", "Tag"}
    # What a model is offered has every $ref inlined
    body = add.parameter_schema["properties"]["body"]
    assert "$ref" not in json.dumps(add.parameter_schema)
    assert body["required"] == ["name", "photoUrls"] and body["properties"]["category"]["properties"]["id"]
    good = {"body": {"name": "Rex", "photoUrls": ["https://x"], "status": "sold"}}
    assert validate_arguments(add, good) == []
    assert validate_arguments(add, {"body": {"name": "Rex", "photoUrls": [], "status": "lost"}})


def test_the_output_schema_is_the_2xx_json_responses_object_schema(petstore: dict[str, MCPTool]) -> None:
    output = petstore["getPetById"].output_schema
    assert output is not None and output["type"] == "object" and output["required"] == ["name", "photoUrls"]
    assert set(output["$defs"]) == {"Category", "Tag"}
    # An array response (findPetsByStatus) and no content (logoutUser) give none
    assert petstore["findPetsByStatus"].output_schema is None and petstore["logoutUser"].output_schema is None


@pytest.mark.parametrize(
    ("method", "read_only", "destructive", "idempotent"),
    [
        ("GET", True, False, True),
        ("HEAD", True, False, True),
        ("OPTIONS", True, False, True),
        ("POST", False, True, False),
        ("PUT", False, True, True),
        ("PATCH", False, True, False),
        ("DELETE", False, True, True),
    ],
)
def test_annotations_follow_the_http_method_and_every_method_that_writes_is_destructive(
    method: str, read_only: bool, destructive: bool, idempotent: bool
) -> None:
    # MCP's defaults: a tool that is not read-only is destructive unless it says otherwise (destructiveHint true)
    document = parse_document(_document({"/things": {method.lower(): {}}}), "doc")
    (tool,) = openapi_tools(document, base_url="https://x.example.com")
    hints = tool.annotations
    assert (hints.read_only, hints.destructive, hints.idempotent, hints.annotated) == (
        read_only, destructive, idempotent, True,
    )  # fmt: skip
    # And the Agent Prompter's default policy (block destructive tools) offers only the read-only ones
    assert (ToolPolicy().check(tool) is None) is read_only


def test_a_non_json_body_is_noted(oas_examples: Path) -> None:
    listing = _list(oas_examples / "3.0/json/petstore.json")
    assert "uploadFile: its optional request body (multipart/form-data) is not JSON and is not sent" in listing.notes
    assert _by_name(listing.tools)["uploadFile"].http.body is None  # type: ignore[union-attr]


def test_a_recursive_schema_terminates_and_stays_a_reference(oas_examples: Path) -> None:
    listing = _list(oas_examples / "3.0/json/schema-circular.json")
    tool = _by_name(listing.tools)["post_not_quite_circular"]
    assert "ZoneRules" in tool.input_schema["$defs"]
    assert any("refers back to #/$defs/ZoneRules recursively" in note for note in listing.notes)


def test_include_exclude_and_prefix_shape_the_tools_as_the_mcp_provider_does(oas_examples: Path) -> None:
    listing = _list(oas_examples / "3.0/json/petstore.json", include="Pet", exclude="^delete", prefix="shop")
    assert [tool.name for tool in listing.tools] == [
        "shop_updatePet", "shop_addPet", "shop_findPetsByStatus", "shop_findPetsByTags", "shop_getPetById",
        "shop_updatePetWithForm",
    ]  # fmt: skip


def test_the_destructive_policy_keeps_only_read_only_operations(oas_examples: Path) -> None:
    listing = _list(oas_examples / "3.0/json/petstore.json", policy=ToolPolicy(destructive="read_only"))
    assert all(tool.http.method == "GET" for tool in listing.tools)  # type: ignore[union-attr]
    assert any("addPet" in note for note in listing.notes)


def test_a_swagger_2_document_is_refused_saying_how_to_convert_it(oas_examples: Path) -> None:
    with pytest.raises(ConfigError, match="Swagger 2.0, which is not supported") as caught:
        _list(oas_examples / "2.0/json/petstore.json")
    assert "swagger2openapi" in str(caught.value)


def test_a_yaml_document_reads_like_its_json(oas_examples: Path) -> None:
    from_yaml = _list(oas_examples / "3.0/yaml/petstore.yaml").tools
    assert [tool.name for tool in from_yaml] == PETSTORE_OPERATIONS


def test_the_base_url_given_wins_over_the_documents_servers(oas_examples: Path) -> None:
    tools = _list(oas_examples / "3.0/json/petstore.json", base_url="https://staging.example.com/v2/").tools
    assert {tool.server.target for tool in tools} == {"https://staging.example.com/v2"}


def test_server_variables_take_their_defaults(oas_examples: Path) -> None:
    tools = _list(oas_examples / "3.0/json/server-variables.json").tools
    document = json.loads((oas_examples / "3.0/json/server-variables.json").read_text())
    first = document["servers"][0]
    expected = first["url"]
    for name, variable in first.get("variables", {}).items():
        expected = expected.replace(f"{{{name}}}", variable["default"])
    assert tools[0].server.target == expected.rstrip("/")


def test_a_relative_server_resolves_against_the_documents_url_and_without_one_is_an_error() -> None:
    text = _document({"/items": {"get": {"responses": {}}}}, servers=[{"url": "/api/v3"}])
    from_url = parse_document(text, "doc", "https://shop.example.com/docs/openapi.json")
    assert openapi_tools(from_url)[0].server.target == "https://shop.example.com/api/v3"
    # No servers at all means '/', the document's origin
    bare = parse_document(_document({"/items": {"get": {}}}), "doc", "http://127.0.0.1:9/openapi.json")
    assert openapi_tools(bare)[0].server.target == "http://127.0.0.1:9"
    with pytest.raises(ConfigError, match="relative, and the document was read from a file") as caught:
        openapi_tools(parse_document(text, "doc"))
    assert "base URL" in str(caught.value)


def test_an_operation_without_an_id_is_named_by_method_and_path() -> None:
    document = parse_document(_document({"/pets/{petId}": {"get": {}}}), "doc")
    (tool,) = openapi_tools(document, base_url="https://x.example.com")
    assert tool.name == "get_pets_petId" and tool.tool_name == "GET /pets/{petId}"


def test_a_header_whose_name_is_no_argument_name_gets_a_wire_name() -> None:
    parameters = [
        {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
        {"name": "id", "in": "query", "schema": {"type": "string"}},
    ]
    document = parse_document(_document({"/x/{id}": {"get": {"parameters": parameters}}}), "doc")
    (tool,) = openapi_tools(document, base_url="https://x.example.com")
    assert tool.http is not None and tool.http.parameters == (
        HttpParameter(name="x_request_id", location="header", wire_name="X-Request-Id"),
        HttpParameter(name="id", location="path"),
        HttpParameter(name="id_query", location="query", wire_name="id"),
    )
    assert list(tool.input_schema["properties"]) == ["x_request_id", "id", "id_query"]


def test_x_mcp_annotations_replace_what_the_method_implies() -> None:
    hints = {"readOnlyHint": True, "openWorldHint": False}
    document = parse_document(_document({"/search": {"post": {"x-mcp-annotations": hints}}}), "doc")
    (tool,) = openapi_tools(document, base_url="https://x.example.com")
    # A POST may write, so it is never read-only; one that says it only reads destroys nothing, as it says
    assert (tool.annotations.read_only, tool.annotations.destructive, tool.annotations.open_world) == (
        False, False, False,
    )  # fmt: skip
    assert tool.notes == ("its x-mcp-annotations readOnlyHint: true is ignored: a POST may write",)
    wrong = parse_document(_document({"/s": {"post": {"x-mcp-annotations": {"readOnlyHint": "yes"}}}}), "doc")
    with pytest.raises(ConfigError, match="readOnlyHint of POST /s is not true or false"):
        openapi_tools(wrong, base_url="https://x.example.com")


def test_openapi_30_nullable_and_exclusive_bounds_become_json_schema() -> None:
    schema = {"type": "integer", "nullable": True, "minimum": 0, "exclusiveMinimum": True}
    parameters = [{"name": "n", "in": "query", "schema": schema}]
    document = parse_document(_document({"/n": {"get": {"parameters": parameters}}}), "doc")
    (tool,) = openapi_tools(document, base_url="https://x.example.com")
    assert tool.input_schema["properties"]["n"] == {"type": ["integer", "null"], "exclusiveMinimum": 0}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"openapi": "2.9"}', "is OpenAPI 2.9"),
        ('{"info": {}}', "no 'openapi' field"),
        ("[1, 2]", "not a JSON or YAML object"),
        ("{: nope", "neither JSON nor YAML"),
    ],
)
def test_a_document_that_is_no_openapi_3_is_refused_naming_it(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_document(text, "'api.json'")


def test_a_ref_to_nowhere_is_an_error_naming_it() -> None:
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Missing"}}}}
    document = parse_document(_document({"/x": {"post": {"requestBody": body}}}), "doc")
    with pytest.raises(ConfigError, match="#/components/schemas/Missing, which is not in the document"):
        openapi_tools(document, base_url="https://x.example.com")


def test_a_missing_file_is_named() -> None:
    with pytest.raises(ConfigError, match="Cannot read the OpenAPI document '/nonexistent/openapi.json'"):
        _list("/nonexistent/openapi.json")


def test_a_document_path_from_data_is_refused_and_its_tools_would_be_unsealed(oas_examples: Path) -> None:
    with pytest.raises(ConfigError, match="would read a file of this machine"):
        _list(oas_examples / "3.0/json/petstore.json", untrusted_hint="trust it")


def test_the_document_api_key_scheme_names_the_header(oas_examples: Path) -> None:
    # (a credential goes to the server of a document read from a file only when the person sets it as Base URL)
    source, base_url = oas_examples / "3.0/json/petstore.json", "http://petstore.swagger.io/v2"
    tools = _list(source, base_url=base_url, auth=DocumentApiKey(kind="header", credential="c")).tools
    assert tools[0].server.auth == AuthRef(kind="header", header="api_key", credential="c")
    assert all(is_sealed_here(tool.server) for tool in tools)
    with pytest.raises(ConfigError, match="no API key security scheme in the query.*'api_key' \\(in the header\\)"):
        _list(source, base_url=base_url, auth=DocumentApiKey(kind="query", credential="c"))


def test_http_tools_travel_through_the_tools_table(petstore: dict[str, MCPTool]) -> None:
    tools = list(petstore.values())
    assert tools_from_frame(tools_to_frame(tools)) == tools
    assert [tool.http for tool in tools_from_frame(tools_to_frame(tools))] == [tool.http for tool in tools]


# -- the FastAPI test API's generated OpenAPI 3.1 document ----------------------------------------------------------


@pytest.fixture(scope="module")
def api_listing(http_api_url: str) -> ToolListing:
    return _list(f"{http_api_url}/openapi.json")


def test_the_fastapi_documents_operations_become_tools_at_its_server(
    api_listing: ToolListing, http_api_url: str
) -> None:
    tools = _by_name(api_listing.tools)
    assert list(tools)[:10] == [
        "listPets", "createPet", "getPet", "deletePet", "getPetPhoto", "getPetCard", "secureByQueryKey",
        "secureByHeaderKey", "fail", "slow",
    ]  # fmt: skip
    # FastAPI gives the four methods of one route the same operationId (after one of them); shaping makes the names
    # unique with a suffix
    flaky = {name: tool for name, tool in tools.items() if name.startswith("flaky")}
    first = next(iter(flaky))
    assert list(flaky) == [first, f"{first}_2", f"{first}_3", f"{first}_4"]
    assert {tool.http.method for tool in flaky.values()} == {"GET", "PUT", "POST", "DELETE"}  # type: ignore[union-attr]
    assert {tool.server.target for tool in tools.values()} == {http_api_url}


def test_the_fastapi_body_model_enum_and_header_parameter_arrive_as_schema(api_listing: ToolListing) -> None:
    tools = _by_name(api_listing.tools)
    create = tools["createPet"]
    assert create.input_schema["required"] == ["body"]
    body = create.parameter_schema["properties"]["body"]
    assert body["properties"]["species"]["enum"] == ["dog", "cat", "bird"]
    assert body["properties"]["owner"]["properties"]["address"]["required"] == ["city"]
    assert create.output_schema is not None and "id" in create.output_schema["properties"]
    get_pet = tools["getPet"]
    assert get_pet.http is not None and get_pet.http.parameters[-1] == HttpParameter(
        name="x_request_id", location="header", wire_name="x-request-id"
    )
    list_pets = tools["listPets"]
    assert list_pets.input_schema["required"] == [] and set(list_pets.input_schema["properties"]) >= {"species"}
    assert validate_arguments(list_pets, {"species": "dog"}) == []
    assert validate_arguments(list_pets, {"species": "fish"})


def test_the_fastapi_documents_query_key_scheme_gives_the_query_parameter(http_api_url: str) -> None:
    auth = DocumentApiKey(kind="query", secret="${KNIME_MCP_TEST_TOKEN}")
    tools = _list(f"{http_api_url}/openapi.json", auth=auth).tools
    assert tools[0].server.auth.kind == "query" and tools[0].server.auth.parameter == "api_key"  # type: ignore[attr-defined]


def test_the_document_is_read_over_http(http_api_url: str) -> None:
    document = anyio.run(lambda: load_document(f"{http_api_url}/openapi.json"))
    assert document.version.startswith("3.1") and document.url == f"{http_api_url}/openapi.json"
