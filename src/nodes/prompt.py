"""MCP Prompt: a node that lists an MCP server's prompts and gets one as a conversation for the Agent Prompter."""

from __future__ import annotations

import logging

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.connection import check_servers, chosen_connection
from nodes.knime_io.conversation import conversation_schema, knime_conversation
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.tables import arrow_batches
from nodes.knime_io.warnings import add_warning
from nodes.parameters.auth import AuthSettings
from nodes.parameters.server import (
    RowErrorOptions,
    ServerSettings,
    on_error,
    pasted_config_parameter,
    server_key_parameter,
)
from nodes.parameters.timeouts import TimeoutSettings

LOGGER = logging.getLogger(__name__)


@knext.parameter_group(label="Prompt")
class PromptSettings:
    name = knext.StringParameter(
        "Prompt name",
        "The name of the prompt to get, as the first output lists it. Empty: only list the prompts.",
        "",
    )
    arguments = knext.MultilineStringParameter(
        "Arguments (JSON)",
        'The prompt\'s arguments as a JSON object, e.g. {"city": "Bern"}; values that are not text are sent as their '
        "JSON. With an input table, its columns named like the prompt's arguments override these values, row by row.",
        "",
    )
    on_error = knext.EnumParameter(
        "Error handling",
        "With an input table: what a row whose prompt cannot be got does (e.g. a required argument without a value).",
        RowErrorOptions.FAIL.name,
        RowErrorOptions,
    )


@knext.node("MCP Prompt", knext.NodeType.SOURCE, "icons/prompt.png", category=CATEGORY, id="MCPPrompt")
@knext.input_table(
    "Arguments",
    "One prompt per row: columns named like the prompt's arguments give their values.",
    optional=True,
)
@knext.output_table(
    "Prompts",
    "One row per prompt of the server: name, title, description, arguments (JSON) and the required arguments.",
)
@knext.output_table(
    "Conversation",
    "The prompt's messages as a conversation table, as the Agent Prompter outputs it and takes it as history.",
)
class MCPPrompt:
    """Gets a prompt of an MCP server as a conversation that an agent can continue.

    Connects to a Model Context Protocol server as the **MCP Tool Provider** does (the same server, authentication
    and timeout settings, OAuth sign-in included, or a pasted configuration: of several servers in it, the *Server
    key* picks one) and lists its prompts, following pagination, in the first output: *Name*, *Title*,
    *Description*, *Arguments* (JSON: each argument's name, description and whether it is required) and *Required
    arguments*.

    With a *Prompt name* the node also gets that prompt and outputs its messages in the second output, in the form
    of the **Agent Prompter**'s conversation table (*Role*, *Content*, *Tool Calls*, *Tool Call ID*, *Tool Name*,
    *Images*, *Image*): connect it to the Agent Prompter's conversation input, and the server's prompt starts the
    agent's run. Text is the content; an image (also an embedded image resource) is kept as a data URL in *Images*
    and shown as a PNG image cell in *Image*; the text of an embedded resource is the content; audio, binary
    resources and resource links become a note naming them.

    The arguments come from the JSON object of the settings, or, with a table connected, from each of its rows
    (columns named like the arguments, overriding the JSON's values): the messages of every row follow one another,
    and the table gets an *Error* column. A required argument without a value is refused before anything is sent,
    naming the argument: per row, in that row's *Error* when *Error handling* says so.
    """

    pasted_config = pasted_config_parameter("The node uses one server of it: the one the 'Server key' names.")
    server_key = server_key_parameter()
    server = ServerSettings()
    auth = AuthSettings()
    timeouts = TimeoutSettings()
    prompt = PromptSettings()

    def configure(
        self, ctx: knext.ConfigurationContext, data: knext.Schema | None
    ) -> tuple[knext.Schema, knext.Schema]:
        from knime_mcp.catalog.prompt_messages import PROMPT_COLUMNS, parse_arguments

        with knime_errors():
            check_servers(ctx, self.pasted_config, self.server_key, self.server, self.auth, self.timeouts)
            parse_arguments(self.prompt.arguments)
        prompts = knext.Schema.from_columns([knext.Column(knext.string(), name) for name in PROMPT_COLUMNS])
        return prompts, conversation_schema(data is not None)

    def execute(self, ctx: knext.ExecutionContext, data: knext.Table | None) -> tuple[knext.Table, knext.Table]:
        from knime_mcp.catalog.prompt_messages import get_prompt_sync, parse_arguments

        with knime_errors():
            spec, connection = chosen_connection(
                ctx, self.pasted_config, self.server_key, self.server, self.auth, self.timeouts, LOGGER
            )
            run = get_prompt_sync(
                spec,
                self.prompt.name,
                arguments=parse_arguments(self.prompt.arguments),
                batches=arrow_batches(data) if data is not None else None,
                on_error=on_error(self.prompt.on_error),
                total_rows=data.num_rows if data is not None else None,
                **connection,
            )
        if run.errors:
            add_warning(ctx, f"{run.errors} row(s) failed; see the 'Error' column.")
        return knext.Table.from_pyarrow(run.listing), knime_conversation(run.conversation)
