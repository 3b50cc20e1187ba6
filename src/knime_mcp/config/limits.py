"""How long a run waits, and how much of it servers may ask for: values every server and run shares.

Frozen, keyword-only values beside :class:`~knime_mcp.config.spec.ServerSpec` (which holds its :class:`Timeouts`),
with named defaults; :mod:`knime_mcp.mcp.server_requests` applies the :class:`ServerRequestPolicy`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from knime_mcp.errors import ConfigError

__all__ = [
    "DEFAULT_SERVER_REQUESTS",
    "DEFAULT_TIMEOUTS",
    "ElicitationMode",
    "MAX_MESSAGE_BYTES",
    "SamplingLimits",
    "ServerRequestPolicy",
    "Timeouts",
]


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Seconds to wait; one object shared by the nodes, the CLI and the tests."""

    connect: float = 30.0
    """For opening the transport and the MCP handshake."""

    call: float = 60.0
    """For one tool call or listing page; a call past it is cancelled on the server too."""

    progress_max: float | None = None
    """*Longest call while progress is reported*: each progress notification (or new task status) of a call restarts
    its call timeout, up to this many seconds in all; None: the call timeout is final. Left out of a spec's JSON when
    None, so tables written before read the same."""

    def to_dict(self) -> dict[str, Any]:
        """Every field, except ``progress_max`` when None."""
        return {name: value for name, value in asdict(self).items() if value is not None or name != "progress_max"}

    def __post_init__(self) -> None:
        if self.connect <= 0 or self.call <= 0 or (self.progress_max is not None and self.progress_max <= 0):
            raise ConfigError("Timeouts must be positive numbers of seconds.")


DEFAULT_TIMEOUTS = Timeouts()

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest message a server may send: one MCP message (a server-sent event, a JSON response body, a stdio line)
or one HTTP tool's answer, unless the tool's ``max_response_bytes`` says otherwise. The SDK's default of 1 MiB per
event loses any larger tool result, and with it the session, and it reads JSON bodies and stdio lines without a
limit. Applied by :mod:`knime_mcp.net.http_pool`; here so that the command line can name it without loading httpx."""

ElicitationMode = Literal["decline", "defaults"]
"""How a form a tool asks for is answered while nobody watches: declined, or filled in with the defaults of its
schema when every field has one (else declined)."""


@dataclass(frozen=True, kw_only=True)
class SamplingLimits:
    """How much of the run's chat model servers may use (``sampling/createMessage``): each request costs tokens."""

    max_tokens: int = 1000
    """Tokens one answer may have at most; a request asking for more gets this many."""

    max_requests: int = 10
    """Requests answered per run, across all servers; later ones are declined."""

    max_prompt_bytes: int = 100_000
    """UTF-8 bytes of a request's prompt (system prompt and messages), about 25,000 tokens; a larger request is
    declined: the server, not the workflow, chose its size, and the model is paid by the token."""

    def __post_init__(self) -> None:
        if min(self.max_tokens, self.max_requests, self.max_prompt_bytes) < 1:
            raise ConfigError(
                "The sampling limits (tokens per answer, requests per run, bytes per prompt) must be at least 1."
            )


@dataclass(frozen=True, kw_only=True)
class ServerRequestPolicy:
    """How a run answers what servers ask of the client while a tool runs (see :mod:`knime_mcp.mcp.server_requests`)."""

    elicitation: ElicitationMode = "decline"

    sampling: SamplingLimits | None = None
    """Answer sampling requests with the run's chat model within these limits; None: decline them."""

    def __post_init__(self) -> None:
        if self.elicitation not in get_args(ElicitationMode):
            raise ConfigError(
                f"Unknown elicitation mode {self.elicitation!r}; use one of {', '.join(get_args(ElicitationMode))}."
            )


DEFAULT_SERVER_REQUESTS = ServerRequestPolicy()
