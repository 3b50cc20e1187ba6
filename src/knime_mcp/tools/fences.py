"""Text that servers wrote, fenced as data for a model: between tags that carry a random fence value.

Layer: core, used by the agent's toolset (tool output and tool descriptions) and by the MCP Prompt node's conversation
(prompt messages). The fence value is drawn once per run, after the server has written its text, so the text cannot
hold the closing tag; the agent's system message tells the model what the tags mean.

    fence = new_fence()
    between_fences("tool-output", result_text, fence, tool="search")
"""

from __future__ import annotations

import re
from html import escape
from secrets import token_hex

__all__ = ["between_fences", "new_fence", "within_fences"]


def new_fence() -> str:
    """A fresh fence value for one run."""
    return token_hex(4)


def between_fences(tag: str, text: str, fence: str, **attributes: str) -> str:
    """``text`` between ``<tag …>`` and ``</tag …>`` carrying ``fence``; ``attributes`` (who wrote it) come first, as
    quoted values that cannot close the tag."""
    named = "".join(f' {name}="{escape(value, quote=True)}"' for name, value in attributes.items())
    return f'<{tag}{named} fence="{fence}">\n{text}\n</{tag} fence="{fence}">'


def within_fences(tag: str, text: str) -> str:
    """The text :func:`between_fences` fenced with ``tag`` (in an earlier run: any fence value), for a person to read;
    ``text`` itself when it is not so fenced."""
    fenced = re.fullmatch(
        rf'<{re.escape(tag)}\b[^>]* fence="([0-9a-f]+)">\n(.*)\n</{re.escape(tag)} fence="\1">', text, re.S
    )
    return fenced.group(2) if fenced else text
