"""Certificate failures in words: which host, what failed, and which TLS setting fixes it.

OpenSSL reports a failed check as a code and a terse text (``certificate verify failed: self-signed certificate in
certificate chain``) that a KNIME user cannot act on; :func:`certificate_error` names the host and the setting
(*CA bundle*, *Use the system trust store*, *Client certificate*) instead. Used by :mod:`knime_mcp.errors.translation`.

A server that requires a client certificate should say so with an alert when none is sent, but many (uvicorn's own
TLS, servers behind some proxies) just close the connection, which reads as a server that disconnected. So the SSL
contexts that show no client certificate report each handshake here (:func:`note_certificate_request`, from
:mod:`knime_mcp.net.tls`): a connection to a host that asked for one in its latest handshake that fails without an
answer is that missing certificate.
"""

from __future__ import annotations

import ssl

from knime_mcp.errors.tree import ServerConnectError

__all__ = ["certificate_error", "note_certificate_request"]

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
_REQUIRED = "the server requires a client certificate and none was sent"
_CLIENT_CERT_HINT = "Set Client certificate (and Client key) to a certificate and key the server accepts."

_CLIENT_CERT_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": _REQUIRED,
    "SSLV3_ALERT_BAD_CERTIFICATE": "the server refused the client certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "the server does not trust the client certificate's issuer",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "the server refused the client certificate",
}
_ASKED: dict[str, bool] = {}
"""Whether each host asked for a client certificate in its latest handshake with a context that shows none."""
_ASKED_MAX = 256


def note_certificate_request(conn: object, direction: str, version: object, content_type: object,
                             msg_type: object, data: object) -> None:  # fmt: skip
    """An SSL context's message callback (``SSLContext._msg_callback``): notes, by host, whether the server asked for
    a client certificate in the handshake (a ServerHello starts one, a CertificateRequest asks)."""
    if direction != "read" or msg_type not in (ssl._TLSMessageType.SERVER_HELLO,
                                               ssl._TLSMessageType.CERTIFICATE_REQUEST):  # fmt: skip
        return
    host = getattr(conn, "server_hostname", None)
    if isinstance(host, str):
        if host not in _ASKED and len(_ASKED) >= _ASKED_MAX:
            _ASKED.pop(next(iter(_ASKED)))
        _ASKED[host] = msg_type == ssl._TLSMessageType.CERTIFICATE_REQUEST


def certificate_error(exc: BaseException, server: str) -> ServerConnectError | None:
    """The error for a TLS failure in ``exc`` or its causes, or for a connection without an answer from a host
    that asked for a client certificate none was shown for; None if it is neither."""
    failure = _ssl_failure(exc)
    host = _host(exc)
    if failure is None:
        if host is None or not _ASKED.get(host):
            return None
        return ServerConnectError(
            f"TLS with {host} failed: {_REQUIRED} (it asked for one, then closed the connection without an answer).",
            server=server,
            hint=_CLIENT_CERT_HINT,
        )
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
            hint=_CLIENT_CERT_HINT,
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
