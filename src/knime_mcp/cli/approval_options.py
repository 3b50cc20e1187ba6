"""The ``agent`` command's approval before a call: ``--ask-*`` choose the calls that need a person's approval,
``--approve all|none|ask`` decides them (``ask`` on the terminal: y, n or always, read from stdin).

Layer: cli, above :mod:`knime_mcp.agent.approval`. With ``--approve`` but no ``--ask-*``, every call needs approval.

    knime-mcp agent URL --model m --prompt 'Tidy up' --destructive allow --ask-destructive --approve ask
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from knime_mcp.agent.approval import ApprovalPolicy, ApprovalRequest, Approver, Decision
    from knime_mcp.agent.config import AgentConfig

__all__ = ["TerminalApprover", "add_approval_options", "approval_policy", "approver", "warn_unasked"]

_NONE_REASON = "The command line denies every call that needs approval (--approve none)."
_ANSWERS = {
    "y": "approve",
    "yes": "approve",
    "n": "deny",
    "no": "deny",
    "a": "allow_session",
    "always": "allow_session",
}


def add_approval_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("approval before a call")
    group.add_argument(
        "--approve",
        choices=["all", "none", "ask"],
        help="decide the calls that need approval: approve all, deny all, or ask on the terminal (default: ask)",
    )
    group.add_argument("--ask-destructive", action="store_true", help="tools annotated destructive need approval")
    group.add_argument("--ask-unannotated", action="store_true", help="tools without MCP annotations need approval")
    group.add_argument("--ask-pattern", metavar="REGEX", help="tools whose name contains a match need approval")
    group.add_argument(
        "--ask-all", action="store_true", help="every call needs approval (also --approve without an --ask-* option)"
    )


def approval_policy(args: argparse.Namespace) -> ApprovalPolicy:
    from knime_mcp.agent.approval import ApprovalPolicy

    policy = ApprovalPolicy(
        destructive=args.ask_destructive, unannotated=args.ask_unannotated, pattern=args.ask_pattern,
        everything=args.ask_all,
    )  # fmt: skip
    return policy if policy.active or args.approve is None else ApprovalPolicy(everything=True)


def warn_unasked(config: AgentConfig, err: TextIO) -> None:
    """One ``Warning:`` line when ``--ask-destructive`` can ask nothing: ``--destructive`` never offers those tools
    (the nodes warn the same way, :attr:`AgentConfig.asks_about_blocked_destructive`)."""
    if config.asks_about_blocked_destructive:
        print(
            "Warning: --ask-destructive is on, but --destructive blocks destructive tools, so they are never offered "
            "and nobody is asked: pass --destructive allow to offer them with a question first",
            file=err,
        )


def approver(args: argparse.Namespace, err: TextIO) -> Approver:
    """Who decides: ``--approve``, reading the terminal from ``sys.stdin`` as it is when a call is asked about."""
    from knime_mcp.agent.approval import Decision

    match args.approve:
        case "all":
            return _Always(Decision("approve"))
        case "none":
            return _Always(Decision("deny", reason=_NONE_REASON))
        case _:
            return TerminalApprover(err)


class _Always:
    def __init__(self, decision: Decision) -> None:
        self._decision = decision

    async def decide(self, request: ApprovalRequest) -> Decision:
        return self._decision


class TerminalApprover:
    """Asks on the terminal: the question goes to ``err``, the answer (y, n or always; after n, an optional
    reason) comes from stdin, read off the event loop. No answer (end of input) denies the call."""

    def __init__(self, err: TextIO) -> None:
        self._err = err

    async def decide(self, request: ApprovalRequest) -> Decision:
        from knime_mcp.agent.approval import Decision

        shown = request.to_dict()
        where = f" of server {shown['server']}" if shown["server"] else ""
        hints = ", ".join(name for name, value in shown["hints"].items() if value) or "no hints"
        arguments = json.dumps(shown["arguments"], ensure_ascii=False, default=str)
        while True:
            self._err.write(f"Approve the call of {shown['tool']}{where} ({hints}) with {arguments}? [y/n/always] ")
            self._err.flush()
            line = await _read_line()
            if line is None:
                return Decision("deny", reason="Nobody answered on the terminal.")
            choice = _ANSWERS.get(line.strip().lower())
            if choice == "deny":
                self._err.write("Reason for the model (optional): ")
                self._err.flush()
                reason = await _read_line()
                return Decision("deny", reason=(reason or "").strip() or None)
            if choice is not None:
                return Decision(choice)  # type: ignore[arg-type]


async def _read_line() -> str | None:
    """A line of stdin, None at its end; read in a worker thread so the servers' sessions keep running."""
    import anyio

    line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line.rstrip("\n") if line else None
