"""Parameters: the TLS settings group of the nodes that take a server (inside the server settings; for a pasted
configuration's https servers too) or an API.

The group holds file paths and a credential *name* only; the client key's passphrase is read at execution time.
"""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.config import TlsSettings
from nodes.parameters.credentials import chosen_credential, credential_names


@knext.parameter_group(label="TLS", since_version="0.5.0")
class TlsGroup:
    """How an https server's certificate is checked, and the client certificate shown to it: the server's of these
    settings, or each https server of a pasted configuration."""

    ca_bundle = knext.StringParameter(
        "CA bundle",
        "A PEM file of the CA certificates to trust instead of the default ones, e.g. your organisation's CA; may "
        "be a ${VARIABLE}. Empty: the file SSL_CERT_FILE, REQUESTS_CA_BUNDLE or SSL_CERT_DIR names (the first "
        "one set), else the default trusted CAs.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )
    system_trust = knext.BoolParameter(
        "Use the system trust store",
        "Trust the certificates installed in the operating system (Windows and macOS certificate stores, OpenSSL's "
        "on Linux), as browsers do; needed where a company installs its CA there.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )
    client_cert = knext.StringParameter(
        "Client certificate",
        "A PEM file of the certificate to show a server that asks for one (mutual TLS); may be a ${VARIABLE}.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )
    client_key = knext.StringParameter(
        "Client key",
        "The PEM file of the client certificate's private key, if it is not in the certificate's file.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )
    key_credential = knext.StringParameter(
        "Client key passphrase (credential)",
        "The credential whose password unlocks an encrypted client key. Empty: the key is not encrypted.",
        "",
        choices=credential_names,
        since_version="0.5.0",
        is_advanced=True,
    )
    skip_verification = knext.BoolParameter(
        "Skip certificate verification (insecure)",
        "Do not check the server's certificate at all: anyone on the network path can then read and change what "
        "is sent, secrets included. Only for a test server you set here; never applies to servers from data.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )


def tls_settings(group: TlsGroup) -> TlsSettings:
    """The core's TLS settings of the group; raises ConfigError for settings that cannot work together. The
    passphrase credential counts only with a client certificate: newer KNIME dialogs fill a credential choice
    with the first credential by themselves."""
    client_cert = group.client_cert.strip() or None
    return TlsSettings(
        ca_bundle=group.ca_bundle.strip() or None,
        system_trust=group.system_trust,
        client_cert=client_cert,
        client_key=group.client_key.strip() or None,
        key_credential=chosen_credential(group.key_credential) if client_cert else None,
        verify=not group.skip_verification,
    )
