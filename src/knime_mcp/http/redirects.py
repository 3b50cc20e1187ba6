"""Which redirects an HTTP tool follows, and the request each one makes: at most :data:`MAX_REDIRECTS`, all within
the origin (scheme, host and port) the tool was given.

The origin is the person's (a Base URL, an OpenAPI document's own origin, a webhook's URL) and gets the credential;
a redirect elsewhere is the API's word, so following it would send the credential (a header, a query key, basic)
and the request to wherever the API names, this machine or the local network included. httpx strips only the
Authorization header on such a redirect, and lets http become https, so knime-mcp follows none itself: a redirect
to another origin is a :class:`ToolCallError` naming both, and nothing is sent there.

The method follows the Fetch standard, which RFC 9110 (section 15.4) allows: a 303 becomes a GET (a HEAD stays
one), a 301 or 302 after a POST becomes a GET, both without the body; anything else keeps its method and body
(307 and 308 always). httpx turns every 302 into a GET, a PUT or DELETE too; browsers do not.

Pure: no connection. Layer: below :mod:`knime_mcp.http.call`, which sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from knime_mcp.errors import ToolCallError
from knime_mcp.net.urlguard import origin_of

__all__ = ["MAX_REDIRECTS", "REDIRECT_STATUSES", "Redirect", "next_request"]

MAX_REDIRECTS = 3
"""Redirects one call follows; the next one is an error."""

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
"""The statuses followed; a 300 or 304 is the answer."""


@dataclass(frozen=True)
class Redirect:
    """The request a redirect asks for."""

    url: str
    """Absolute, with the Location's query and without a fragment."""

    method: str
    keeps_body: bool


def next_request(status: int, location: str, url: str, method: str, followed: int) -> Redirect:
    """The request for a ``status`` answer with ``location`` to ``method`` at ``url`` (absolute, the host name, not
    a pinned address), after ``followed`` redirects; a :class:`ToolCallError` for another origin or one too many."""
    target = urlsplit(urljoin(url, location.strip()))._replace(fragment="").geturl()
    said = f"The API redirected {method} {urlsplit(url).path or '/'}"
    if origin_of(target) != origin_of(url):
        raise ToolCallError(
            f"{said} from {_origin(url)} to {_origin(target)}, another origin; knime-mcp follows redirects only "
            f"within the origin the tool calls, so nothing was sent to {_origin(target)}.",
            hint=f"If the API now lives at {_origin(target)}, make that the tool's address (the Base URL of its "
            "OpenAPI document, or the webhook's URL).",
        )
    if followed >= MAX_REDIRECTS:
        raise ToolCallError(
            f"{said} a {followed + 1}th time (to {urlsplit(target).path or '/'}); knime-mcp follows at most "
            f"{MAX_REDIRECTS} redirects in one call.",
            hint="Make the address the redirects end at the tool's address (the Base URL, or the webhook's URL).",
        )
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        return Redirect(target, "GET", keeps_body=False)
    return Redirect(target, method, keeps_body=True)


def _origin(url: str) -> str:
    """scheme://host:port, the port always shown, so two origins that differ by it read differently."""
    scheme, host, port = origin_of(url)
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
