"""The command line's ``agent`` command: an LLM answers a prompt with the tools of MCP servers, tools files and
OpenAPI documents, and the conversation and the tool-call log are printed.

The tools left out by the policy reach stderr as the warnings :func:`~knime_mcp.agent.loop.run_agent` logs. Ctrl-C
stops the run: the calls under way are cancelled on their servers, and what the run has is printed, marked as
interrupted (exit code 130).

    knime-mcp agent http://127.0.0.1:8000/mcp --provider ollama --model llama3.2 --prompt 'Hi'
    knime-mcp agent --openapi openapi.json --model gpt-4o-mini --api-key-env OPENAI_API_KEY --prompt 'Find pet 7'
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from knime_mcp.agent.tool_budget import MAX_OFFERED_SPEC_BYTES, MAX_OFFERED_TOOLS, ToolBudget
from knime_mcp.cli.approval_options import add_approval_options, approval_policy, approver, warn_unasked
from knime_mcp.cli.catalog import print_json
from knime_mcp.cli.policy_options import add_policy_options, refused_server, tool_policy
from knime_mcp.cli.render import one_line
from knime_mcp.cli.servers import SignInPrompt, add_task_option, configured_servers, configured_tags, server_spec
from knime_mcp.cli.tool_sources import ToolSource, add_tool_source_options, api_sources
from knime_mcp.cli.tool_stats_output import add_stats_option, stats_rows, write_stats
from knime_mcp.cli.tools_listing import add_strict_option, print_failures
from knime_mcp.config import demo_server_spec
from knime_mcp.errors import UsageError
from knime_mcp.llm.chat_model import DEFAULT_REQUEST_TIMEOUT, PROVIDERS, ChatModelConfig

if TYPE_CHECKING:
    from knime_mcp.agent.loop import AgentConfig, AgentRun
    from knime_mcp.config import ServerSpec
    from knime_mcp.tools.tool import MCPTool

__all__ = [
    "AgentSetup", "add_agent_command", "add_agent_options", "add_agent_run_options", "agent_setup", "chat_model_config",
    "run_agent_command",
]  # fmt: skip


INTERRUPTED = "Interrupted (Ctrl-C): the calls under way were cancelled on their servers."
"""The last line of an agent run Ctrl-C stopped, after the conversation and the tool calls it has."""


class AgentSetup(NamedTuple):
    """What the flags of ``agent`` and ``chat`` describe, checked before anything connects."""

    specs: list[ServerSpec]
    files: ToolSource | None
    model: ChatModelConfig
    api_key: str | None
    config: AgentConfig
    strict: bool
    """``--strict``: a server that fails fails the run, instead of being left out and named on ``err``."""
    err: TextIO
    server_tags: Mapping[str, Sequence[str]]
    """The ``"tags"`` ``--config`` gives each of its servers, by their keys."""

    async def tools(self, show: SignInPrompt) -> list[MCPTool]:
        """The tools of the servers, listed at once as ``tools --config`` lists them, then those of the tools files
        and OpenAPI documents; with several named servers (those of ``--config``), each name prefixed by its
        server's key, as ``tools --config`` names them, and tagged as it tags them."""
        from knime_mcp.calls.listing import list_servers_tools

        tools: list[MCPTool] = []
        if self.specs:
            several = len(self.specs) > 1  # a server of --config has its key as its name
            servers = [(spec.name if several else None, spec) for spec in self.specs]
            listing = await list_servers_tools(
                servers, server_tags=self.server_tags, show_sign_in=show, strict=self.strict
            )
            print_failures(listing.failed, self.err)
            tools += listing.tools
        if self.files is not None:
            tools += await self.files.file_tools()
        return tools


def add_agent_command(commands: Any, parent: argparse.ArgumentParser) -> None:
    """Add ``agent`` to the CLI's subparsers; ``parent`` holds the server options it shares with the others."""
    agent = commands.add_parser(
        "agent", parents=[parent], help="let an LLM answer a prompt with the servers' tools; print the conversation"
    )
    add_agent_options(agent)


def add_agent_options(agent: argparse.ArgumentParser) -> None:
    """``agent``'s options: those of every agent run, the prompt and the output format."""
    add_agent_run_options(agent)
    agent.add_argument("--prompt", required=True, help="the user message")
    agent.add_argument("--format", choices=["text", "json"], default="text")


def add_agent_run_options(agent: argparse.ArgumentParser) -> None:
    """The servers and other tool sources, the chat model, the run's limits, the tool policy and approval (``agent``
    and ``chat``)."""
    agent.add_argument(
        "servers", nargs="*", metavar="SERVER", help="an http(s) URL or a quoted command line; none: the demo server"
    )
    agent.add_argument("--provider", choices=list(PROVIDERS), default="openai", help="the chat model's API")
    agent.add_argument(
        "--base-url",
        metavar="URL",
        help="the provider's endpoint (default: the provider's own; azure: the resource's endpoint; openai: the API "
        "root of any OpenAI-compatible server)",
    )
    agent.add_argument("--api-version", metavar="VERSION", help="azure: the API version, e.g. 2024-10-21")
    agent.add_argument("--model", required=True, help="the model's name at the provider (azure: the deployment's)")
    agent.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    agent.add_argument("--system", help="the system message (default: a short helpful-assistant one)")
    agent.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    agent.add_argument("--max-tokens", type=int, help="most tokens per reply (default: the server's)")
    agent.add_argument("--request-timeout", type=float, default=DEFAULT_REQUEST_TIMEOUT, metavar="SECONDS")
    agent.add_argument("--iteration-limit", type=int, help="model calls per run (default: 25)")
    agent.add_argument("--on-limit", choices=["fail", "final-answer"], default="fail", help="at the limit")
    agent.add_argument(
        "--concurrency",
        type=int,
        help="tool calls at once (default: 4); calls of a tool that may write run one at a time per server",
    )
    agent.add_argument(
        "--resources", action="store_true", help="offer the model tools to list and read the servers' resources"
    )
    agent.add_argument(
        "--skills",
        metavar="DIR",
        help="a folder of Agent Skills (subfolders each with a SKILL.md): the model is told each skill's name and "
        "description and reads a skill's instructions and files when it chooses; nothing in a skill is run unless "
        "--allow-skill-scripts",
    )
    agent.add_argument(
        "--allow-skill-scripts",
        action="store_true",
        help="let the model run the scripts inside the --skills folders (run_skill_script: no shell, in the skill's "
        "folder, .py with this Python, .sh with bash, .js with node, else only executable files; 60 s at most; needs "
        "--permit files,processes when --permit is given)",
    )
    agent.add_argument(
        "--tool-budget",
        type=int,
        default=MAX_OFFERED_TOOLS,
        metavar="N",
        help=f"the most tools offered to the model at once (default: {MAX_OFFERED_TOOLS}); with more, the model "
        "searches them",
    )
    agent.add_argument(
        "--tool-budget-bytes",
        type=int,
        default=MAX_OFFERED_SPEC_BYTES,
        metavar="BYTES",
        help=f"the most bytes of tool specs offered at once (default: {MAX_OFFERED_SPEC_BYTES:,}); with more, the "
        "model searches them",
    )
    agent.add_argument(
        "--pin", metavar="REGEX", help="tools always offered when the model searches: those whose name it finds"
    )
    agent.add_argument(
        "--no-server-instructions",
        dest="server_instructions",
        action="store_false",
        help="leave out what the servers say about themselves (their instructions) from the system message",
    )
    agent.add_argument(
        "--hints",
        action="store_true",
        help="end each tool's description with its hints, the 'Expected time (s)' and 'Cost' columns of its --tools "
        "file, so the model can prefer the faster or cheaper tool",
    )
    add_stats_option(agent, "at the end of the run (chat: when it ends)")
    add_task_option(agent)
    add_strict_option(agent)
    add_tool_source_options(agent, base_url="--openapi-base-url")
    add_policy_options(agent, "block")
    add_approval_options(agent)


def chat_model_config(args: argparse.Namespace) -> ChatModelConfig:
    """The chat model the flags describe; its key stays in the environment variable they name. A flag the provider
    needs, or one it has no use for, is a usage error that names it, found before anything connects."""
    info = PROVIDERS[args.provider]
    if not args.base_url and info.default_base_url is None:
        raise UsageError(
            f"--provider {args.provider} needs --base-url, the endpoint of your resource.",
            hint=f"Pass --base-url {info.example_base_url}.",
        )
    if info.needs_api_version and not args.api_version:
        raise UsageError(
            f"--provider {args.provider} needs --api-version.",
            hint="Pass an API version your deployment supports, e.g. --api-version 2024-10-21.",
        )
    if args.api_version is not None and not info.needs_api_version:
        raise UsageError(f"--api-version is not used by --provider {args.provider}.", hint="Leave out --api-version.")
    return ChatModelConfig(
        provider=args.provider,
        base_url=args.base_url,
        model=args.model,
        api_version=args.api_version,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout=args.request_timeout,
    )


def agent_setup(args: argparse.Namespace, command: list[str], err: TextIO) -> AgentSetup:
    """The servers, tool files, chat model (and its key, from the environment) and run settings of the flags."""
    from knime_mcp.agent.loop import DEFAULT_ITERATION_LIMIT, DEFAULT_MAX_CONCURRENCY, AgentConfig
    from knime_mcp.config import ServerRequestPolicy
    from knime_mcp.llm.chat_model import resolve_api_key

    targets = [[text] if text.startswith(("http://", "https://")) else shlex.split(text) for text in args.servers]
    targets += [command] if command else []
    if args.name and len(targets) > 1:
        raise UsageError("--name names a single server; leave it out with several servers.")
    files = ToolSource(args, [], err) if args.tools or api_sources(args) or args.programs else None
    specs = [server_spec(words, args) for words in targets] or list(configured_servers([], args).values())
    specs = specs or ([] if files else [demo_server_spec()])
    policy = tool_policy(args)
    refusals = {spec: refused_server(spec, policy.granted) for spec in specs}  # never started nor reached
    for refusal in filter(None, refusals.values()):
        print(f"Not listed: {one_line(refusal)}", file=err)
    specs = [spec for spec, refusal in refusals.items() if refusal is None]
    if args.skills is not None and not Path(args.skills).expanduser().is_dir():
        raise UsageError(
            f"--skills {args.skills}: no such folder.", hint="Pass a folder whose subfolders each hold a SKILL.md."
        )
    model = chat_model_config(args)
    api_key = resolve_api_key(model)
    config = AgentConfig(
        iteration_limit=DEFAULT_ITERATION_LIMIT if args.iteration_limit is None else args.iteration_limit,
        on_limit="final_answer" if args.on_limit == "final-answer" else "fail",
        errors="column",
        max_concurrency=DEFAULT_MAX_CONCURRENCY if args.concurrency is None else args.concurrency,
        policy=policy,
        trust_all_servers=args.trust_all_servers,
        server_requests=ServerRequestPolicy(elicitation=args.elicitation),
        resources=args.resources,
        skills=args.skills,
        skill_scripts=args.allow_skill_scripts,
        tool_budget=ToolBudget(tools=args.tool_budget, spec_bytes=args.tool_budget_bytes, pinned=args.pin),
        approval=approval_policy(args),
        tasks=args.tasks,
        server_instructions=args.server_instructions,
        tool_hints=args.hints,
    )
    warn_unasked(config, err)
    return AgentSetup(specs, files, model, api_key, config, args.strict, err, configured_tags(args))


def run_agent_command(
    args: argparse.Namespace, command: list[str], out: TextIO, err: TextIO, show: SignInPrompt
) -> int:
    from knime_mcp.agent.loop import run_agent
    from knime_mcp.llm.chat_model import build_chat_model
    from knime_mcp.mcp.sync import Interrupt, run_sync

    setup = agent_setup(args, command, err)
    decider = approver(args, err)
    interrupt = Interrupt()

    async def agent() -> AgentRun:
        tools = await setup.tools(show)
        system = {} if args.system is None else {"system_message": args.system}
        chat = build_chat_model(setup.model, setup.api_key)
        return await run_agent(
            chat, tools, args.prompt, config=setup.config, secrets=[setup.api_key], show_sign_in=show,
            approver=decider, interrupt=interrupt, **system,
        )  # fmt: skip

    result = run_sync(agent, interrupt=interrupt)
    if args.format == "json":
        rows = result.conversation.rows(error_column=True)
        log = [entry.to_dict() for entry in result.log]
        stats = {"tool_statistics": stats_rows(result.log)} if args.stats else {}
        print_json({"conversation": rows, "tool_calls": log, "interrupted": result.interrupted, **stats}, out)
    else:
        from knime_mcp.cli.render import render_agent_run

        out.write(render_agent_run(result))
        if args.stats:
            write_stats(result.log, out)
        if result.interrupted:
            out.write(f"{INTERRUPTED}\n")
    if result.interrupted:
        raise KeyboardInterrupt  # after what the run has: the exit of every interrupted command (130)
    if result.failure is not None:
        raise result.failure
    return 0
