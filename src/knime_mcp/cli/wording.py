"""The command line's words for advice the core gives in KNIME's: "the connect timeout" becomes ``--connect-timeout``.

The core's errors, warnings and notes speak to a workflow builder, who changes node settings; on the command line
the same advice names the flags. :func:`cli_words` rewrites every line the CLI prints on stderr (errors, the SDK's
and the core's log records, a listing's notes), by the core's exact wording: a test checks that each phrase below
still stands in the core, so a reworded one cannot silently slip through in KNIME's words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from knime_mcp.cli.render import one_line

__all__ = ["CLI_WORDS", "cli_words", "print_notes"]

CLI_WORDS: tuple[tuple[str, str], ...] = (
    ("the transport setting", "--transport"),
    ("aise the connect timeout", "aise --connect-timeout"),
    ("aise the call timeout", "aise --call-timeout"),
    (
        "Raise the iteration limit, or let the node ask for a final answer when the limit is reached.",
        "Raise --iteration-limit, or pass --on-limit final-answer.",
    ),
    (
        "Set the authentication (bearer token, header or basic) and check that the credential is valid.",
        "Send the credential with --header 'Authorization: Bearer ${VAR}' and check that it is valid.",
    ),
    ("put the API key into a KNIME credential", "name the variable that holds the API key with --api-key-env"),
    (
        "Connect the credentials flow variable that holds the API key to this node.",
        "Name the environment variable that holds the API key with --api-key-env.",
    ),
    ("ask the workflow builder to allow tools that write", "pass --destructive block or allow"),
    ("ask the workflow builder to allow destructive tools", "pass --destructive allow to allow destructive tools"),
    (
        "ask the workflow builder to allow unannotated or destructive tools",
        "leave out --unannotated-destructive, or pass --destructive allow",
    ),
    ("ask the workflow builder to change the deny-list", "change --deny"),
    ("ask the workflow builder to add it to the allow-list", "add it to --allow"),
    (
        "run the provider again here, or trust every server in the tools table (the node setting, or "
        "trust_all_servers in Python)",
        "list its tools again here (knime-mcp tools or http-tools), or pass --trust-all-servers",
    ),
    ("while a workflow runs (answering with defaults is off)", "while knime-mcp runs (--elicitation decline)"),
    ("let the node (or --elicitation defaults) answer with the defaults", "pass --elicitation defaults"),
    ("set the Authentication setting", "pass --auth and --secret"),
    (
        "use basic authentication with a KNIME credential instead",
        "send it as --header 'Authorization: Basic ${VAR}' instead",
    ),
    ("Raise the request timeout of the chat model.", "Raise --request-timeout."),
    ("Raise the maximum number of tokens of the chat model.", "Raise --max-tokens."),
    (
        "Call the tool again with arguments that match its input schema.",
        "Give --args that fit the tool's input schema, which 'knime-mcp tools --format json' shows.",
    ),
)
"""``(the core's phrase, the command line's)``, applied in order."""


def cli_words(text: str) -> str:
    """``text`` with every phrase that names a KNIME setting replaced by the flag that does the same."""
    for setting, flag in CLI_WORDS:
        text = text.replace(setting, flag)
    return text


def print_notes(notes: Iterable[str], err: TextIO) -> None:
    """A listing's notes (tools left out, parameters dropped, servers to check), one ``Note:`` line each."""
    for note in notes:
        print(f"Note: {one_line(cli_words(note))}", file=err)
