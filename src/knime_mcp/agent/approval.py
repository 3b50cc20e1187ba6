"""Approval before a call: which tool calls a person must approve, what they are asked, and what they answer.

Layer: core (agent), below the agent's toolset, which asks before each call the policy names, and above the faces
that ask a person: the chat view and ``knime-mcp chat``/``agent --approve ask`` (an :class:`Approver` each), and the
batch Agent Prompter, whose approver answers from a column of the conversation table and otherwise says nobody can
answer now (``None``): the run then stops with that call *awaiting approval* and resumes when it runs again with
the decision.

    policy = ApprovalPolicy(destructive=True, pattern="^delete_")
    policy.needs_approval(tool)                       # True for an annotated-destructive tool or delete_*
    run = await run_agent(model, tools, "Tidy up.", config=AgentConfig(approval=policy), approver=approver)

:class:`SessionApprover` remembers *Allow for this session*: pass the same one to every run of a session.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from knime_mcp.errors import ConfigError
from knime_mcp.tools.names import compile_name_pattern
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.dispatch import LocalTool

__all__ = [
    "NO_APPROVAL",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRequest",
    "Approver",
    "Choice",
    "Decision",
    "SessionApprover",
    "lookalikes_folded",
]

Choice = Literal["approve", "deny", "allow_session"]
"""Approve this call; deny it (the model is told, with the reason); approve it and every later call of the tool."""


@dataclass(frozen=True, kw_only=True)
class ApprovalPolicy:
    """Which calls wait for a person's approval; by default none. The rules add up: a call needs approval when any
    rule names its tool.

    ApprovalPolicy(unannotated=True)     # every tool whose server sent no behaviour hints
    """

    destructive: bool = False
    """Tools annotated destructive (not read-only, ``destructiveHint`` not false), as the MCP specification says."""

    unannotated: bool = False
    """Tools whose server sent no behaviour hint at all, whose effects nobody knows."""

    pattern: str | None = None
    """A regular expression searched in the model-facing tool name (and the server's own name), ignoring case, as
    written and as it looks (:func:`lookalikes_folded`): a Cyrillic ``dеlete_all`` is found by ``delete``."""

    everything: bool = False
    """Every call, workflow tools included."""

    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = compile_name_pattern(self.pattern, "pattern of tools to ask about")
        object.__setattr__(self, "_pattern", compiled and re.compile(compiled.pattern, re.IGNORECASE))

    @property
    def active(self) -> bool:
        """Whether any call can need approval."""
        return self.everything or self.destructive or self.unannotated or self._pattern is not None

    def needs_approval(self, tool: MCPTool | LocalTool) -> bool:
        """Whether a call of ``tool`` waits for a person; a local tool without annotations (a workflow tool) has
        none to judge, so only ``everything`` and ``pattern`` apply to it; one with them (a skill's script) is judged
        as an MCP tool with those hints."""
        if self.everything:
            return True
        names = (tool.name, tool.tool_name) if isinstance(tool, MCPTool) else (tool.name,)
        pattern = self._pattern
        if pattern is not None and any(pattern.search(n) or pattern.search(lookalikes_folded(n)) for n in names):
            return True
        hints = tool.annotations
        if hints is None:
            return False
        if self.unannotated and not hints.annotated:
            return True
        return self.destructive and hints.annotated and hints.destructive and not hints.read_only


NO_APPROVAL = ApprovalPolicy()
"""No call waits for approval: the default."""

_ASCII_LOOKALIKES = str.maketrans({"I": "l", "1": "l", "|": "l", "0": "O"})
"""The ASCII characters Unicode's confusables data (TR39) maps to another single ASCII character: ``deIete`` reads as
``delete`` in many fonts."""


@lru_cache(maxsize=4096)
def lookalikes_folded(name: str) -> str:
    """``name`` as it looks, for a name pattern a person wrote in plain letters: compatibility forms made plain
    (NFKC: fullwidth and mathematical letters), invisible format characters dropped, and each character that
    Unicode's confusables data (UTS #39, as the confusable-homoglyphs package ships it) gives an ASCII prototype
    replaced by it: Cyrillic ``е`` becomes ``e``, Greek ``Ι`` becomes ``l``."""
    text = "".join(char for char in unicodedata.normalize("NFKC", name) if unicodedata.category(char) != "Cf")
    if not text.isascii():
        from confusable_homoglyphs.confusables import is_confusable

        prototypes = {
            found["character"]: prototype
            for found in is_confusable(text, greedy=True) or []
            if not found["character"].isascii()
            for prototype in [glyph["c"] for glyph in found["homoglyphs"] if glyph["c"].isascii()][:1]
        }
        text = "".join(prototypes.get(char, char) for char in text)
    return text.translate(_ASCII_LOOKALIKES)


@dataclass(frozen=True)
class ApprovalRequest:
    """A call waiting for a person's approval; the faces show ``arguments`` redacted (:mod:`knime_mcp.redaction`)."""

    call_id: str
    tool: str
    """The model-facing name, as in the conversation."""
    server: str
    """The server's display name; empty for a workflow tool."""
    kind: str
    """``mcp``, ``http`` or ``workflow``."""
    hints: dict[str, bool]
    """``read_only``, ``destructive``, ``idempotent``, ``open_world`` and ``annotated`` (all false but
    ``destructive`` and ``open_world`` for a tool without annotations, as the specification's defaults are)."""
    arguments: dict[str, Any]
    """As the model sent them."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, arguments redacted: what a face shows and an event carries."""
        from knime_mcp.redaction import redact

        return {
            "call_id": self.call_id, "tool": self.tool, "server": self.server, "kind": self.kind,
            "hints": dict(self.hints), "arguments": redact(self.arguments),
        }  # fmt: skip


@dataclass(frozen=True)
class Decision:
    """A person's answer to an :class:`ApprovalRequest`."""

    choice: Choice
    arguments: dict[str, Any] | None = None
    """Edited arguments, validated against the tool's schema as any call's are; None: as the model asked."""
    reason: str | None = None
    """Why a call was denied; the model is told."""

    def __post_init__(self) -> None:
        if self.choice not in get_args(Choice):
            raise ConfigError(
                f"Unknown approval decision {self.choice!r}.", hint=f"Use one of {', '.join(get_args(Choice))}."
            )
        if self.arguments is not None and not isinstance(self.arguments, dict):
            raise ConfigError("The edited arguments of an approved call must be a JSON object.")


class Approver(Protocol):
    """Who decides: a person behind a face. ``None`` means nobody can answer now (the batch node): the run stops
    with the call awaiting approval."""

    async def decide(self, request: ApprovalRequest) -> Decision | None: ...


@dataclass(frozen=True)
class ApprovalRecord:
    """A decision as the tool-call log keeps it: the choice (or ``awaiting``) and when it was made, in UTC."""

    choice: Choice | Literal["awaiting"]
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))


class SessionApprover:
    """An :class:`Approver` that remembers *Allow for this session*: later calls of an allowed tool are approved
    without asking ``inner``. Keep one per session (a chat, a CLI run) and pass it to each of its runs.

    approver = SessionApprover(TerminalApprover())
    """

    def __init__(self, inner: Approver | None) -> None:
        self._inner = inner
        self.allowed: set[str] = set()
        """Model-facing names of the tools allowed for the session."""

    async def decide(self, request: ApprovalRequest) -> Decision | None:
        if request.tool in self.allowed:
            return Decision("allow_session")
        decision = None if self._inner is None else await self._inner.decide(request)
        if decision is not None and decision.choice == "allow_session":
            self.allowed.add(request.tool)
        return decision
