"""What KNIME needs to load the extension, kept true by tests: manifests, icons, public API, a KNIME-free core."""

from __future__ import annotations

import ast
import re
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _requirement_name(spec: str) -> tuple[str, str]:
    match = re.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", spec)
    assert match, spec
    return match.group(1).lower(), match.group(2).replace(" ", "")


def test_runtime_dependencies_agree_between_pyproject_and_pixi() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pixi = tomllib.loads((ROOT / "pixi.toml").read_text())
    declared = dict(_requirement_name(spec) for spec in pyproject["project"]["dependencies"])
    assert {name.lower(): spec.replace(" ", "") for name, spec in pixi["pypi-dependencies"].items()} == declared


def _knime_pins() -> dict[str, str]:
    lines = (ROOT / "tests" / "knime-5.5-pins.txt").read_text().splitlines()
    pins = [line.split("#")[0].strip() for line in lines]
    return dict(_requirement_name(pin) for pin in pins if pin)


def test_the_dependency_ranges_admit_knime_5_5s_pins_and_exclude_pandas_3() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pixi = tomllib.loads((ROOT / "pixi.toml").read_text())
    project = pyproject["project"]
    ranges = {
        "pyproject.toml dependencies": dict(map(_requirement_name, project["dependencies"])),
        "pyproject.toml test extra": dict(map(_requirement_name, project["optional-dependencies"]["test"])),
        "pixi.toml pypi-dependencies": {name.lower(): spec for name, spec in pixi["pypi-dependencies"].items()},
    }
    pins = _knime_pins()
    assert {"pandas", "numpy", "pyarrow"} <= ranges["pyproject.toml dependencies"].keys()
    for where, declared in ranges.items():
        for name, pin in pins.items():
            if name in declared:
                assert Version(pin.removeprefix("==")) in SpecifierSet(declared[name]), f"{where}: {name}{pin}"
        assert Version("3.0.0") not in SpecifierSet(declared.get("pandas", "<3")), where
    assert set(pins) <= ranges["pyproject.toml dependencies"].keys() | ranges["pyproject.toml test extra"].keys()


NODE_IDS = {
    "MCPToolProvider": "MCP Tool Provider",
    "MCPToolCaller": "MCP Tool Caller",
    "ChatModelConnector": "Chat Model Connector",
    "AgentPrompter": "Agent Prompter",
    "AgentChat": "Agent Chat",
    "MCPResourceReader": "MCP Resource Reader",
    "MCPPrompt": "MCP Prompt",
    "HTTPToolProvider": "HTTP Tool Provider",
    "ProgramToolProvider": "Program Tool Provider",
    "ToolStatistics": "Tool Statistics",
}
"""Node id to node name. Saved workflows find their nodes by id: an id must never change, whatever the class is
called (without ``id=``, KNIME takes the class name)."""


def test_every_node_declares_its_id_explicitly_and_the_ids_never_change() -> None:
    declared = {}
    for path in (ROOT / "src" / "nodes").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "knext.node":
                ids = [k.value for k in node.keywords if k.arg == "id" and isinstance(k.value, ast.Constant)]
                assert ids, f"a node in {path.name} has no literal id=..."
                declared[ids[0].value] = node.args[0].value  # type: ignore[attr-defined]
    assert declared == NODE_IDS


def test_knime_yml_names_an_existing_module_pixi_manifest_and_licence() -> None:
    manifest = yaml.safe_load((ROOT / "knime.yml").read_text())
    assert {"name", "group_id", "version", "extension_module", "pixi_toml_path"} <= manifest.keys()
    assert (ROOT / f"{manifest['extension_module']}.py").is_file()
    assert (ROOT / manifest["pixi_toml_path"]).is_file() and (ROOT / manifest["license_file"]).is_file()
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])


def test_one_version_everywhere_the_extension_states_it() -> None:
    # KNIME's since_version compares against knime.yml; the package and the MCP handshake say the same version
    from knime_mcp.mcp.session_keeper import CLIENT_INFO as _CLIENT_INFO

    manifest = yaml.safe_load((ROOT / "knime.yml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert manifest["version"] == project["version"] == _CLIENT_INFO.version


def test_every_icon_a_node_names_is_a_16_by_16_png() -> None:
    sources = [ROOT / "src" / "extension.py", *(ROOT / "src" / "nodes").rglob("*.py")]
    named = set()
    for source in sources:
        named |= set(re.findall(r'"(icons/[^"]+\.png)"', source.read_text()))
    assert named
    for icon in named:
        data = (ROOT / icon).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", icon
        assert struct.unpack(">II", data[16:24]) == (16, 16), icon


def test_the_core_never_imports_knime() -> None:
    for path in (ROOT / "src" / "knime_mcp").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "knime" or n.startswith("knime.") for n in names), path


def test_importing_every_core_module_leaves_knime_unimported() -> None:
    core = ROOT / "src" / "knime_mcp"
    modules = sorted(".".join(p.relative_to(core).with_suffix("").parts) for p in core.rglob("*.py"))
    code = "import sys\n" + "".join(
        f"import knime_mcp.{m}\n" for m in modules if not m.endswith(("__init__", "__main__"))
    )
    code += "print(any(m == 'knime' or m.startswith('knime.') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_public_api_is_the_sorted_all_and_every_name_resolves() -> None:
    import knime_mcp

    assert knime_mcp.__all__ == sorted(knime_mcp.__all__)
    for name in knime_mcp.__all__:
        assert getattr(knime_mcp, name) is not None


def test_importing_the_package_loads_no_heavy_libraries() -> None:
    heavy = ("pyarrow", "pandas", "jsonschema", "langchain_core", "PIL")
    code = f"import sys, knime_mcp; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_the_extension_module_registers_its_nodes() -> None:
    import extension

    for name in NODE_IDS:
        assert callable(getattr(extension, name))
