"""The command line's TLS options: a server's CA bundle, the system trust store, a client certificate, --insecure.

A server named on one's own command line is one a person set, so ``--insecure`` may turn certificate checks off,
with a warning on stderr each run.
"""

from __future__ import annotations

import argparse
import sys

from knime_mcp.config import TlsSettings

__all__ = ["add_tls_options", "tls_settings"]


def add_tls_options(options: argparse.ArgumentParser) -> None:
    group = options.add_argument_group(
        "TLS", "How an https server's certificate is checked (default: the trusted CAs of Python's default store)."
    )
    group.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help="a PEM file of the CA certificates to trust instead (default: SSL_CERT_FILE, REQUESTS_CA_BUNDLE or "
        "SSL_CERT_DIR if set); may be ${VAR}",
    )
    group.add_argument(
        "--system-trust", action="store_true", help="trust the operating system's certificate store (truststore)"
    )
    group.add_argument(
        "--client-cert", metavar="FILE", help="a PEM client certificate for servers that ask for one; may be ${VAR}"
    )
    group.add_argument("--client-key", metavar="FILE", help="the PEM file of its key, if separate; may be ${VAR}")
    group.add_argument(
        "--client-key-password",
        metavar="'${VAR}'",
        help="the environment variable holding an encrypted client key's passphrase, written as ${VAR}",
    )
    group.add_argument(
        "--insecure", action="store_true", help="do not check the server's certificate at all (a warning is printed)"
    )


def tls_settings(args: argparse.Namespace) -> TlsSettings:
    """The TLS settings the options describe; ``--insecure`` warns on stderr, once per command however many servers
    and documents the options apply to (each host is named in its own log warning when it is reached)."""
    tls = TlsSettings(
        ca_bundle=args.ca_bundle,
        system_trust=args.system_trust,
        client_cert=args.client_cert,
        client_key=args.client_key,
        key_secret=args.client_key_password,
        verify=not args.insecure,
    )
    if args.insecure and not getattr(args, "_insecure_said", False):
        args._insecure_said = True
        print(
            "Warning: --insecure: the server's certificate is not checked, so anyone on the network path can read "
            "and change what is sent, secrets included.",
            file=sys.stderr,
        )
    return tls
