"""The program a stdio server's command line starts, looked up before it is started.

A server pasted from a README starts with ``npx``, ``uvx`` or ``docker``, which a machine (a KNIME Hub executor, a
desktop KNIME started outside a shell) often lacks; the operating system's "No such file or directory" names
neither the program nor what to install, so the program is looked up on the ``PATH`` the server will get, first.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from knime_mcp.errors import ServerConnectError

__all__ = ["check_program"]

_NODE = "Node.js (https://nodejs.org), which brings npm and npx"
_UV = "uv (https://docs.astral.sh/uv/getting-started/installation/), which brings uvx"
_INSTALL = {
    "npx": _NODE,
    "npm": _NODE,
    "node": _NODE,
    "uvx": _UV,
    "uv": _UV,
    "docker": "Docker (https://docs.docker.com/get-started/get-docker/)",
    "podman": "Podman (https://podman.io)",
    "deno": "Deno (https://deno.com)",
    "bun": "Bun (https://bun.sh)",
    "pipx": "pipx (https://pipx.pypa.io)",
    "python": "Python (https://www.python.org)",
    "python3": "Python (https://www.python.org)",
}
"""What to install for the programs servers' READMEs start them with."""


def check_program(program: str, env: Mapping[str, str], server: str) -> None:
    """Refuse a bare program name (no folder in it) that is not on the ``PATH`` the server gets (``env``'s, else
    this process's), naming the program and what installs it; a path is left to the operating system."""
    if os.path.dirname(program) or shutil.which(program, path=env.get("PATH")):
        return
    name = os.path.splitext(os.path.basename(program))[0].lower()
    install = f"Install {_INSTALL[name]}" if name in _INSTALL else f"Install {program!r}"
    raise ServerConnectError(
        f"The server's program {program!r} is not installed here: it is not on PATH.",
        server=server,
        hint=f"{install}; if it is installed, start KNIME (or this command) with its folder on PATH, or write its "
        "full path in the command line.",
    )
