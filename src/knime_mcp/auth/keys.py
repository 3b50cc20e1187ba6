"""Private keys for signing: a client's key for ``private_key_jwt`` (RFC 7523), and the JWS algorithm it signs with.

The key is a secret: it comes from a KNIME credential's password (the PEM itself) or a ``${VAR}`` whose value is the
PEM or the path of a PEM file. Nothing here names the key's content in a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from knime_mcp.errors import ConfigError

__all__ = ["SigningKey", "signing_key"]

_PEM_START = "-----BEGIN"
_HINT = (
    "Put the client's private key (PEM, unencrypted: -----BEGIN PRIVATE KEY-----) in the credential's password, or in "
    "the environment variable, or the path of a PEM file there."
)


@dataclass(frozen=True, repr=False)
class SigningKey:
    """A private key as PEM and the algorithm its type signs with: RS256 for RSA, ES256 for P-256."""

    pem: str
    algorithm: str


def signing_key(value: str) -> SigningKey:
    """The key ``value`` holds, or names by a file path; a :class:`ConfigError` that quotes none of it otherwise."""
    text = value.strip()
    if not text.startswith(_PEM_START):
        path = Path(text).expanduser()
        try:
            text = path.read_text(encoding="ascii").strip() if path.is_file() else ""
        except (OSError, ValueError):
            text = ""
        if not text:
            raise ConfigError("The private key is neither a PEM key nor the path of a readable PEM file.", hint=_HINT)
    try:
        key = serialization.load_pem_private_key(text.encode("ascii"), password=None)
    except (ValueError, TypeError, UnicodeError):
        raise ConfigError("The private key could not be read as an unencrypted PEM key.", hint=_HINT) from None
    if isinstance(key, rsa.RSAPrivateKey):
        return SigningKey(text, "RS256")
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return SigningKey(text, "ES256")
    raise ConfigError(
        "The private key is neither an RSA nor a P-256 (EC) key; knime-mcp signs with RS256 or ES256.",
        hint="Create an RSA key (openssl genpkey -algorithm RSA) or a P-256 key (openssl genpkey -algorithm EC "
        "-pkeyopt ec_paramgen_curve:P-256) and register its public key with the authorization server.",
    )
