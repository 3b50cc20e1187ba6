"""The SSL context of a server's TLS settings: which certificates are trusted and which client certificate is shown.

Building a context reads certificate files and costs milliseconds, so :class:`~knime_mcp.net.http_pool.HttpPool`
builds one per distinct :class:`~knime_mcp.config.TlsSettings` of a run, and servers with the default settings share
one. The ``${VAR}`` references of the paths and the key's passphrase are resolved here, at connect time, and the
passphrase is handed to OpenSSL only.
"""

from __future__ import annotations

import logging
import os
import ssl

import httpcore2

from knime_mcp.config import CredentialLookup, TlsSettings, credential_password, expand_env, expand_path
from knime_mcp.errors import ConfigError
from knime_mcp.errors.certificates import note_certificate_request

__all__ = ["CA_ENV_VARIABLES", "ssl_context"]

_log = logging.getLogger(__name__)

CA_ENV_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "SSL_CERT_DIR")
"""Where the environment names the certificates to trust when no CA bundle is set, the first one set winning."""


def ssl_context(tls: TlsSettings, credentials: CredentialLookup | None, server: str) -> ssl.SSLContext:
    """A new client context for ``tls``; a file that cannot be read, or a key its passphrase does not open, is a
    ConfigError naming the setting (never the passphrase)."""
    if not tls.verify:
        _log.warning("Certificate checks are off for %s: anyone on the network path can read and change its traffic.",
                     server)  # fmt: skip
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = _trusting(tls, server)
    if tls.client_cert:
        _load_client_certificate(context, tls, credentials, server)
    else:
        # Which servers ask for the certificate it does not show, for the error when one closes without an alert.
        # truststore's context connects through the stock context it wraps. A private hook of CPython's ssl (3.8+).
        getattr(context, "_ctx", context)._msg_callback = note_certificate_request
    return context


def _trusting(tls: TlsSettings, server: str) -> ssl.SSLContext:
    """The system store (``truststore``), the default store, or a fresh context trusting the CA bundle, or else the
    certificates :data:`CA_ENV_VARIABLES` name (the system store reads ``SSL_CERT_FILE`` itself on Linux)."""
    if tls.ca_bundle:
        path, shown = _path(tls.ca_bundle, "CA bundle", server)
        extra: tuple[str, str, str] | None = ("cafile", path, f"the CA bundle {shown!r}")
    elif tls.system_trust:
        extra = None
    elif located := _ca_from_environment():
        extra = located
    else:
        return httpcore2.default_ssl_context(_trust_env=False)
    if tls.system_trust:
        import truststore

        context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    else:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # checks certificate and name, trusting nothing yet
    if extra is None:
        return context
    kind, location, shown = extra
    try:
        context.load_verify_locations(**{kind: location})
    except OSError as exc:  # ssl.SSLError is one
        raise ConfigError(
            f"The certificates to trust in {shown} cannot be read ({exc.strerror or exc}).",
            server=server,
            hint="Give a PEM file of the certificates to trust as the CA bundle"
            + ("." if tls.ca_bundle else f", or fix or unset {', '.join(CA_ENV_VARIABLES)} in the environment."),
        ) from exc
    return context


def _ca_from_environment() -> tuple[str, str, str] | None:
    """``("cafile" or "capath", location, how a message names it)`` of the first of :data:`CA_ENV_VARIABLES` set."""
    for variable in CA_ENV_VARIABLES:
        if location := os.environ.get(variable):
            return ("capath" if variable == "SSL_CERT_DIR" else "cafile"), location, variable
    return None


def _load_client_certificate(
    context: ssl.SSLContext, tls: TlsSettings, credentials: CredentialLookup | None, server: str
) -> None:
    assert tls.client_cert is not None
    cert, _ = _path(tls.client_cert, "client certificate", server)
    key = _path(tls.client_key, "client key", server)[0] if tls.client_key else None
    if tls.key_credential is not None:
        password: str | None = credential_password(tls.key_credential, credentials, server)
    elif tls.key_secret is not None:
        password = expand_env(tls.key_secret, server=server)
    else:
        password = ""  # not None, with which OpenSSL would ask for an encrypted key's passphrase on the terminal
    try:
        context.load_cert_chain(cert, key, password=password)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            "The client certificate and key cannot be loaded: the files are not a PEM certificate and its key, or "
            "the key is encrypted and its passphrase is missing or wrong.",
            server=server,
            hint="Check the Client certificate and Client key settings, and the passphrase's credential or variable.",
        ) from exc


def _path(setting: str, what: str, server: str) -> tuple[str, str]:
    """The file a path setting names, and how a message shows it (:func:`~knime_mcp.config.expand_path`); a
    ConfigError naming the setting if there is none."""
    path, shown = expand_path(setting, server=server)
    if not os.path.isfile(path):
        raise ConfigError(f"The {what} file {shown!r} does not exist.", server=server, hint=_CHECK[what])
    return path, shown


_CHECK = {
    "CA bundle": "Check the CA bundle setting.",
    "client certificate": "Check the Client certificate setting.",
    "client key": "Check the Client key setting.",
}
"""The hint for each file: the TLS setting that names it."""
