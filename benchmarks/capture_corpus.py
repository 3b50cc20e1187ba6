"""Capture the corpus of real tool lists: published MCP servers installed from their registries, listed over stdio.

    python benchmarks/capture_corpus.py [KEY ...]

Each server is installed into a temporary folder (npm: ``npm install --prefix``; PyPI: a throwaway venv and pip),
started over stdio with the ``mcp`` SDK's client, listed (every page of ``tools/list``) and stopped. Servers that
need a token get a dummy one (never a real secret): they list their tools without calling their API. What is written,
one file per server in ``benchmarks/corpus/``: the package's name and version, and the tools as the server sent them
(the SDK's parse dumped back by alias, without nulls). What failed, and why, is printed, never written to the corpus.
Arguments choose servers by key; none: all. Re-running overwrites the files of the servers that listed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import venv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp.client.stdio import stdio_client

CORPUS = Path(__file__).with_name("corpus")
INSTALL_SECONDS = 600
LIST_SECONDS = 90
DUMMY = "dummy-not-a-real-secret"


@dataclass(frozen=True)
class Published:
    """One published server: where it comes from and how it starts without network access."""

    key: str
    registry: str
    """``npm`` or ``pypi``."""
    package: str
    command: str
    """The executable the package installs."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    pins: tuple[str, ...] = ()
    """Requirements installed beside the package, for a server that breaks with the newest of a dependency."""


def _npm(key: str, package: str, command: str, *args: str, **env: str) -> Published:
    return Published(key, "npm", package, command, args, env)


def _pypi(key: str, package: str, command: str, *args: str, **env: str) -> Published:
    return Published(key, "pypi", package, command, args, env)


SERVERS = (
    _npm("everything", "@modelcontextprotocol/server-everything", "mcp-server-everything", "stdio"),
    _npm("filesystem", "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", "{tmp}"),
    _npm("memory", "@modelcontextprotocol/server-memory", "mcp-server-memory"),
    _npm("thinking", "@modelcontextprotocol/server-sequential-thinking", "mcp-server-sequential-thinking"),
    _npm("github", "@modelcontextprotocol/server-github", "mcp-server-github", GITHUB_PERSONAL_ACCESS_TOKEN=DUMMY),
    _npm(
        "gitlab",
        "@modelcontextprotocol/server-gitlab",
        "mcp-server-gitlab",
        GITLAB_PERSONAL_ACCESS_TOKEN=DUMMY,
        GITLAB_API_URL="http://127.0.0.1:9/api/v4",
    ),
    _npm("slack", "@modelcontextprotocol/server-slack", "mcp-server-slack", SLACK_BOT_TOKEN=DUMMY, SLACK_TEAM_ID="T0"),
    _npm("postgres", "@modelcontextprotocol/server-postgres", "mcp-server-postgres", "postgresql://127.0.0.1:9/none"),
    _npm("puppeteer", "@modelcontextprotocol/server-puppeteer", "mcp-server-puppeteer"),
    _npm("brave", "@modelcontextprotocol/server-brave-search", "mcp-server-brave-search", BRAVE_API_KEY=DUMMY),
    _npm("maps", "@modelcontextprotocol/server-google-maps", "mcp-server-google-maps", GOOGLE_MAPS_API_KEY=DUMMY),
    _npm("gdrive", "@modelcontextprotocol/server-gdrive", "mcp-server-gdrive"),
    _npm("redis", "@modelcontextprotocol/server-redis", "mcp-server-redis", "redis://127.0.0.1:9"),
    _npm(
        "awskb",
        "@modelcontextprotocol/server-aws-kb-retrieval",
        "mcp-server-aws-kb-retrieval",
        AWS_ACCESS_KEY_ID=DUMMY,
        AWS_SECRET_ACCESS_KEY=DUMMY,
        AWS_REGION="us-east-1",
    ),
    _npm("everart", "@modelcontextprotocol/server-everart", "mcp-server-everart", EVERART_API_KEY=DUMMY),
    _npm("notion", "@notionhq/notion-mcp-server", "notion-mcp-server", NOTION_TOKEN=DUMMY),
    _npm("playwright", "@playwright/mcp", "mcp-server-playwright"),
    _npm("stripe", "@stripe/mcp", "mcp", "--tools=all", "--api-key=sk_test_" + DUMMY),
    _npm("sentry", "@sentry/mcp-server", "sentry-mcp", "--access-token=" + DUMMY),
    _npm("supabase", "@supabase/mcp-server-supabase", "mcp-server-supabase", "--access-token=" + DUMMY),
    _npm("mongodb", "mongodb-mcp-server", "mongodb-mcp-server"),
    _npm("kubernetes", "mcp-server-kubernetes", "mcp-server-kubernetes"),
    _npm("commander", "@wonderwhy-er/desktop-commander", "desktop-commander"),
    _npm("firecrawl", "firecrawl-mcp", "firecrawl-mcp", FIRECRAWL_API_KEY=DUMMY),
    _npm("tavily", "tavily-mcp", "tavily-mcp", TAVILY_API_KEY=DUMMY),
    _npm("context7", "@upstash/context7-mcp", "context7-mcp"),
    _npm("circleci", "@circleci/mcp-server-circleci", "mcp-server-circleci", CIRCLECI_TOKEN=DUMMY),
    _npm("heroku", "@heroku/mcp-server", "heroku-mcp-server", HEROKU_API_KEY=DUMMY),
    _npm("mysql", "@benborla29/mcp-server-mysql", "mcp-server-mysql", MYSQL_HOST="127.0.0.1", MYSQL_PORT="9"),
    _npm("jira", "@atlassian-dc-mcp/jira", "atlassian-dc-mcp-jira", JIRA_HOST="127.0.0.1:9", JIRA_API_TOKEN=DUMMY),
    _npm("calendar", "@cocal/google-calendar-mcp", "google-calendar-mcp"),
    _npm(
        "elasticsearch",
        "@elastic/mcp-server-elasticsearch",
        "mcp-server-elasticsearch",
        ES_URL="http://127.0.0.1:9",
        ES_API_KEY=DUMMY,
    ),
    _npm("hubspot", "@hubspot/mcp-server", "mcp-server-hubspot", PRIVATE_APP_ACCESS_TOKEN=DUMMY),
    _npm("figma", "figma-developer-mcp", "figma-developer-mcp", "--stdio", FIGMA_API_KEY=DUMMY),
    _pypi("time", "mcp-server-time", "mcp-server-time"),
    _pypi("fetch", "mcp-server-fetch", "mcp-server-fetch"),
    _pypi("git", "mcp-server-git", "mcp-server-git"),
    Published(
        "sqlite", "pypi", "mcp-server-sqlite", "mcp-server-sqlite", ("--db-path", "{tmp}/corpus.db"), pins=("mcp<2",)
    ),  # written for the SDK 1.x server API
)


def install(server: Published, folder: Path) -> tuple[Path, str]:
    """Install the package into ``folder``; its executable and the version installed."""
    quiet = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True, "timeout": INSTALL_SECONDS}
    env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    if server.registry == "npm":
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), server.package],
                              env=env, **quiet)  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"npm install failed: {done.stdout.strip()[-400:]}")
        manifest = json.loads((folder / "node_modules" / server.package / "package.json").read_text())
        return folder / "node_modules" / ".bin" / _npm_command(server, manifest), manifest["version"]
    venv.create(folder, with_pip=True)
    pip = str(folder / "bin" / "pip")
    done = subprocess.run([pip, "install", "-q", server.package, *server.pins], env=env, **quiet)
    if done.returncode:
        raise RuntimeError(f"pip install failed: {done.stdout.strip()[-400:]}")
    show = subprocess.run([pip, "show", server.package], **quiet).stdout
    version = next(line.split(":", 1)[1].strip() for line in show.splitlines() if line.startswith("Version:"))
    return folder / "bin" / server.command, version


def _npm_command(server: Published, manifest: dict[str, Any]) -> str:
    """The executable named in the server's entry if the package installs it, else the package's only one."""
    bins = manifest.get("bin") or {}
    if isinstance(bins, str):
        return server.package.rsplit("/", 1)[-1]
    return server.command if server.command in bins or len(bins) != 1 else next(iter(bins))


async def list_all(executable: Path, server: Published, scratch: Path) -> list[dict[str, Any]]:
    """Every page of the server's ``tools/list``, each tool dumped as sent (by alias, no nulls); the server's stderr
    goes to ``stderr.txt`` in ``scratch``."""
    args = [arg.replace("{tmp}", str(scratch)) for arg in server.args]
    env = {"PATH": os.environ["PATH"], "HOME": str(scratch), **server.env}
    params = mcp.StdioServerParameters(command=str(executable), args=args, env=env, cwd=str(scratch))
    tools: list[dict[str, Any]] = []
    with anyio.fail_after(LIST_SECONDS), open(scratch / "stderr.txt", "w") as errlog:
        async with mcp.Client(stdio_client(params, errlog=errlog)) as client:
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return tools


def capture(server: Published) -> str:
    """Install, list and write one server's file; the line to print."""
    with tempfile.TemporaryDirectory(prefix=f"corpus-{server.key}-") as folder:
        executable, version = install(server, Path(folder) / "install")
        scratch = Path(folder) / "scratch"
        scratch.mkdir()
        try:
            tools = anyio.run(list_all, executable, server, scratch)
        except Exception as exc:
            said = (scratch / "stderr.txt").read_text(errors="replace").strip()[-300:]
            raise RuntimeError(f"{_cause(exc)}; the server said: {said or 'nothing'}") from exc
    if not tools:
        raise RuntimeError("listed no tools")
    record = {"key": server.key, "registry": server.registry, "package": server.package, "version": version}
    text = json.dumps({**record, "tools": tools}, indent=1, ensure_ascii=False)
    (CORPUS / f"{server.key}.json").write_text(text + "\n", encoding="utf-8")
    return f"ok      {server.key}: {server.package} {version}, {len(tools)} tools"


def _cause(exc: BaseException) -> str:
    """The first error inside task groups' exception groups, with its type."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def main(keys: list[str]) -> int:
    CORPUS.mkdir(exist_ok=True)
    chosen = [server for server in SERVERS if not keys or server.key in keys]
    failed = 0
    for server in chosen:
        try:
            line = capture(server)
        except Exception as exc:  # noqa: BLE001 - every failure is reported and the next server tried
            failed += 1
            reason = " ".join(str(exc).split()) or type(exc).__name__
            line = f"FAILED  {server.key}: {server.package}: {reason[:600]}"
        print(line, flush=True)
    print(f"{len(chosen) - failed} of {len(chosen)} servers listed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
