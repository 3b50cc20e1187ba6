"""The Agent Chat view's data service: what the page (src/nodes/chat_view) calls over KNIME's JSON-RPC bridge.

KNIME's node backend wraps the object a node's ``get_data_service`` returns and calls its methods by name with the
page's arguments (``_JsonRpcDataService.handleJsonRpcRequest``); results must be JSON. The page calls ``init`` once,
then ``send`` a message and ``poll`` for the turn's events until it ends; ``stop``, ``decide`` and ``answer_form``
are the person's buttons, and ``instructions`` lists what the servers say about themselves when the person asks.
``app_request`` is what an MCP App shown under a tool call asks (its view, its server's tools and resources, a
message): it returns a request id at once, and the answer comes as an ``app_reply`` event through ``poll``, as KNIME
times a data-service call out long before a person approves a call.
Every method is one call on the core's chat session, which is thread-safe: KNIME may call from more than one thread.

KNIME's bridge calls any attribute the page names (``hasattr``, then ``getattr``): ``__setattr__``, ``__init__`` or
``_session`` as well as the page's methods. So a node hands KNIME :class:`DeclaredMethods` over its service, which
has no attribute but the methods the service declares (``methods``): any other name is "method not found", and
nothing runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    from knime_mcp.agent.chat_session import ChatSession

__all__ = ["ChatViewService", "DeclaredMethods"]


class DeclaredMethods:
    """What KNIME's bridge sees of a data service: only the methods its class declares in ``methods``."""

    __slots__ = ("_DeclaredMethods__service",)

    def __init__(self, service: ChatViewService) -> None:
        object.__setattr__(self, "_DeclaredMethods__service", service)

    def __getattribute__(self, name: str) -> Any:
        service = object.__getattribute__(self, "_DeclaredMethods__service")
        if name in type(service).methods:
            return getattr(service, name)
        raise AttributeError(f"The chat view's data service has no method {name!r}.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"The chat view's data service has no attribute {name!r} to set.")


class ChatViewService:
    """The page's view of one :class:`ChatSession`, with the view's settings."""

    methods: ClassVar[tuple[str, ...]] = (
        "init", "send", "poll", "stop", "decide", "answer_form", "instructions", "app_request",
    )  # fmt: skip
    """What the page may call through :class:`DeclaredMethods`; a subclass that KNIME calls more adds to them."""

    def __init__(self, session: ChatSession, *, show_tool_calls: bool, show_apps: bool = True) -> None:
        """``show_apps``: whether the page shows the MCP Apps of tool calls (the node's *Show MCP Apps*)."""
        self._session = session
        self._show_tool_calls = show_tool_calls
        self._show_apps = show_apps

    def init(self) -> dict[str, Any]:
        """The settings the page needs and the events so far: the conversation the session went on from first (the
        input conversation, the initial message, or the chat kept when the view was last applied), then its turns."""
        return {"show_tool_calls": self._show_tool_calls, "show_apps": self._show_apps, **self.poll(0)}

    def send(self, text: str) -> None:
        """Starts a turn with the person's message."""
        self._session.send(text)

    def poll(self, after: int = 0) -> dict[str, Any]:
        """The events after sequence number ``after`` and whether a turn is running. ``running`` is read first, so
        when it is false the ended turn's events (up to its ``turn_end``) are all in the list."""
        running = self._session.running
        return {"events": self._session.events(after), "running": running}

    def stop(self) -> None:
        """Ends the turn and cancels the calls in flight."""
        self._session.stop()

    def decide(
        self, call_id: str, choice: str, arguments: dict[str, Any] | None = None, reason: str | None = None
    ) -> None:
        """Answers an approval card: approve, deny (with an optional reason) or allow for this session."""
        self._session.decide(call_id, choice, arguments=arguments, reason=reason)

    def answer_form(self, form_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Answers a server's form: accept (with the content), decline or cancel."""
        self._session.answer_form(form_id, action, content)

    def app_request(self, call_id: str, method: str, params: dict[str, Any] | None = None) -> str:
        """An app's request (the app of call ``call_id``): its id; the answer comes as an ``app_reply`` event. With
        *Show MCP Apps* off no app is shown, so none may ask."""
        if not self._show_apps:
            raise ConfigError(
                "MCP Apps are not shown in this chat.", hint="Turn on 'Show MCP Apps' in the node's settings."
            )
        return self._session.app_request(call_id, method, params)

    def instructions(self) -> list[dict[str, Any]]:
        """Each connected server's instructions: ``server``, ``text`` (capped) and whether it was ``cut``."""
        return self._session.instructions()
