"""Test contexts for node tests: subclasses of ``knime.extension.testing``'s contexts, so they work on the headless
host and with KNIME's own package alike. They add what a workflow provides: credentials flow variables, and a record
of warnings and progress, and a cancel button."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from knime.extension.testing import TestingConfigurationContext, TestingExecutionContext


class _Workflow:
    def _setup(self, credentials: Mapping[str, tuple[str, str]] | None) -> None:
        self.credentials = dict(credentials or {})
        self.warnings: list[str] = []

    def get_credential_names(self) -> list[str]:
        return list(self.credentials)

    def get_credentials(self, identifier: str):  # type: ignore[no-untyped-def]
        from knime.extension.nodes import Credential

        if identifier not in self.credentials:
            raise KeyError(f"Error retrieving credentials for identifier: {identifier}")
        username, password = self.credentials[identifier]
        return Credential(username, password, identifier)

    def set_warning(self, message: str) -> None:
        self.warnings.append(str(message))


class ConfigureContext(_Workflow, TestingConfigurationContext):
    def __init__(self, credentials: Mapping[str, tuple[str, str]] | None = None) -> None:
        super().__init__()
        self._setup(credentials)


class ExecuteContext(_Workflow, TestingExecutionContext):
    def __init__(
        self,
        credentials: Mapping[str, tuple[str, str]] | None = None,
        cancel_when: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__()
        self._setup(credentials)
        self.progress: list[tuple[float, str | None]] = []
        self._cancel_when = cancel_when

    def set_progress(self, progress: float, message: str | None = None) -> None:
        super().set_progress(progress, message)
        self.progress.append((progress, message))

    def is_canceled(self) -> bool:
        return bool(self._cancel_when and self._cancel_when())
