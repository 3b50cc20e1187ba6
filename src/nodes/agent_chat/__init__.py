"""The Agent Chat node (``node``) and what sits with it: its view's data service (``service``, ``view_service``) and the
registry of its open chat sessions (``sessions``). Its page is built into ``src/nodes/chat_view``."""

from nodes.agent_chat.node import AgentChat

__all__ = ["AgentChat"]
