"""An MCP App's ``ui://`` resource, read and vetted for a sandboxed frame: its HTML, and the Content-Security-Policy
and permissions it may run with, never more than it declared and never anything a hostile entry could widen.

Layer: wire, beside :mod:`knime_mcp.mcp.resources`. The chat's view service and the Agent Prompter's tool-call log
read an app with :func:`read_app_resource`; the chat page renders :attr:`AppResource.document` (the policy first) in
an ``<iframe sandbox="allow-scripts">`` with :attr:`AppResource.allow`. A server's ``_meta.ui.csp`` is data from the
server: each domain must be a plain origin (``https://host[:port]``, ``wss://…``, or ``http://localhost``), with an
optional ``*.`` before a host of two labels or more; quotes, keywords, separators, schemes such as ``data:`` and a
lone ``*`` are dropped, so none of them reaches the policy.

    app = await read_app_resource(client, tool.app_uri)
    frame.srcdoc, frame.allow = app.document, app.allow
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knime_mcp.errors import ResourceError

if TYPE_CHECKING:
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.resources import ResourceContent

__all__ = ["MAX_APP_BYTES", "AppResource", "app_policy", "read_app_resource", "vetted_csp", "vetted_permissions"]

logger = logging.getLogger(__name__)

MAX_APP_BYTES = 5_000_000
"""The most bytes (UTF-8) of an app's HTML this client renders: the six published example apps (ext-apps 2.0.3),
scripts bundled in, weigh 218 KB to 629 KB."""

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")

_PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
"""The permissions an app may ask for, and the iframe ``allow`` feature each maps to (ext-apps'
``McpUiResourcePermissions``)."""

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_PORT = r"(?::[0-9]{1,5})?"
_DOMAIN = re.compile(
    rf"(?:(?:https|wss)://(?:\*\.{_LABEL}(?:\.{_LABEL})+|{_LABEL}(?:\.{_LABEL})*){_PORT}"
    rf"|https?://(?:localhost|127\.0\.0\.1){_PORT})/?",
    re.IGNORECASE,
)
"""A source a policy may name: a secure origin, or plain HTTP to this machine (an app in development)."""

_SERVER_HINT = "The tool's app cannot be shown, but its results still reach the chat; tell the server's maintainers."
_INLINE = "'unsafe-inline'"
_NONE = "'none'"
_DOCTYPE = re.compile(r"\A\ufeff?\s*<!doctype[^>]*>", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class AppResource:
    """An app as a frame renders it: the HTML and what it may reach, vetted."""

    uri: str
    server: str
    """The display name of the app's server."""
    html: str
    size: int
    """Bytes of the HTML (UTF-8)."""
    csp: dict[str, list[str]]
    """The vetted ``connectDomains``, ``resourceDomains``, ``frameDomains`` and ``baseUriDomains``."""
    policy: str
    """The Content-Security-Policy built from :attr:`csp`: nothing broader than the app declared."""
    permissions: dict[str, dict[str, Any]]
    """The vetted permissions: only ``camera``, ``microphone``, ``geolocation`` and ``clipboardWrite``."""
    allow: str
    """The iframe ``allow`` attribute for :attr:`permissions`; empty when there are none."""
    prefers_border: bool | None

    @property
    def document(self) -> str:
        """The HTML with the policy's ``<meta>`` as the first element the frame parses (after a doctype, which keeps
        the app in standards mode), so the app runs under its own policy from its first script on."""
        meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(self.policy, quote=True)}">'
        doctype = _DOCTYPE.match(self.html)
        cut = doctype.end() if doctype else 0
        return self.html[:cut] + meta + self.html[cut:]

    def to_dict(self) -> dict[str, Any]:
        """JSON for the chat page: the document (the HTML once, with its policy), not the raw HTML beside it."""
        return {
            "uri": self.uri,
            "server": self.server,
            "document": self.document,
            "csp": self.csp,
            "permissions": self.permissions,
            "allow": self.allow,
            "prefers_border": self.prefers_border,
            "size": self.size,
        }


async def read_app_resource(client: McpClient, uri: str) -> AppResource:
    """The app at ``uri`` on ``client``'s server, vetted; a :class:`ResourceError` saying what to do when ``uri`` is no
    ``ui://`` URI, the server has no such resource, or it is not HTML or larger than :data:`MAX_APP_BYTES`."""
    server = client.server
    if not uri.startswith("ui://"):
        raise ResourceError(
            f"{uri!r} is not an app's resource: an MCP App lives at a ui:// URI.", server=server, hint=_SERVER_HINT
        )
    contents = await client.read_resource(uri, max_bytes=MAX_APP_BYTES)
    item = next((content for content in contents if content.uri == uri), contents[0] if contents else None)
    if item is None:
        raise ResourceError(f"The server's app resource {uri!r} is empty.", server=server, hint=_SERVER_HINT)
    ui = _ui(item.meta)
    mime_type = item.mime_type
    if ui is None or mime_type is None:
        listed = next((entry for entry in await client.list_resources() if entry.uri == uri), None)
        ui = ui if ui is not None or listed is None else _ui(listed.meta)
        mime_type = mime_type or (listed.mime_type if listed else None)
    text = _html(item, mime_type, uri, server)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_APP_BYTES:
        raise ResourceError(
            f"The server's app resource {uri!r} is {size:,} bytes, more than {MAX_APP_BYTES:,}; it is not shown.",
            server=server,
            hint="Ask the server's maintainers for a smaller app; the tool's results still reach the chat.",
        )
    ui = ui or {}
    csp = vetted_csp(ui.get("csp"), uri)
    permissions = vetted_permissions(ui.get("permissions"))
    border = ui.get("prefersBorder")
    return AppResource(
        uri=uri,
        server=server,
        html=text,
        size=size,
        csp=csp,
        policy=app_policy(csp),
        permissions=permissions,
        allow="; ".join(_PERMISSIONS[name] for name in permissions),
        prefers_border=border if isinstance(border, bool) else None,
    )


def _ui(meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    ui = (meta or {}).get("ui")
    return ui if isinstance(ui, Mapping) else None


def _html(item: ResourceContent, mime_type: str | None, uri: str, server: str) -> str:
    """The item's HTML; a :class:`ResourceError` when it is not HTML text."""
    kind = (mime_type or "").split(";")[0].strip().lower()
    if kind != "text/html":
        raise ResourceError(
            f"The server's app resource {uri!r} is {mime_type or 'of no declared type'}, not HTML "
            "(text/html;profile=mcp-app).",
            server=server,
            hint=_SERVER_HINT,
        )
    if item.text is not None:
        return item.text
    try:
        return (item.data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResourceError(
            f"The server's app resource {uri!r} is not UTF-8 text.", server=server, hint=_SERVER_HINT
        ) from exc


def vetted_csp(declared: object, uri: str = "") -> dict[str, list[str]]:
    """The app's declared domains that are plain origins, per key; anything else is dropped (and logged)."""
    declared = declared if isinstance(declared, Mapping) else {}
    vetted: dict[str, list[str]] = {}
    for key in _CSP_KEYS:
        entries = declared.get(key)
        entries = entries if isinstance(entries, list) else []
        kept = [entry.rstrip("/") for entry in entries if isinstance(entry, str) and _DOMAIN.fullmatch(entry)]
        if dropped := [entry for entry in entries if not (isinstance(entry, str) and _DOMAIN.fullmatch(entry))]:
            logger.info("App %s: dropped %d %s entries that are not plain origins.", uri, len(dropped), key)
        vetted[key] = list(dict.fromkeys(kept))
    return vetted


def vetted_permissions(declared: object) -> dict[str, dict[str, Any]]:
    """The permissions an app may ask for that it asked for (an object each, as the specification gives them)."""
    if not isinstance(declared, Mapping):
        return {}
    return {name: {} for name in _PERMISSIONS if isinstance(declared.get(name), Mapping)}


def app_policy(csp: Mapping[str, list[str]]) -> str:
    """The Content-Security-Policy of an app with these vetted domains: inline scripts and styles (apps are single
    HTML files), its resource domains for assets, its connect, frame and base domains, and nothing else."""

    def sources(key: str, base: str = "") -> str:
        return " ".join(filter(None, [base, *csp.get(key, [])])) or _NONE

    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {sources('resourceDomains', _INLINE)}",
            f"style-src {sources('resourceDomains', _INLINE)}",
            f"img-src {sources('resourceDomains', 'data: blob:')}",
            f"font-src {sources('resourceDomains', 'data:')}",
            f"media-src {sources('resourceDomains', 'data: blob:')}",
            f"connect-src {sources('connectDomains')}",
            f"frame-src {sources('frameDomains')}",
            f"base-uri {sources('baseUriDomains')}",
            "form-action 'none'",
            "object-src 'none'",
        ]
    )
