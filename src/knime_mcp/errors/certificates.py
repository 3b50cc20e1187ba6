"""Certificate failures in words: which host, what failed, and which TLS setting fixes it.

OpenSSL reports a failed check as a code and a terse text (``certificate verify failed: self-signed certificate in
certificate chain``) that a KNIME user cannot act on; :func:`certificate_error` names the host and the setting
(*CA bundle*, *Use the system trust store*, *Client certificate*) instead. Used by :mod:`knime_mcp.errors.translation`.
"""

from __future__ import annotations

import ssl

from knime_mcp.errors.tree import ServerConnectError

__all__ = ["certificate_error"]

_TRUST_HINT = (
    "If the server's certificate comes from your organisation's own CA, give that CA's PEM file as the CA bundle "
    "(or in SSL_CERT_FILE), or turn on Use the system trust store if the CA is installed on this machine."
)

_UNKNOWN_ISSUER = frozenset({2, 18, 19, 20, 21})
"""X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, DEPTH_ZERO_SELF_SIGNED_CERT, SELF_SIGNED_CERT_IN_CHAIN,
UNABLE_TO_GET_ISSUER_CERT_LOCALLY, UNABLE_TO_VERIFY_LEAF_SIGNATURE."""
_OUT_OF_DATE = frozenset({9, 10})
"""X509_V_ERR_CERT_NOT_YET_VALID, CERT_HAS_EXPIRED."""
_WRONG_NAME = frozenset({62, 64})
"""X509_V_ERR_HOSTNAME_MISMATCH, IP_ADDRESS_MISMATCH."""
_CLIENT_CERT_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "the server requires a client certificate and none was sent",
    "SSLV3_ALERT_BAD_CERTIFICATE": "the server refused the client certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "the server does not trust the client certificate's issuer",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "the server refused the client certificate",
}


def certificate_error(exc: BaseException, server: str) -> ServerConnectError | None:
    """The error for a TLS failure in ``exc`` or its causes; None if it is none."""
    failure = _ssl_failure(exc)
    if failure is None:
        return None
    host = _host(exc)
    at = f" of {host}" if host else ""
    if isinstance(failure, ssl.SSLCertVerificationError):
        code = failure.verify_code
        if code in _UNKNOWN_ISSUER:
            return ServerConnectError(
                f"The certificate{at} was not issued by a trusted CA (unknown issuer: it is self-signed or signed by "
                "a CA this machine does not trust).",
                server=server,
                hint=_TRUST_HINT,
            )
        if code in _OUT_OF_DATE:
            return ServerConnectError(
                f"The certificate{at} has expired (or is not valid yet).",
                server=server,
                hint="The server's administrators must renew its certificate; check this machine's clock too.",
            )
        if code in _WRONG_NAME:
            return ServerConnectError(
                f"The certificate{at} is for another name (wrong name): it does not list {host or 'the host'}.",
                server=server,
                hint="Use the host name the certificate is issued for in the URL, or ask the server's administrators "
                "for a certificate that lists this name.",
            )
        return ServerConnectError(
            f"The certificate{at} could not be verified: {failure.verify_message}.", server=server, hint=_TRUST_HINT
        )
    if (reason := _CLIENT_CERT_ALERTS.get(failure.reason or "")) is not None:
        return ServerConnectError(
            f"TLS with {host or 'the server'} failed: {reason}.",
            server=server,
            hint="Set Client certificate (and Client key) to a certificate and key the server accepts.",
        )
    return ServerConnectError(
        f"TLS with {host or 'the server'} failed ({failure.reason or failure}).",
        server=server,
        hint="Check the TLS settings (CA bundle, Use the system trust store, Client certificate).",
    )


def _host(exc: BaseException) -> str | None:
    """The host an httpx2 request error was for."""
    try:
        return str(exc.request.url.host)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # not an httpx2 error, or one without its request
        return None


def _ssl_failure(exc: BaseException) -> ssl.SSLError | None:
    """The first :class:`ssl.SSLError` among ``exc`` and its causes (httpx2 wraps it in a ConnectError)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
