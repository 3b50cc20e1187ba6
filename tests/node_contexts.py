"""Test contexts for node tests: subclasses of ``knime.extension.testing``'s contexts that add what a workflow
provides (credentials flow variables, a cancel button) and record what the node reports (warnings, progress).

On the headless stand-in the node gets such a context itself. On KNIME's real API the node gets KNIME's own
context, built by the launcher around the Java-side double of ``tests/real_knime``, which asks this object what the
node asks (credentials, flow variables, cancellation) and passes on what the node reports. So tests read
``ctx.warnings``, ``ctx.progress`` and ``ctx.flow_variables`` afterwards on both hosts alike.
"""

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
        self.progress.append((min(1.0, max(0.0, float(progress))), message))  # as KNIME takes it: within [0, 1]

    def is_canceled(self) -> bool:
        return bool(self._cancel_when and self._cancel_when())
