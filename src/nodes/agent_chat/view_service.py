"""The Agent Chat's view service over its chat session: the page's service (``nodes.agent_chat.service``) kept alive
in the registry of open sessions (``nodes.agent_chat.sessions``), and ``get_view_data``, the chat as the tables the
node outputs."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from knime_mcp.errors import ConfigError
from nodes.agent_chat.service import ChatViewService
from nodes.agent_chat.sessions import CHAT_SESSIONS
from nodes.knime_io.conversation import knime_conversation

if TYPE_CHECKING:
    from knime_mcp.agent.chat_session import ChatSession
    from knime_mcp.agent.data import DataRepository

__all__ = ["AgentChatService", "WorkerThread"]


class WorkerThread:
    """Runs workflow tools in a worker thread: the view's context is not bound to one thread (KNIME's own chat view
    calls tools from its agent's thread), unlike ``execute``'s, which ``CallerThread`` serves."""

    async def run(self, func: Any, *args: Any) -> Any:
        import anyio

        return await anyio.to_thread.run_sync(partial(func, *args), abandon_on_cancel=True)


class AgentChatService(ChatViewService):
    """The page's data service, plus ``get_view_data``, which KNIME calls (not the page) when the view is applied
    or closed: the chat as tables, for ``execute`` and the next session."""

    methods = (*ChatViewService.methods, "get_view_data")

    def __init__(
        self, session: ChatSession, repository: DataRepository, inputs: int, earlier_log: Any, **settings: Any
    ) -> None:
        super().__init__(session, **settings)
        self._chat = session
        self._repository = repository
        self._inputs = inputs
        self._earlier_log = earlier_log

    def send(self, text: str) -> None:
        """Starts a turn, unless the session was closed under this page (``nodes.agent_chat.sessions``): then says
        why."""
        closed = CHAT_SESSIONS.closed_because(self._chat)
        if closed is not None:
            raise ConfigError(
                f"This chat was closed: {closed}.", hint="Close this view and open it again to continue the chat."
            )
        CHAT_SESSIONS.touch(self._chat)
        super().send(text)

    def poll(self, after: int = 0) -> dict[str, Any]:
        """The page's polls (and ``init``) keep the session from being closed as idle."""
        CHAT_SESSIONS.touch(self._chat)
        return super().poll(after)

    def get_view_data(self) -> dict[str, Any]:
        from knime_mcp.agent.call_log import log_table
        from knime_mcp.conversation import conversation_table

        run = self._chat.run()
        log = log_table(run.log)
        if self._earlier_log is not None:
            log = _concat_logs(self._earlier_log.to_pyarrow(), log)
        added = [self._repository.host_table(table) for table in self._repository.tables[self._inputs :]]
        return {
            "data": {"tables": len(added)},
            "ports": [knime_conversation(conversation_table(run.conversation)), knext.Table.from_pyarrow(log), *added],
            "portIds": [],
        }


def _concat_logs(earlier: Any, new: Any) -> Any:
    """The earlier sessions' log (as KNIME gave it back: Row IDs first) followed by this session's; columns an
    earlier log lacks (written before they existed, such as *App URI*) are missing cells in its rows."""
    import pyarrow as pa

    earlier = earlier.drop_columns([earlier.column_names[0]]) if earlier.column_names[0] == "<RowID>" else earlier
    columns = [
        earlier.column(field.name).cast(field.type)
        if field.name in earlier.column_names
        else pa.nulls(len(earlier), field.type)
        for field in new.schema
    ]
    return pa.concat_tables([pa.Table.from_arrays(columns, schema=new.schema), new])
