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
from knime_mcp.tools.permissions import GRANT_ADVICE

__all__ = ["CLI_WORDS", "cli_words", "print_notes"]

CLI_WORDS: tuple[tuple[str, str], ...] = (
    ("the transport setting", "--transport"),
    ("aise the connect timeout", "aise --connect-timeout"),
    ("aise the call timeout", "aise --call-timeout"),
    ("for the node's own timeout", "for --call-timeout"),
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
        "only the Agent Prompter answers them, with its chat model, when 'Answer sampling requests with the chat "
        "model' is on; on the command line knime-mcp answers none.",
        "on the command line knime-mcp answers none (in KNIME, the Agent Prompter node can).",
    ),
    ("(the KNIME credential, or --client-id", "(--client-id"),
    (
        "(credential)' setting (a KNIME credential), or in the environment variable",
        "(credential)' setting (in KNIME), or, for knime-mcp, in the environment variable",
    ),
    ("the environment KNIME (or this command) runs in", "the environment of this command"),
    ("the environment KNIME runs in", "the environment of this command"),
    ("a KNIME credential cannot stand for", "knime-mcp cannot take"),
    (
        "give that CA's PEM file as the CA bundle (or in SSL_CERT_FILE), or turn on Use the system trust store",
        "give that CA's PEM file with --ca-bundle (or in SSL_CERT_FILE), or pass --system-trust",
    ),
    (
        "Check the TLS settings (CA bundle, Use the system trust store, Client certificate).",
        "Check --ca-bundle, --system-trust and --client-cert.",
    ),
    (
        "Set Client certificate (and Client key) to a certificate and key the server accepts.",
        "Give --client-cert (and --client-key) with a certificate and key the server accepts.",
    ),
    ("Check the CA bundle setting.", "Check --ca-bundle."),
    ("Check the Client certificate setting.", "Check --client-cert."),
    ("Check the Client key setting.", "Check --client-key."),
    ("the certificates to trust as the CA bundle", "the certificates to trust with --ca-bundle"),
    (
        "Check the Client certificate and Client key settings, and the passphrase's credential or variable.",
        "Check --client-cert and --client-key, and the variable of --client-key-password.",
    ),
    (
        "Give the client certificate's PEM file too, or clear the key settings.",
        "Give --client-cert too, or leave out --client-key and --client-key-password.",
    ),
    (
        "Turn certificate checks back on, or clear the CA bundle and the system trust store setting.",
        "Leave out --insecure, or --ca-bundle and --system-trust.",
    ),
    (
        "Store the passphrase in an environment variable or a KNIME credential; settings are saved in clear.",
        "Put the passphrase in an environment variable and name it: --client-key-password '${VAR}'.",
    ),
    (
        "Call the tool again with arguments that match its input schema.",
        "Give --args that fit the tool's input schema, which 'knime-mcp tools --format json' shows.",
    ),
    (GRANT_ADVICE, "with "),
)
"""``(the core's phrase, the command line's)``, applied in order."""


def cli_words(text: str) -> str:
    """``text`` with every phrase that names a KNIME setting replaced by the flag that does the same."""
    for setting, flag in CLI_WORDS:
        text = text.replace(setting, flag)
    return text


def print_notes(notes: Iterable[str], err: TextIO) -> None:
    """A listing's notes (tools left out, parameters dropped, servers to check), one ``Note:`` line each; the tools
    renamed for a clash of names share one, which names ``--prefix`` once."""
    from knime_mcp.tools.names import RENAMED_HINT

    renamed = []
    for note in notes:
        if note.endswith(RENAMED_HINT):
            renamed.append(note.removesuffix(RENAMED_HINT).strip().rstrip(";."))
        else:
            print(f"Note: {one_line(cli_words(note))}", file=err)
    if renamed:
        said = "; ".join(renamed)
        print(f"Note: {len(renamed)} tool(s) renamed, as their names clash: {one_line(said)}. Pass --prefix (or "
              "list the servers apart) to choose distinct names.", file=err)  # fmt: skip
