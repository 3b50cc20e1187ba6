"""Private keys for signing: a client's key for ``private_key_jwt`` (RFC 7523), the JWS algorithms it can sign with,
its public JWK and the name that JWK goes by (its RFC 7638 thumbprint); DPoP keys (:mod:`knime_mcp.auth.dpop`) too.

The key is a secret: it comes from a KNIME credential's password (the PEM itself) or a ``${VAR}`` whose value is the
PEM or the path of a PEM file. Nothing here names the key's content in a message.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from knime_mcp.errors import ConfigError

__all__ = ["PrivateKey", "SigningKey", "key_algorithms", "public_jwk", "signing_key", "thumbprint"]

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey

_CURVES = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_RSA_ALGORITHMS = ["RS256", "PS256", "RS384", "PS384", "RS512", "PS512"]
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def key_algorithms(key: PrivateKey) -> list[str]:
    """The JWS algorithms ``key`` signs with, preferred first."""
    if isinstance(key, rsa.RSAPrivateKey):
        return list(_RSA_ALGORITHMS)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return [_CURVES[key.curve.name]] if key.curve.name in _CURVES else []
    return ["EdDSA"] if isinstance(key, ed25519.Ed25519PrivateKey) else []


def public_jwk(key: PrivateKey) -> dict[str, str]:
    """The public half of ``key`` as a JWK (RFC 7517): its required members only."""
    public = key.public_key()
    family = jwt.algorithms.RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else jwt.algorithms.ECAlgorithm
    family = jwt.algorithms.OKPAlgorithm if isinstance(key, ed25519.Ed25519PrivateKey) else family
    jwk = family.to_jwk(public, as_dict=True)  # type: ignore[arg-type]
    return {name: str(jwk[name]) for name in _THUMBPRINT_MEMBERS[str(jwk["kty"])]}


def thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638: the SHA-256 of the key's required members, in order and without spaces, base64url; a key's ``kid``
    where nobody gave it another."""
    members = {name: jwk[name] for name in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest()
    return jwt.utils.base64url_encode(digest).decode()


_PEM_START = "-----BEGIN"
_HINT = (
    "Put the client's private key (PEM, unencrypted: -----BEGIN PRIVATE KEY-----) in the credential's password, or in "
    "the environment variable, or the path of a PEM file there."
)


@dataclass(frozen=True, repr=False)
class SigningKey:
    """A private key as PEM, the algorithms its type signs with (RSA: RS256 first, then PS256 and the longer hashes;
    P-256: ES256) and its ``kid``, the RFC 7638 thumbprint of its public JWK."""

    pem: str
    algorithms: tuple[str, ...]
    kid: str

    @property
    def algorithm(self) -> str:
        """What it signs with where the authorization server names no algorithms."""
        return self.algorithms[0]


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
    if isinstance(key, rsa.RSAPrivateKey) or (
        isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1)
    ):
        return SigningKey(text, tuple(key_algorithms(key)), thumbprint(public_jwk(key)))
    raise ConfigError(
        "The private key is neither an RSA nor a P-256 (EC) key; knime-mcp signs with RS256 or ES256.",
        hint="Create an RSA key (openssl genpkey -algorithm RSA) or a P-256 key (openssl genpkey -algorithm EC "
        "-pkeyopt ec_paramgen_curve:P-256) and register its public key with the authorization server.",
    )
