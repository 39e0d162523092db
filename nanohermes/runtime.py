"""Wiring: build an Agent from configuration. The only module that knows every part."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from nanohermes.config import Config
from nanohermes.loop.agent import Agent
from nanohermes.loop.approvals import Approvals, Approver
from nanohermes.loop.subagents import Subagents
from nanohermes.prompt import build_system_prompt, gather_prompt_inputs
from nanohermes.prompt.skills import Skills, discover_skills
from nanohermes.provider import Provider
from nanohermes.redact import Redactor
from nanohermes.storage.checkpoints import Checkpoints
from nanohermes.storage.memory import MemoryStore, render_block
from nanohermes.storage.session import Session
from nanohermes.text import valid_unicode
from nanohermes.tools import Tool, ToolContext
from nanohermes.tools.background import BackgroundTasks
from nanohermes.tools.configured import ConfiguredTools, configured_tools
from nanohermes.tools.outputs import OutputStore


def all_tools(skills: Skills, configured: list[Tool] = ()) -> list[Tool]:
    """The built-in tools, then those config.toml adds (web_search, mcp), then `task`."""
    from nanohermes.tools.background_tools import TASK_TOOLS
    from nanohermes.tools.builtin import BUILTIN_TOOLS
    from nanohermes.tools.delegate import task
    from nanohermes.tools.knowledge import remember, skill
    from nanohermes.tools.recall import recall

    tools = [*BUILTIN_TOOLS, *TASK_TOOLS, remember, recall]
    if len(skills):  # an unused tool schema is paid for on every request
        tools.append(skill)
    return [
        *tools,
        *configured,
        task,
    ]  # last: a helper's list (all but `task`) is then a prefix of it, for prompt caches


class SystemPrompt:
    """The system message, built on start, resume and /reset only, so it is byte-identical
    across the requests of a session; and the memory block for each user message, which
    travels with that message (storage/memory.py: attach_block)."""

    def __init__(
        self, config: Config, memory: MemoryStore, skills: Skills, warn: Callable[[str], None], mcp_listing: str = ""
    ):
        self.config, self.memory, self.skills, self.warn = config, memory, skills, warn
        self.mcp_listing = mcp_listing  # fixed for the session, like the rest of the prefix
        self.text = ""
        self.memory_block = ""  # the latest one, for /context
        self.rebuild()

    def rebuild(self) -> None:
        inputs, warnings = gather_prompt_inputs(self.config, skills=self.skills, mcp_listing=self.mcp_listing)
        self.inputs = inputs
        self.text = valid_unicode(build_system_prompt(inputs))  # a workspace name that is not UTF-8, say
        for warning in warnings:
            self.warn(warning)

    def system(self) -> str:
        return self.text

    def set_mode(self, mode: str) -> None:
        """A mode switch changes the mode line only; the rest of the prefix stays as built."""
        self.config = replace(self.config, mode=mode)
        self.inputs = replace(self.inputs, mode=mode)
        self.text = valid_unicode(build_system_prompt(self.inputs))

    def memory_for(self, query: str) -> str:
        """The memory block for a user message ("" when nothing relevant is remembered)."""
        entries = []
        if query.strip():
            try:
                entries = self.memory.select_for_prompt(query)
            except Exception as exc:  # a broken memory file must not stop the agent
                self.warn(f"memory not used: {exc}")
        self.memory_block = render_block(entries)
        return self.memory_block


@dataclass
class Runtime:
    config: Config
    session: Session
    agent: Agent
    prompt: SystemPrompt
    memory: MemoryStore
    checkpoints: Checkpoints | None = None  # what write_file and edit_file changed, for /diff and /undo
    configured: ConfiguredTools | None = None  # web_search and the MCP servers, when config.toml has them

    def reset(self) -> None:
        self.prompt.rebuild()
        self.agent.reset()

    def switch(self, *, model: str | None = None, mode: str | None = None) -> None:
        """/model and /mode (and the mode-cycling key), from the next request on.

        Prompt caching: the system message and the tool list are otherwise byte-identical for
        a whole session. A switch is the one documented exception (README, "Switching model
        and mode"): a mode switch rewrites the mode line of the system message and changes the
        tools offered in plan mode; a model switch sends the same prefix to a model whose
        cache is cold anyway."""
        changes = {k: v for k, v in (("model", model), ("mode", mode)) if v is not None}
        self.config = replace(self.config, **changes)
        if mode is not None:
            self.prompt.set_mode(mode)
        self.agent.switch(self.config)

    def close(self) -> None:
        from nanohermes.signals import deferred

        tasks = self.agent.ctx.tasks
        with deferred():  # a second Ctrl-C must not leave tasks running or the session without its closing stats
            if tasks is not None:  # a session's background tasks end with it, process groups and all
                tasks.stop_all()
            if self.configured is not None:  # MCP servers stop with the session
                self.configured.close()
            self.session.close()


def build_runtime(
    config: Config,
    session_name: str | None,
    emit: Callable[[object], None],
    approve: Approver | None,
    cannot_ask_hint: str = "",
) -> Runtime:
    """Everything a front end needs. `approve` None: nothing can be asked (one-shot runs),
    and `cannot_ask_hint` tells the model how the user could allow a refused action."""
    from nanohermes import events as ev

    config.resolved_api_key()  # fail before creating a session file
    warn = lambda text: emit(ev.Notice(text, "warning"))  # noqa: E731
    memory = MemoryStore.in_home(config.home)
    skills, skill_warnings = discover_skills(config.home, config.workspace)
    for warning in skill_warnings:
        warn(warning)
    configured = configured_tools(config)  # nothing starts here: MCP servers start on first use
    for warning in configured.warnings:
        warn(warning)
    prompt = SystemPrompt(config, memory, skills, warn, configured.prompt_section)
    session = Session(config.home, session_name, workspace=config.workspace)
    try:
        subagents = Subagents()  # the `task` tool's helpers; they need the agent, set below
        provider = Provider(config, on_retry=warn, on_wait=lambda text: emit(ev.Notice(text)))
        outputs = OutputStore(session.state.outputs, session.state.facts, record=session.record_tool_output)
        checkpoints = Checkpoints(config.home / "checkpoints" / session.name)
        ctx = ToolContext(
            tasks=BackgroundTasks(),
            subagents=subagents,
            workspace=config.workspace,
            home=config.home,
            command_timeout=config.command_timeout,
            allow_outside_workspace=config.allow_outside_workspace,
            memory=memory,
            skills=skills,
            outputs=outputs,
            checkpoints=checkpoints,
            redactor=Redactor.for_config(config),
        )
        agent = Agent(
            config=config,
            provider=provider,
            session=session,
            tools=all_tools(skills, configured.tools),
            ctx=ctx,
            system_prompt=prompt.system,
            memory_for=prompt.memory_for,
            emit=emit,
            approvals=Approvals(config.mode, approve, cannot_ask_hint),
        )
        subagents.parent = agent
        agent.resume()
    except BaseException:
        session.close()
        configured.close()
        raise
    return Runtime(config, session, agent, prompt, memory, checkpoints, configured)
