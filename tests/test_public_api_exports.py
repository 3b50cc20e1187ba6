"""The names docs/python-api.md and the core's docstrings show users are exported by ``knime_mcp``,
lazily: each is the object its module defines (``test_packaging`` checks importing the package stays cheap)."""

from __future__ import annotations

import pytest

import knime_mcp

SHOWN = {
    "ChatSession": "knime_mcp.agent.chat_session",
    "ApprovalPolicy": "knime_mcp.agent.approval",
    "ApprovalRequest": "knime_mcp.agent.approval",
    "Approver": "knime_mcp.agent.approval",
    "Decision": "knime_mcp.agent.approval",
    "SessionApprover": "knime_mcp.agent.approval",
    "parse_pasted": "knime_mcp.config.pasted",
    "TlsSettings": "knime_mcp.config",
    "ProgramSpec": "knime_mcp.config.program",
    "list_program_tools": "knime_mcp.calls.listing",
    "ToolPolicy": "knime_mcp.tools.policy",
    "needed_permissions": "knime_mcp.tools.permissions",
    "search_servers": "knime_mcp.registry.catalog",
    "find_server": "knime_mcp.registry.catalog",
    "resolve_server": "knime_mcp.registry.catalog",
    "server_setup": "knime_mcp.registry.setup",
    "RegistryEntry": "knime_mcp.registry.entries",
    "ServerSetup": "knime_mcp.registry.setup",
}


@pytest.mark.parametrize(("name", "module"), SHOWN.items())
def test_a_name_users_are_shown_is_exported_as_its_modules_object(name: str, module: str) -> None:
    from importlib import import_module

    assert name in knime_mcp.__all__ and name in dir(knime_mcp)
    assert getattr(knime_mcp, name) is getattr(import_module(module), name)
