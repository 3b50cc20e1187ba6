"""Test layer: the Agent Chat page in a real headless Chromium, with a small host standing in for KNIME's UI.

KNIME shows a node's HTML view in an iframe; the page's ``@knime/ui-extension-service`` posts
``UIExtensionRequest`` messages (``getConfig``, ``callNodeDataService``, ``sendAlert``) to the parent window and
waits for a ``UIExtensionResponse`` with the same ``requestId``. :class:`ViewHost` serves, on 127.0.0.1:

- ``/`` a host page that embeds ``/view/index.html`` in an iframe and answers those messages as KNIME's embedder
  does: a data-service call is posted to ``/rpc`` and its JSON-RPC answer is returned as ``{"result": <string>}``;
- ``/view/...`` the page's files from disk (``src/nodes/chat_view`` and its ``fonts/``, as KNIME serves the node's
  static resources; nothing outside that folder);
- ``/rpc``: the JSON-RPC request is answered by calling the data service object in the test process by method name
  with the page's arguments, as KNIME's node backend does (``_JsonRpcDataService.handleJsonRpcRequest``).

:func:`open_chat` opens the page on a data service and leaves the driver inside the view's iframe; ``shown``,
``say`` and ``idle`` are what a test does and waits for there.

Every path requested is kept in ``requests`` and every alert the page sent in ``alerts``, so a test sees what the
page asked for. :func:`headless_chromium` starts Debian's chromium through chromium-driver (no sandbox: the tests
run as root) with the browser's performance log on, so a test also sees every network request the page made.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

PAGE_DIR = Path(__file__).resolve().parent.parent / "src" / "nodes" / "chat_view"


def page_files(folder: Path = PAGE_DIR) -> tuple[str, ...]:
    """The files of a built page folder (the fonts/ subfolder too), as sorted paths relative to it."""
    return tuple(sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()))


PAGE_FILES = page_files()
BROWSER = ("chromium", "chromedriver")
"""Debian's chromium and chromium-driver, found on PATH: prerequisites of the test command."""
PATIENCE = 60.0
"""Seconds a test waits for the page to show something before it fails (a wait for readiness, not a timing)."""

_HOST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>KNIME stand-in</title>
<style>html, body { margin: 0; height: 100%; } iframe { border: 0; width: 100%; height: 100%; }</style></head>
<body><iframe id="view" src="/view/index.html"></iframe>
<script>
const view = document.getElementById("view");
const config = { nodeId: "0:1", projectId: "project", workflowId: "root", extensionType: "view" };
async function answer(method, params) {
  if (method === "getConfig") return config;
  if (method === "callNodeDataService") {
    const reply = await fetch("/rpc", { method: "POST", body: params[0].dataServiceRequest });
    return { result: await reply.text() };
  }
  await fetch("/alert", { method: "POST", body: JSON.stringify({ method, params }) });
  return null;
}
window.addEventListener("message", async (message) => {
  if (message.source !== view.contentWindow || message.data?.type !== "UIExtensionRequest") return;
  const { requestId, payload } = message.data;
  const result = await answer(payload.method, payload.params ?? []);
  view.contentWindow.postMessage({ type: "UIExtensionResponse", requestId, payload: result }, "*");
});
</script></body></html>
"""

_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".woff2": "font/woff2"}


def answer_json_rpc(service: Any, request: str) -> str:
    """KNIME's answer to a data-service request: the method called by name with list or keyword params."""
    message = json.loads(request)
    method, params, id_ = message.get("method"), message.get("params") or [], message.get("id")
    if not hasattr(service, method):
        return json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"No {method}"}})
    try:
        function = getattr(service, method)
        result = function(**params) if isinstance(params, dict) else function(*params)
    except Exception as error:  # noqa: BLE001 - KNIME turns every failure into a JSON-RPC error
        return json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32603, "message": str(error)}})
    return json.dumps({"jsonrpc": "2.0", "id": id_, "result": result})


class ViewHost:
    """The stand-in for KNIME's UI around one data service; ``url`` is the host page's address."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.requests: list[str] = []
        self.alerts: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def __enter__(self) -> ViewHost:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.requests.append(self.path)
                if self.path == "/":
                    self._reply(200, "text/html", _HOST_PAGE.encode())
                    return
                file = (PAGE_DIR / self.path.removeprefix("/view/")).resolve()
                if self.path.startswith("/view/") and file.is_relative_to(PAGE_DIR) and file.is_file():
                    self._reply(200, _TYPES.get(file.suffix, "application/octet-stream"), file.read_bytes())
                else:
                    self._reply(404, "text/plain", b"not found")

            def do_POST(self) -> None:
                host.requests.append(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                if self.path == "/rpc":
                    host.calls.append(json.loads(body).get("method"))
                    self._reply(200, "application/json", answer_json_rpc(host.service, body).encode())
                else:
                    host.alerts.append(json.loads(body))
                    self._reply(200, "application/json", b"null")

            def _reply(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                return

        return Handler


def browser_paths() -> tuple[str, str]:
    """Where chromium and chromedriver are; fails the test saying what to install when either is not on PATH."""
    found = [shutil.which(name) for name in BROWSER]
    chromium, chromedriver = found
    if chromium is None or chromedriver is None:
        missing = " and ".join(name for name, path in zip(BROWSER, found, strict=True) if path is None)
        pytest.fail(
            f"The Agent Chat view's tests need Debian's chromium and chromium-driver; {missing} not on PATH: "
            "install them with `apt-get install chromium chromium-driver`",
            pytrace=False,
        )
    return chromium, chromedriver


@contextlib.contextmanager
def headless_chromium() -> Iterator[webdriver.Chrome]:
    """Debian's chromium, headless, driven by chromium-driver; quit when the block ends."""
    chromium, chromedriver = browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,1000",
                     "--disable-gpu", "--no-first-run", "--disable-background-networking"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    try:
        yield driver
    finally:
        driver.quit()


def network_requests(driver: webdriver.Chrome) -> list[str]:
    """The URLs the browser requested since the last call (its performance log, DevTools' Network events)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@contextlib.contextmanager
def open_chat(browser: webdriver.Chrome, service: Any) -> Iterator[ViewHost]:
    """The page open on ``service``, the driver inside the view's iframe once the page called ``init``."""
    with ViewHost(service) as host:
        network_requests(browser)  # drop what earlier pages requested
        browser.get(host.url)
        browser.switch_to.frame(browser.find_element(By.ID, "view"))
        until(browser, lambda: "init" in host.calls)
        try:
            yield host
        finally:
            browser.switch_to.default_content()


def until(browser: webdriver.Chrome, check: Callable[[], Any]) -> Any:
    """``check()``'s first truthy value, polled until it comes."""
    return WebDriverWait(browser, PATIENCE, poll_frequency=0.05).until(lambda _: check())


def shown(browser: webdriver.Chrome, selector: str) -> WebElement:
    """The first element matching ``selector`` once the page shows it."""
    return until(browser, lambda: next(iter(browser.find_elements(By.CSS_SELECTOR, selector)), None))


def say(browser: webdriver.Chrome, text: str) -> None:
    """Types ``text`` into the composer and presses Enter."""
    browser.find_element(By.CSS_SELECTOR, ".composer textarea").send_keys(text, Keys.ENTER)


def idle(browser: webdriver.Chrome) -> None:
    """Waits until the turn has ended on the page: Send enabled, Stop hidden."""
    until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".send").is_enabled())
    assert not browser.find_element(By.CSS_SELECTOR, ".stop").is_displayed()
