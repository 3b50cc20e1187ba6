"""The command line's ``http-tools`` command (also spelt ``utcp-tools``): an OpenAPI document's operations or a UTCP
manual's tools, and webhooks, as a tools table.

Layer: beside :mod:`knime_mcp.cli.main`, which parses the words, writes the table as ``tools`` does and turns errors
into exit codes; this module adds the command's arguments to its parser and lists the tools with
:func:`knime_mcp.calls.listing.list_http_tools`, importing it only when the command runs.

    knime-mcp http-tools https://petstore3.swagger.io/api/v3/openapi.json --include Pet --format json
    knime-mcp http-tools openapi.yaml --base-url http://127.0.0.1:8080 --auth header --secret '${API_KEY}'
    knime-mcp http-tools --webhooks hooks.csv --format parquet --output tools.parquet
    knime-mcp http-tools --base-url http://127.0.0.1:8000   # its document found at /openapi.json, /v3/api-docs, …
    knime-mcp utcp-tools http://127.0.0.1:8000/utcp --auth header --secret '${API_KEY}'   # the key's name from it
"""

from __future__ import annotations

import argparse
import csv
from typing import TYPE_CHECKING, Any

from knime_mcp.cli.tls_options import add_tls_options, tls_settings
from knime_mcp.config import DEFAULT_TIMEOUTS, ENV_REF
from knime_mcp.config.limits import MAX_MESSAGE_BYTES
from knime_mcp.errors import ConfigError, UsageError
from knime_mcp.http.document import MAX_DOCUMENT_BYTES

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ToolListing
    from knime_mcp.config import AuthRef
    from knime_mcp.http.openapi import DocumentApiKey
    from knime_mcp.http.webhooks import WebhookRow
    from knime_mcp.tools.policy import ToolPolicy

__all__ = [
    "API_AUTH", "HTTP_COMMAND", "UTCP_COMMAND", "add_api_options", "add_http_command", "api_auth", "api_listing",
    "http_listing", "max_document_bytes", "max_response_bytes",
]  # fmt: skip

HTTP_COMMAND = "http-tools"
UTCP_COMMAND = "utcp-tools"
"""Another name of ``http-tools``, for those who look for UTCP manuals by that name."""
API_AUTH = ("bearer", "basic", "header", "query")
"""What an API's tools may send: ``--auth`` of ``http-tools``, and of a command given ``--openapi``."""


def add_http_command(commands: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``http-tools`` to the CLI's subparsers; ``parents`` hold the common options and those of ``tools`` that
    shape and write the table."""
    http = commands.add_parser(
        HTTP_COMMAND,
        aliases=[UTCP_COMMAND],
        parents=parents,
        help="list an OpenAPI document's operations or a UTCP manual's tools (and webhooks) as a tools table",
    )
    http.set_defaults(command=HTTP_COMMAND)  # the same command under either name
    http.add_argument(
        "source",
        nargs="?",
        metavar="SOURCE",
        help="the API's description, an OpenAPI 3.0/3.1 document or a UTCP manual: an http(s) URL or a file (none, "
        "with --base-url: looked for there)",
    )
    http.add_argument(
        "--webhooks",
        metavar="FILE.csv",
        help="webhooks to add: columns Name, Description, URL, Method, Input Schema, Output Schema",
    )
    add_api_options(http, base_url="--base-url", auth="the API's authentication (never sent to webhooks)")
    http.add_argument("--connect-timeout", type=float, default=DEFAULT_TIMEOUTS.connect, metavar="SECONDS")
    http.add_argument("--call-timeout", type=float, default=DEFAULT_TIMEOUTS.call, metavar="SECONDS")
    add_tls_options(http)
    return http


def add_api_options(parser: argparse.ArgumentParser, *, base_url: str, auth: str | None) -> None:
    """The options of an OpenAPI document's API: ``base_url`` names the flag of its base URL; ``auth``, the title of
    the authentication options, adds ``--auth`` (None: a command with server options has its own, which takes these
    kinds too)."""
    parser.add_argument(
        base_url,
        dest="api_base_url",
        metavar="URL",
        help="where the API's requests go (default: the document's servers; a UTCP manual's tools keep their URLs); "
        "the credential goes only here or to the origin the document was read from",
    )
    group = parser.add_argument_group(auth or "the API's authentication (--openapi; --auth is above)")
    if auth:
        group.add_argument("--auth", choices=API_AUTH, help="what the API's tools send")
    group.add_argument(
        "--secret", metavar="'${VAR}'", help="the token, password or API key, as an environment reference"
    )
    group.add_argument("--user", help="basic: the user name (may be a ${VAR} reference)")
    group.add_argument(
        "--key-name",
        metavar="NAME",
        help="header or query parameter carrying the key (default: the document's or manual's)",
    )
    parser.add_argument(
        "--max-document-mb",
        type=float,
        metavar="MB",
        help=f"the largest OpenAPI document or UTCP manual read (default: {MAX_DOCUMENT_BYTES / 2**20:g})",
    )
    parser.add_argument(
        "--max-response-mb",
        type=float,
        metavar="MB",
        help=f"the largest response a tool of the API (or a webhook) reads; a larger one is a tool error "
        f"(default: {MAX_MESSAGE_BYTES / 2**20:g})",
    )


def http_listing(args: argparse.Namespace, policy: ToolPolicy) -> ToolListing:
    """The tools ``http-tools`` lists; usage errors first, before the document is read."""
    from knime_mcp.config import Timeouts

    if not args.source and not args.webhooks and not args.api_base_url:
        raise UsageError(
            "http-tools needs an OpenAPI document (SOURCE), --base-url URL to find one at, --webhooks FILE.csv, or a "
            "document and webhooks; a UTCP manual is a document here too."
        )
    max_bytes = max_document_bytes(args)
    auth = api_auth(args)
    rows = _webhook_rows(args.webhooks) if args.webhooks else []
    from knime_mcp.mcp.sync import run_sync

    return run_sync(
        api_listing,
        args,
        "--base-url",
        args.source,
        auth=auth,
        timeouts=Timeouts(connect=args.connect_timeout, call=args.call_timeout),
        webhooks=rows,
        trust_webhooks=True,  # a file named on one's own command line is one's own, like a server URL there
        include=args.include,
        exclude=args.exclude,
        prefix=args.prefix,
        schema_mode=args.schema_mode,
        policy=policy,
        max_document_bytes=max_bytes,
        tls=tls_settings(args),
        max_response_bytes=max_response_bytes(args),
    )


async def api_listing(args: argparse.Namespace, flag: str, source: str | None, **options: Any) -> ToolListing:
    """:func:`~knime_mcp.calls.listing.list_http_tools` at ``--base-url`` (or ``flag``, the command's name for it),
    its error and notes naming ``flag`` where they name the HTTP Tool Provider's *Base URL* setting."""
    from knime_mcp.calls.listing import ToolListing, list_http_tools

    try:
        listing = await list_http_tools(source, base_url=args.api_base_url, **options)
    except ConfigError as exc:
        hint = exc.hint and _base_url_words(exc.hint, flag)
        raise ConfigError(_base_url_words(exc.message, flag), server=exc.server, hint=hint) from exc
    return ToolListing(listing.tools, [_base_url_words(note, flag) for note in listing.notes])


def _base_url_words(text: str, flag: str) -> str:
    """``text`` with the HTTP Tool Provider's *Base URL* setting named as the command's ``flag``."""
    for setting, words in (("Set Base URL to", f"Pass {flag}"), ("set Base URL to", f"pass {flag}"),
                           ("(set it to", f"(pass {flag}"), ("a Base URL you set", f"a base URL you set ({flag})"),
                           ("agent and caller nodes call it", "knime-mcp calls it")):  # fmt: skip
        text = text.replace(setting, words)
    return text


def max_document_bytes(args: argparse.Namespace) -> int:
    """``--max-document-mb`` in bytes; a usage error unless it is more than 0."""
    if args.max_document_mb is None:
        return MAX_DOCUMENT_BYTES
    if args.max_document_mb <= 0:
        raise UsageError("--max-document-mb must be more than 0.")
    return round(args.max_document_mb * 2**20)


def max_response_bytes(args: argparse.Namespace) -> int | None:
    """``--max-response-mb`` in bytes (None: the default); a usage error unless it is more than 0."""
    if args.max_response_mb is None:
        return None
    if args.max_response_mb <= 0:
        raise UsageError("--max-response-mb must be more than 0.")
    return max(1, round(args.max_response_mb * 2**20))


def api_auth(args: argparse.Namespace) -> AuthRef | DocumentApiKey | None:
    """What the API's tools send, from ``--auth`` (one of :data:`API_AUTH`; any other kind is a server's) and its
    options; the secret only as an environment reference."""
    from knime_mcp.config import AuthRef
    from knime_mcp.http.openapi import DocumentApiKey

    kind = args.auth if args.auth in API_AUTH else None
    if kind is None:
        if args.secret or args.key_name or args.user:
            raise UsageError(f"--secret, --user and --key-name go with --auth {'|'.join(API_AUTH)}.")
        return None
    if not args.secret or not ENV_REF.fullmatch(args.secret):
        raise UsageError(
            f"--auth {kind} needs --secret as an environment reference such as '${{API_KEY}}'.",
            hint="Command lines end up in shell histories and process lists; put the secret in the environment.",
        )
    if kind in ("header", "query") and not args.key_name:
        return DocumentApiKey(kind=kind, secret=args.secret)
    where = {"header": {"header": args.key_name}, "query": {"parameter": args.key_name}}.get(kind, {})
    return AuthRef(kind=kind, secret=args.secret, username=args.user, **where)


def _webhook_rows(path: str) -> list[WebhookRow]:
    from knime_mcp.http.webhooks import check_webhook_columns, webhook_rows

    try:
        with open(path, encoding="utf-8", newline="") as file:
            reader = csv.DictReader(file)
            check_webhook_columns(reader.fieldnames or [])
            return webhook_rows((f"line {reader.line_num}", row) for row in reader)
    except OSError as exc:
        raise ConfigError(f"Cannot read --webhooks file {path!r}: {exc.strerror or exc}.") from exc
