"""Test layer: a scripted user agent that tests name in ``BROWSER``, so :mod:`webbrowser` runs it as the browser.

    BROWSER="python tests/scripted_browser.py %s"

It follows the authorization URL through the real `oidc-provider`'s own pages (tests/peers/oidc-provider.mjs): it
logs in as ``alice`` and consents, then follows the redirect back to the loopback listener, as a person with a browser
would. ``KNIME_MCP_TEST_BROWSER`` changes what the person does: ``consent`` (the default), ``deny`` (cancels on the
login page, so the server answers ``access_denied``) or ``away`` (never comes back). Each run appends the URL it was
given to the file named by ``KNIME_MCP_TEST_BROWSER_LOG``, if set.
"""

from __future__ import annotations

import html
import os
import re
import sys

import httpx2

_FORM = re.compile(r'<form[^>]*action="([^"]+)"')
_HIDDEN = re.compile(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"')
_ABORT = re.compile(r'href="([^"]*/abort)"')


def sign_in(url: str, action: str) -> None:
    with httpx2.Client(follow_redirects=False, timeout=30) as browser:
        response = browser.get(url)
        for _ in range(12):
            if response.is_redirect:
                response = browser.get(response.url.join(response.headers["location"]))
                continue
            if response.request.url.host == "127.0.0.1" and response.request.url.path == "/callback":
                return
            page = response.text
            if action == "deny" and (abort := _ABORT.search(page)):
                response = browser.get(response.url.join(html.unescape(abort.group(1))))
                continue
            form = _FORM.search(page)
            if form is None:
                sys.exit(f"scripted browser: no form at {response.url}: {page[:200]}")
            fields = dict(_HIDDEN.findall(page))
            if 'name="login"' in page:
                fields.update(login="alice", password="any")
            response = browser.post(response.url.join(html.unescape(form.group(1))), data=fields)
        sys.exit("scripted browser: too many steps")


def main() -> None:
    url = sys.argv[1]
    if log := os.environ.get("KNIME_MCP_TEST_BROWSER_LOG"):
        with open(log, "a", encoding="utf-8") as out:
            out.write(url + "\n")
    action = os.environ.get("KNIME_MCP_TEST_BROWSER", "consent")
    if action != "away":
        sign_in(url, action)


if __name__ == "__main__":
    main()
