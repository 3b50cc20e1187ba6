"""``knime.extension.testing`` (ktest): no-argument contexts for unit tests; importing it installs the backends.

Mirrored from ktest: the contexts take no arguments; ``set_warning`` is a no-op; credentials and folder
getters raise ``RuntimeError("Not implemented for testing")``; ``is_canceled`` is ``False``; the port-number
getters raise ``AttributeError``. Where ktest is laxer than the KNIME runtime the host follows the runtime, so
a node cannot pass here and fail in KNIME: ``flow_variables`` keeps KNIME's rules and ``set_progress`` checks
its arguments (ktest ignores them). The installed backends have runtime semantics (RowIDs, batches,
``port_type`` returning a ``PortType``) rather than ktest's pandas shortcuts. ``__test__ = False`` only keeps
pytest from collecting the classes. Tests that need credentials, recorded progress or cancellation subclass
these contexts (that works with the real ktest too); call ``super().set_progress(...)`` to keep the checks.
"""

from __future__ import annotations

from knime.extension import _ports, _table
from knime.extension._contexts import (
    ConfigurationContext,
    Credential,
    ExecutionContext,
    _checked_progress,
    _FlowVariables,
)

_NOT_AVAILABLE = "Not implemented for testing"


class _TestingContext:
    __test__ = False

    def __init__(self) -> None:
        self._flow_variables = _FlowVariables()

    def get_credential_names(self) -> list[str]:
        raise RuntimeError(_NOT_AVAILABLE)

    def get_credentials(self, identifier: str) -> Credential:
        raise RuntimeError(_NOT_AVAILABLE)

    def set_warning(self, message: str) -> None:
        """No-op, as in ktest."""


class TestingConfigurationContext(_TestingContext, ConfigurationContext):
    pass


class TestingExecutionContext(_TestingContext, ExecutionContext):
    def set_progress(self, progress: float, message: str | None = None) -> None:
        """Checks the arguments like the KNIME runtime, then does nothing."""
        _checked_progress(progress, message)

    def is_canceled(self) -> bool:
        return False

    def get_workflow_temp_dir(self) -> str:
        raise RuntimeError(_NOT_AVAILABLE)

    def get_workflow_data_area_dir(self) -> str:
        raise RuntimeError(_NOT_AVAILABLE)

    def get_knime_home_dir(self) -> str:
        raise RuntimeError(_NOT_AVAILABLE)


def _install_backends() -> None:
    if _table._backend is None:
        _table._backend = _table._HostTableBackend()
    if _ports._backend is None:
        _ports._backend = _ports._HostNodeBackend()


_install_backends()
