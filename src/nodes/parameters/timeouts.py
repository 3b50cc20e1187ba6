"""Parameters: the *Timeouts* group of the nodes that reach a server of their own, and the core's Timeouts of it."""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.config import DEFAULT_TIMEOUTS, Timeouts

__all__ = ["TimeoutSettings", "timeout_limits"]


@knext.parameter_group(label="Timeouts")
class TimeoutSettings:
    connect = knext.DoubleParameter(
        "Connect timeout (s)",
        "Seconds to wait for the connection and handshake.",
        DEFAULT_TIMEOUTS.connect,
        min_value=0.1,
    )
    call = knext.DoubleParameter(
        "Call timeout (s)",
        "Seconds to wait for one tool call; a slower call is cancelled on the server.",
        DEFAULT_TIMEOUTS.call,
        min_value=0.1,
    )
    progress_max = knext.DoubleParameter(
        "Longest call while progress is reported (s)",
        "While a tool reports progress (or, run as an MCP task, a new status), each report restarts the call "
        "timeout, up to this many seconds in all. 0: the call timeout is final.",
        0.0,
        min_value=0.0,
        since_version="0.5.0",
        is_advanced=True,
    )


def timeout_limits(timeouts: TimeoutSettings) -> Timeouts:
    return Timeouts(connect=timeouts.connect, call=timeouts.call, progress_max=timeouts.progress_max or None)
