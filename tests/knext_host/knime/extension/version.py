"""``knime.extension.version``: the ``Version`` of an extension, as KNIME parses ``since_version`` strings."""

from __future__ import annotations

from typing import NamedTuple


class Version(NamedTuple):
    """An extension version; compares like a tuple."""

    major: int
    minor: int
    patch: int

    @classmethod
    def parse_version(cls, version: str | Version | None) -> Version:
        if version is None:
            return cls(0, 0, 0)
        if isinstance(version, Version):
            return version
        parts = version.split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"Version '{version}' must have the format major.minor.patch")
        return cls(*(int(p) for p in parts))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"
