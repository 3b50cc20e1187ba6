"""The programs file a person writes (JSON or YAML), each mistake named with the program and what to do, and program
tools in the tools table's both forms: Kind ``Program``, a stable ``program-`` id, and a seal that covers the program,
its arguments, folder and environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knime_mcp.config.program import ProgramSpec, programs_from_file, programs_from_text
from knime_mcp.errors import ConfigError
from knime_mcp.programs import program_of, program_tools
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_arrow, tools_from_frame, tools_to_arrow, tools_to_frame
from knime_mcp.tools.tool import MCPTool

_FILE = {
    "programs": {
        "word_count": {
            "command": "wc",
            "args": ["-w", "{path}"],
            "description": "Count the words of a file",
            "cwd": "/tmp",
            "env": {"LANG": "C", "TOKEN": "${MY_TOKEN}"},
            "timeout": 30,
            "maxOutputMb": 1,
            "annotations": {"readOnlyHint": True},
        }
    }
}


def test_a_programs_file_in_json_and_in_yaml_gives_the_same_programs(tmp_path: Path) -> None:
    yaml_text = """
programs:
  word_count:
    command: wc
    args: ["-w", "{path}"]
    description: Count the words of a file
    cwd: /tmp
    env: {LANG: C, TOKEN: "${MY_TOKEN}"}
    timeout: 30
    maxOutputMb: 1
    annotations: {readOnlyHint: true}
"""
    path = tmp_path / "programs.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    (program,) = programs_from_text(json.dumps(_FILE))
    assert programs_from_file(path) == [program]
    assert program.args == ("-w", "{path}") and program.max_output_bytes == 1024 * 1024 and program.timeout == 30
    # Without an inputSchema, each placeholder is a required string
    assert program.schema == {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"args": ["x"]}, "Program 'p' has no command."),
        ({"command": "wc", "shell": True}, "Program 'p' has the unknown key 'shell'."),
        ({"command": "wc", "env": {"API_TOKEN": "abc123secret"}}, "holds a literal secret"),
        ({"command": "wc", "args": "-w {path}"}, "Program 'p' has args that are not a list of texts."),
        ({"command": "wc", "timeout": 0}, "Program 'p' has the timeout 0."),
        ({"command": "wc", "maxOutputMb": -1}, "Program 'p' has the maxOutputMb -1."),
        ({"command": "wc", "annotations": {"safe": True}}, "Program 'p' has the unknown annotation 'safe'."),
        (
            {"command": "wc", "args": ["{path}"], "inputSchema": {"type": "object", "properties": {}}},
            "Program 'p' uses the argument 'path' that its inputSchema does not describe.",
        ),
    ],
)
def test_each_mistake_in_a_programs_file_is_named_with_its_program(entry: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        programs_from_text(json.dumps({"programs": {"p": entry}}))
    assert said in str(caught.value) and caught.value.hint


def test_a_file_without_programs_says_what_one_looks_like() -> None:
    with pytest.raises(ConfigError) as caught:
        programs_from_text('{"servers": {}}')
    assert 'no "programs" object' in str(caught.value) and '"command": "PROGRAM"' in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("  \n", "is empty."),
        ('{"servers": {}}', 'has no "programs" object with at least one program.'),
        ("programs: [unclosed", "is neither JSON nor YAML"),
    ],
)
def test_a_mistake_in_the_whole_configuration_says_configuration_when_pasted_and_file_with_its_path_when_read(
    tmp_path: Path, text: str, said: str
) -> None:
    # Given the same mistaken text pasted (the node's Programs configuration) and in a file (the CLI's --programs)
    path = tmp_path / "programs.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as pasted:
        programs_from_text(text)
    with pytest.raises(ConfigError) as read:
        programs_from_file(path)
    # Then the pasted one speaks of the configuration, never of a file; the file's names the file
    assert str(pasted.value).startswith(f"The programs configuration {said}") and "file" not in str(pasted.value)
    assert str(read.value).startswith(f"The programs file {str(path)!r} {said}")


def test_program_tools_are_kind_program_with_a_stable_id_and_round_trip_through_both_table_forms() -> None:
    (program,) = programs_from_text(json.dumps(_FILE))
    (tool,) = program_tools([program])
    assert tool.kind_label == "Program" and tool.tool_id.startswith("program-")
    assert program_tools([program])[0].tool_id == tool.tool_id
    assert tool.annotations.read_only and not tool.annotations.destructive
    frame = tools_to_frame([tool])
    assert frame["Kind"].tolist() == ["Program"]
    for read in (tools_from_arrow(tools_to_arrow([tool]))[0], tools_from_frame(frame)[0]):
        assert read == tool and read.program == tool.program and is_sealed_here(read.server)
        assert program_of(read) == ProgramSpec(
            name="word_count", command="wc", args=("-w", "{path}"), description="Count the words of a file",
            input_schema=program.schema, cwd="/tmp", env={"LANG": "C", "TOKEN": "${MY_TOKEN}"}, timeout=30,
            max_output_bytes=1024 * 1024,
        )  # fmt: skip


@pytest.mark.parametrize(
    "edit",
    [
        lambda cell: cell["program"]["args"].append("--all"),
        lambda cell: cell["server"].update(target="rm"),
        lambda cell: cell["server"].update(cwd="/"),
        lambda cell: cell["server"]["env"].update(LD_PRELOAD="/tmp/x.so"),
        lambda cell: cell.pop("program"),
    ],
    ids=["arguments", "command", "folder", "environment", "made an MCP server"],
)
def test_a_sealed_program_row_edited_anywhere_that_runs_it_is_data(edit: object) -> None:
    (tool,) = program_tools(programs_from_text(json.dumps(_FILE)))
    cell = json.loads(tool.to_json())
    edit(cell)  # type: ignore[operator]
    assert not is_sealed_here(MCPTool.from_dict(cell).server)


def test_program_tools_from_a_person_are_sealed_and_others_are_not() -> None:
    (program,) = programs_from_text(json.dumps(_FILE))
    (tool,) = program_tools([program])
    assert is_sealed_here(tool.server)
    assert not is_sealed_here(MCPTool.from_dict({**tool.to_dict(), "seal": None}).server)
