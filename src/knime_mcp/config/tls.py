"""How a server's certificate is checked and which certificate knime-mcp shows it: a frozen value, never a secret.

Part of :class:`~knime_mcp.config.spec.ServerSpec`. Paths may be ``${VAR}`` references; the client key's passphrase
comes from a KNIME credential or a ``${VAR}`` reference only. :mod:`knime_mcp.net.tls` turns it into an SSL context.
With no CA bundle set, the environment's ``SSL_CERT_FILE``, then ``REQUESTS_CA_BUNDLE``, then ``SSL_CERT_DIR`` name
the certificates to trust, as for other Python HTTP clients; without any of them the default store is trusted.

    TlsSettings(ca_bundle="/etc/company/ca.pem")
    TlsSettings(system_trust=True, client_cert="${CLIENT_CERT}", client_key="${CLIENT_KEY}", key_secret="${KEY_PW}")
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from knime_mcp.config.references import ENV_REF
from knime_mcp.errors import ConfigError

__all__ = ["DEFAULT_TLS", "TlsSettings"]


@dataclass(frozen=True, kw_only=True)
class TlsSettings:
    """Certificate checks and the client certificate for one server; the default checks against the default store."""

    ca_bundle: str | None = None
    """A PEM file of the certificates (e.g. a company's CA) to trust instead of the default store; may be ``${VAR}``."""

    system_trust: bool = False
    """Trust the operating system's certificate store (the ``truststore`` package): Windows' and macOS' own store,
    OpenSSL's on Linux; with a CA bundle, its certificates are trusted too."""

    client_cert: str | None = None
    """A PEM file of the client certificate to show a server that asks for one (mutual TLS); may be ``${VAR}``."""

    client_key: str | None = None
    """The PEM file of the client certificate's private key, when it is not in ``client_cert``; may be ``${VAR}``."""

    key_credential: str | None = None
    """Name of a KNIME credential whose password unlocks an encrypted client key."""

    key_secret: str | None = None
    """A ``${VAR}`` reference to the passphrase of an encrypted client key, as an alternative to a credential."""

    verify: bool = True
    """False: do not check the server's certificate at all. Only for servers a person set, never from data."""

    def __post_init__(self) -> None:
        if (self.client_key or self.key_credential or self.key_secret) and not self.client_cert:
            raise ConfigError(
                "A client key or its passphrase is set without a client certificate.",
                hint="Give the client certificate's PEM file too, or clear the key settings.",
            )
        if self.key_credential is not None and self.key_secret is not None:
            raise ConfigError(
                "The client key's passphrase has two sources.",
                hint="Choose a KNIME credential or an environment reference such as ${KEY_PASSPHRASE}, not both.",
            )
        if self.key_secret is not None and not ENV_REF.fullmatch(self.key_secret):
            raise ConfigError(
                "The client key's passphrase must be an environment reference such as ${KEY_PASSPHRASE}, not a value.",
                hint="Store the passphrase in an environment variable or a KNIME credential; settings are saved in "
                "clear.",
            )
        if not self.verify and (self.ca_bundle or self.system_trust):
            raise ConfigError(
                "Certificate checks are off, so the CA bundle and the system trust store would not be used.",
                hint="Turn certificate checks back on, or clear the CA bundle and the system trust store setting.",
            )

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_TLS

    def to_dict(self) -> dict[str, Any]:
        """Only the settings that differ from the default, so a spec's JSON grows only with what was set."""
        return {name: value for name, value in asdict(self).items() if value != _DEFAULTS[name]}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> TlsSettings:
        return cls(**(data or {}))


DEFAULT_TLS = TlsSettings()
_DEFAULTS = asdict(DEFAULT_TLS)
