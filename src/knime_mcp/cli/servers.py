"""The command line's server options: the words that name an MCP server and how to reach it, as a ServerSpec.

Secrets appear only as ``${VAR}`` references: a literal one in a header, an environment entry or an OAuth client
secret is refused, since command lines end up in shell histories and process lists.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import replace

from knime_mcp.cli.config_inputs import bind_inputs
from knime_mcp.cli.grant_options import add_grant_options, grant_secrets, grant_settings
from knime_mcp.cli.tls_options import add_tls_options, tls_settings
from knime_mcp.config import ENV_REF, AuthRef, ServerSpec, Timeouts, demo_server_spec, refuse_websocket
from knime_mcp.errors import UsageError

__all__ = [
    "HOST_PORT", "OAUTH", "SignInPrompt", "check_server_word", "check_tool_word", "common_options",
    "configured_servers", "configured_tags", "options_after_command", "server_options", "server_spec", "split_command",
]  # fmt: skip

OAUTH = ("oauth", "oauth-client-credentials", "oauth-workload-identity", "oauth-id-jag")
"""The kinds of ``--auth`` for an MCP server."""

SignInPrompt = Callable[[str], None] | None
"""How a command shows a person where to sign in to an OAuth server; None in a batch run."""


def common_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "-v", "--verbose", action="store_true", help="show the details (tracebacks) of warnings the SDK logs"
    )
    return options


def server_options(*, api_auth: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The options of an MCP server; ``api_auth``: the kinds ``--auth`` also takes, for an API's tools
    (``--openapi``)."""
    options = argparse.ArgumentParser(add_help=False, parents=[common_options()])
    group = options.add_argument_group(
        "server",
        "Every word after '--' belongs to the stdio server's command line, options too: put knime-mcp's options "
        "before the '--'.",
    )
    group.add_argument("--transport", choices=["auto", "streamable-http", "sse", "stdio"], default="auto")
    group.add_argument(
        "--config",
        metavar="FILE",
        help="the servers of an MCP configuration file as Claude Desktop, Cursor (mcpServers) or VS Code (servers) "
        "write it; secrets only as ${VAR} references (a literal one is refused)",
    )
    group.add_argument(
        "--server",
        dest="config_server",
        metavar="NAME",
        help="the server of --config to use (default: all of them; a command that takes one needs it when there "
        "are several)",
    )
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra HTTP header; secrets only as ${VAR} environment references (a literal one is refused)",
    )
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment of a stdio server, which inherits only HOME, LOGNAME, PATH, SHELL, TERM and USER; "
        "secrets only as ${VAR} references",
    )
    group.add_argument(
        "--auth",
        choices=[*OAUTH, *api_auth],
        help="OAuth: sign in (in a browser; see 'knime-mcp login'), the client credentials grant, workload identity "
        "(--token-file) or enterprise identity (ID-JAG, --identity-assertion); without it, a "
        "server with a stored sign-in uses that"
        + (f"; {', '.join(api_auth)}: what the tools of --openapi send" if api_auth else ""),
    )
    group.add_argument(
        "--client-id",
        help="OAuth: a client registered beforehand, or the https URL of a client ID metadata document (default: "
        "knime-mcp registers)",
    )
    group.add_argument(
        "--client-secret", metavar="'${VAR}'", help="OAuth: the client's secret, as an environment reference"
    )
    group.add_argument(
        "--scope", help="OAuth: the scopes to ask for, space-separated (client credentials; a sign-in where the "
        "server names none)",
    )
    group.add_argument(
        "--issuer",
        metavar="URL",
        help="OAuth: the authorization server's issuer, the only one knime-mcp signs in at or sends the client "
        "secret to (default: the one the MCP server names; a client secret stays with the first one it was used with)",
    )
    group.add_argument(
        "--private-key",
        metavar="'${VAR}'",
        help="OAuth client credentials: sign in with the client's private key (private_key_jwt; RS256 for RSA, ES256 "
        "for P-256) instead of a secret: an environment reference holding the PEM key or the path of a PEM file",
    )
    group.add_argument(
        "--no-dpop",
        action="store_true",
        help="OAuth: never bind tokens with DPoP (RFC 9449), even where the authorization server offers it",
    )
    group.add_argument("--connect-timeout", type=float, default=Timeouts().connect, metavar="SECONDS")
    group.add_argument("--call-timeout", type=float, default=Timeouts().call, metavar="SECONDS")
    group.add_argument(
        "--progress-timeout",
        type=float,
        metavar="SECONDS",
        help="longest call while the server reports progress: each progress report (or new task status) restarts "
        "the call timeout, up to this many seconds in all (default: the call timeout is final)",
    )
    group.add_argument("--name", help="display name of the server")
    group.add_argument(
        "--roots",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder a stdio server may see (its roots); repeat for more (default: none)",
    )
    group.add_argument(
        "--elicitation",
        choices=["decline", "defaults"],
        default="decline",
        help="a form a tool asks for while it runs: decline it (the call fails), or answer with the form's "
        "defaults when every field has one",
    )
    add_grant_options(options)
    add_tls_options(options)
    return options


def add_task_option(parser: argparse.ArgumentParser) -> None:
    """``--tasks`` (*Run long tools as tasks*) for the commands that call tools: call, call-table, agent, chat."""
    parser.add_argument(
        "--tasks",
        action="store_true",
        help="run long tools as tasks: a tool whose taskSupport is 'optional' runs as an MCP task too, polled "
        "until it ends, its status shown as progress (a tool that requires a task always does)",
    )


def _pairs(values: Sequence[str], separator: str, what: str) -> dict[str, str]:
    """``NAME<separator>VALUE`` words as a dict; a malformed one is named by its position, never quoted, because a
    header or environment entry missing its name is often a bare secret."""
    pairs: dict[str, str] = {}
    for number, value in enumerate(values, start=1):
        name, found, rest = value.partition(separator)
        if not found or not name.strip():
            form = f"NAME{separator.strip() or separator}VALUE"
            raise UsageError(f"{what} {number} is not of the form {form} (its text is not shown: it may be a secret).")
        pairs[name.strip()] = rest.strip() if separator == ":" else rest
    return pairs


def _headers(values: Sequence[str]) -> dict[str, str]:
    """The ``--header`` values; a credential header must reference its secret as ``${VAR}``, as in node settings."""
    from knime_mcp.config import literal_secret_headers

    headers = _pairs(values, ":", "Header")
    for name in literal_secret_headers(headers):
        words = headers[name].split()
        scheme = words[0] + " " if len(words) > 1 else ""
        raise UsageError(
            f"Header {name!r} holds a literal secret; command lines end up in shell histories and process lists.",
            hint=f"Put the secret into an environment variable and write --header '{name}: {scheme}${{VAR}}' "
            "(in single quotes, so the shell leaves ${VAR} to knime-mcp).",
        )
    return headers


def _environment(values: Sequence[str]) -> dict[str, str]:
    """The ``--env`` values; one whose name marks a credential must reference its secret as ``${VAR}``."""
    from knime_mcp.config import literal_secret_env

    env = _pairs(values, "=", "Environment entry")
    for name in literal_secret_env(env):
        raise UsageError(
            f"Environment entry {name!r} holds a literal secret; command lines end up in shell histories and "
            "process lists.",
            hint=f"Put the secret into an environment variable and write --env '{name}=${{VAR}}' "
            "(in single quotes, so the shell leaves ${VAR} to knime-mcp).",
        )
    return env


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split ``[options] -- command words [-- more options]`` into options and the stdio command."""
    if "--" not in argv:
        return argv, []
    start = argv.index("--")
    rest = argv[start + 1 :]
    if "--" in rest:
        end = rest.index("--")
        return argv[:start] + rest[end + 1 :], rest[:end]
    return argv[:start], rest


def options_after_command(command: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """The warning for words of a stdio server's command line that look like options of the knime-mcp command
    ``parser`` parses (``--format json`` after ``-- npx server``): they go to the server, which a person rarely
    means; None when there are none. ``--help`` and ``--verbose``, which most servers take too, are left out."""
    own = {flag for flag in parser._option_string_actions if flag.startswith("--")} - {"--help", "--verbose"}
    stray = [word for word in command if word.partition("=")[0] in own]
    if not stray:
        return None
    return (
        f"{', '.join(map(repr, stray))} after '--' went to the server's command line, not to knime-mcp "
        f"{parser.prog.split()[-1]}; put knime-mcp's options before the '--'"
    )


_LAUNCHERS = frozenset({"npx", "uvx", "uv", "node", "python", "python3", "docker", "deno", "bun", "pipx"})
"""Programs that start servers, never names of tools."""


def check_tool_word(word: str, command: str) -> None:
    """A TOOL that names a file or folder, or a program that starts servers, is a stdio server's command line
    without its ``--`` (``knime-mcp call ./server.py``): refused before the demo server is asked for such a tool."""
    if os.path.exists(word) or (word in _LAUNCHERS and shutil.which(word)):
        raise UsageError(
            f"{word!r} is a file or program, not the name of a tool; a stdio server's command line follows '--'.",
            hint=f"knime-mcp {command} -- {shlex.quote(word)} … -- TOOL …",
        )


HOST_PORT = re.compile(r"^[\w.-]+:\d+(/\S*)?$")
"""``localhost:8000/mcp``: a URL without its scheme, never a command anyone means to run."""


def check_server_word(text: str) -> None:
    """A server word that cannot be meant as given: a URL without its scheme, or a WebSocket server's."""
    refuse_websocket(text)
    if HOST_PORT.match(text) or text.startswith(("localhost/", "127.0.0.1/")):
        raise UsageError(f"{text!r} is not a URL: it lacks http:// or https://.", hint=f"Did you mean 'http://{text}'?")


def configured_servers(target: Sequence[str], args: argparse.Namespace) -> dict[str, ServerSpec]:
    """The servers of ``--config FILE`` by their keys, only the one ``--server NAME`` names if given, the https
    ones with the TLS options (a person gave both), their inputs bound (:func:`bind_inputs`); empty without
    ``--config``."""
    if getattr(args, "config", None) is None:
        if getattr(args, "config_server", None) is not None:
            raise UsageError("--server NAME chooses a server of --config FILE; add --config.")
        return {}
    from knime_mcp.config import parse_pasted

    if target:
        raise UsageError("Give either --config FILE or a server, not both.")
    tls = tls_settings(args)
    specs = {
        name: replace(spec, tls=tls) if spec.target.startswith("https://") else spec
        for name, spec in parse_pasted(_config_text(args), credentials=False).items()
    }
    if args.config_server is not None:
        if args.config_server not in specs:
            raise UsageError(
                f"{args.config!r} has no server {args.config_server!r}.", hint=f"It has: {', '.join(map(repr, specs))}."
            )
        specs = {args.config_server: specs[args.config_server]}
    return bind_inputs(specs)


def configured_tags(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    """The ``"tags"`` of each server of ``--config FILE`` by their keys (:func:`~knime_mcp.config.pasted.pasted_tags`);
    empty without ``--config``."""
    if getattr(args, "config", None) is None:
        return {}
    from knime_mcp.config.pasted import pasted_tags

    return pasted_tags(_config_text(args))


def _config_text(args: argparse.Namespace) -> str:
    """The text of ``--config FILE``, a little longer than the longest read, so that a longer one is refused."""
    from knime_mcp.config import MAX_PASTED_CHARS

    try:
        with open(args.config, encoding="utf-8") as file:
            return file.read(MAX_PASTED_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the MCP configuration {args.config!r}: {exc}") from exc


def server_spec(target: Sequence[str], args: argparse.Namespace) -> ServerSpec:
    """The ServerSpec the command line describes: the one of ``--config``, or else of the words; none of either
    means the bundled demo server."""
    if configured := configured_servers(target, args):
        if len(configured) > 1:
            raise UsageError(
                f"{args.config!r} describes {len(configured)} servers; {args.command} uses one.",
                hint=f"Choose it with --server NAME, one of {', '.join(map(repr, configured))}.",
            )
        return next(iter(configured.values()))
    if not target:
        return demo_server_spec()
    text = target[0] if len(target) == 1 and target[0].startswith(("http://", "https://")) else shlex.join(target)
    return ServerSpec(
        target=text,
        transport=args.transport,
        name=args.name,
        headers=_headers(args.header),
        env=_environment(args.env),
        auth=_auth(text, args),
        timeouts=Timeouts(connect=args.connect_timeout, call=args.call_timeout, progress_max=args.progress_timeout),
        roots=tuple(os.path.abspath(root) for root in args.roots),
        tls=tls_settings(args),
    )


def _auth(target: str, args: argparse.Namespace) -> AuthRef:
    """``--auth`` and its options; without ``--auth``, OAuth sign-in for a server with a stored sign-in."""
    kind = args.auth if args.auth in OAUTH else None
    if kind is None and target.startswith(("http://", "https://")):
        from knime_mcp.auth import OAuthClient, token_store

        stored = token_store(target, OAuthClient(client_id=args.client_id)).has_tokens()
        kind = "oauth" if stored or args.command == "login" else None
    grants = grant_settings(kind, args)
    if kind is None:
        if args.issuer is not None or args.private_key is not None:
            option = "--issuer" if args.issuer is not None else "--private-key"
            raise UsageError(f"{option} goes with OAuth: add --auth oauth or --auth oauth-client-credentials.")
        return AuthRef()
    key = args.private_key
    if key is not None and (kind != "oauth-client-credentials" or args.client_secret is not None):
        raise UsageError("--private-key goes with --auth oauth-client-credentials, instead of --client-secret.")
    if kind == "oauth-client-credentials" and not (args.client_id and (args.client_secret or key)):
        raise UsageError(
            "--auth oauth-client-credentials needs --client-id, and --client-secret or --private-key '${VAR}'."
        )
    for option, value in (("--client-secret", args.client_secret), ("--private-key", key), *grant_secrets(args)):
        if value is not None and not ENV_REF.fullmatch(value):
            raise UsageError(
                f"{option} must be an environment reference such as '${{CLIENT_SECRET}}', not the secret itself.",
                hint="Command lines end up in shell histories and process lists; put the secret in the environment.",
            )
    return AuthRef(
        kind=kind,
        client_id=args.client_id,
        secret=key or args.client_secret,
        scope=args.scope,
        issuer=args.issuer,
        client_auth="private_key_jwt" if key else None,
        dpop="off" if args.no_dpop else None,
        **grants,
    )
