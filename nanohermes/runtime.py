"""Wiring: build an Agent, and what the front ends hold, from configuration. The only module that
knows every part; it builds them and connects them, and decides nothing."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from nanohermes.config import Config
from nanohermes.configure import sandbox_for
from nanohermes.configured_tools import ConfiguredTools, configured_tools
from nanohermes.hooks import Hooks
from nanohermes.hooks.trust import hooks_in_force, unmatched_warnings
from nanohermes.loop.agent import Agent
from nanohermes.loop.approvals import Approvals, Approver
from nanohermes.lsp import Diagnostics
from nanohermes.memory.store import MemoryStore
from nanohermes.permissions.saved import SavedGrants
from nanohermes.permissions.table import PermissionSettings, unknown_tool_warnings
from nanohermes.prompt.skills import discover_skills
from nanohermes.prompt.system import SystemPrompt
from nanohermes.provider import Provider
from nanohermes.provider.caching import session_cache_key
from nanohermes.redact import Redactor
from nanohermes.repo_files import Boundary
from nanohermes.storage.checkpoints import Checkpoints
from nanohermes.storage.images import ImageStore
from nanohermes.storage.seen import once
from nanohermes.storage.session import Session
from nanohermes.storage.snapshots import Snapshots
from nanohermes.storage.worktrees import prune_leftovers
from nanohermes.tools import ToolContext
from nanohermes.tools.background import BackgroundTasks
from nanohermes.tools.builtin import all_tools

if TYPE_CHECKING:
    from nanohermes.mcp.asking import Asker
    from nanohermes.sandbox.policy import Policy


@dataclass
class Runtime:
    config: Config
    session: Session
    agent: Agent
    prompt: SystemPrompt
    memory: MemoryStore
    checkpoints: Checkpoints | None = None  # what write_file and edit_file changed, for /diff and /undo
    configured: ConfiguredTools | None = None  # web_search and the MCP servers, when config.toml has them
    sandbox: Policy | None = None  # what confines commands (None: the level is off)
    sandbox_summary: str = ""  # what is enforced here and what is not, in full (/sandbox, doctor, the JSON outputs)
    sandbox_backend: str = ""  # what confines commands: bwrap, landlock, seatbelt; "off"; "" when nothing can
    snapshots: Snapshots | None = None  # the workspace's files around changes, for /rewind
    diagnostics: Diagnostics | None = None  # the language servers a change is checked by (started on first use)

    def reset(self) -> None:
        self.prompt.rebuild()
        self.agent.reset()
        self.agent.hooks.session_start("clear")

    def switch(self, *, model: str | None = None, mode: str | None = None) -> None:
        """/model and /mode (and the mode-cycling key), from the next request on.

        Prompt caching: the system message and the tool list are otherwise byte-identical for
        a whole session. A switch is the one documented exception (docs/using.md, "Switching model
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

        tasks = self.agent.tasks
        with deferred():  # a second Ctrl-C must not leave tasks running or the session without its closing stats
            if tasks is not None:  # a session's background tasks end with it, process groups and all
                tasks.stop_all()
            if self.agent.helpers is not None:  # helpers' worktrees go with it (held changes too)
                self.agent.helpers.close()
            if self.configured is not None:  # MCP servers stop with the session
                self.configured.close()
            if self.diagnostics is not None:  # and the language servers
                self.diagnostics.close()
            if self.sandbox is not None:  # the session's private temp dir goes with it
                shutil.rmtree(self.sandbox.temp_dir, ignore_errors=True)
            if self.snapshots is not None:
                self.snapshots.close()
            self.session.close()


def build_runtime(
    config: Config,
    session_name: str | None,
    emit: Callable[[object], None],
    approve: Approver | None,
    cannot_ask_hint: str = "",
    ask_user: Asker | None = None,
    trust: Callable[[tuple], bool] | None = None,
    editor: object | None = None,
) -> Runtime:
    """Everything a front end needs. `approve` None: nothing can be asked (one-shot runs),
    and `cannot_ask_hint` tells the model how the user could allow a refused action.
    `ask_user`: how an MCP server's question (a form) is put to the user (None: declined). `trust(hooks)`:
    whether the user trusts the workspace's hooks, asked when they are not trusted yet (None: they
    run only if trusted before). `editor`: an editor's files and terminal the tools use instead of
    the disk and our own processes (ToolContext.editor)."""
    from nanohermes import events as ev

    config.resolved_api_key()  # fail before creating a session file
    warn = lambda text: emit(ev.Notice(text, "warning"))  # noqa: E731
    at_start = once(warn, config.home, config.workspace)  # what the files say: once per cause, not every start
    redactor = Redactor.for_config(config)  # one set of secrets for every edge: provider, tools, memory
    memory = MemoryStore.in_home(config.home, redactor)
    skills, skill_warnings = discover_skills(config.home, config.workspace, Boundary.for_config(config))
    for warning in skill_warnings:
        at_start(warning)
    sandbox, enforcement = sandbox_for(config)
    configured = configured_tools(config, sandbox)  # nothing starts here: MCP servers start on first use
    for warning in configured.warnings:
        at_start(warning)
    prompt = SystemPrompt(config, skills, warn, configured.listing)
    if configured.mcp is not None:
        configured.mcp.ask_user = ask_user  # a server's question for the user (None: declined, and said)
    hook_specs = hooks_in_force(config.hooks, config.home, config.workspace, trust, at_start)
    session = Session(config.home, session_name, workspace=config.workspace)
    diagnostics = Diagnostics(config.lsp, config.workspace, sandbox, warn)  # nothing starts here: on a first edit
    try:
        prune_leftovers(config.home)  # the helpers' worktrees a crashed session left
        notice = lambda text: emit(ev.Notice(text))  # noqa: E731
        key = session_cache_key(str(session.path))  # the same prompt_cache_key after a resume
        checkpoints = Checkpoints(config.home / "checkpoints" / session.name)
        images = ImageStore(checkpoints.root / "images")  # the images sent, with the session (storage/images.py)
        provider = Provider(config, on_retry=warn, on_wait=notice, redactor=redactor, cache_key=key, images=images)
        snapshots = Snapshots(
            checkpoints.root, config.workspace, config.home.resolve(), prompt=lambda: session.state.prompt_serial
        )
        ctx = ToolContext(
            tasks=BackgroundTasks(),
            workspace=config.workspace,
            home=config.home,
            command_timeout=config.command_timeout,
            allow_outside_workspace=config.allow_outside_workspace,
            memory=memory,
            skills=skills,
            checkpoints=checkpoints,
            snapshots=snapshots,
            redactor=redactor,
            sandbox=sandbox,
            editor=editor,
            images=images,
            diagnostics=diagnostics,
        )
        tools = all_tools(skills, configured.tools)
        approvals = approvals_for(config, approve, cannot_ask_hint, [t.name for t in tools], warn, at_start)
        hooks = session_hooks(hook_specs, config, session, emit, at_start, redactor, sandbox, approvals, tools)
        agent = Agent(
            config=config,
            provider=provider,
            session=session,
            tools=tools,
            ctx=ctx,
            system_prompt=prompt.system,
            recalls=True,  # the session's requests carry what memory holds relevant to them
            emit=emit,
            approvals=approvals,
            hooks=hooks,
        )
        prompt.window = lambda: agent.settings.window  # the skills listing follows the window learned
        if configured.mcp is not None:  # a server's sampling request: the session's model, tools off
            configured.mcp.sample = agent.sender.sample
        agent.resume()
        hooks.session_start("resume" if session.state.messages else "startup")
    except BaseException:
        session.close()
        configured.close()
        diagnostics.close()
        if sandbox is not None:
            shutil.rmtree(sandbox.temp_dir, ignore_errors=True)
        raise
    return Runtime(
        config, session, agent, prompt, memory, checkpoints, configured, sandbox, enforcement.summary,
        enforcement.backend, snapshots, diagnostics,
    )  # fmt: skip


def session_hooks(
    specs, config: Config, session: Session, emit, at_start, redactor, sandbox, approvals, tools
) -> Hooks:
    """The session's hooks, told the session's permission mode as it changes (/mode); a hook whose
    matcher no tool of the session satisfies is said first (`at_start`: once per cause)."""
    for warning in unmatched_warnings(specs, [tool.name for tool in tools]):
        at_start(warning)
    mode = lambda: approvals.mode  # noqa: E731
    where = (session.name, str(session.path))
    return Hooks(specs, config.workspace, where, emit, redactor.text, sandbox=sandbox, mode=mode)


def approvals_for(
    config: Config,
    approve: Approver | None,
    cannot_ask_hint: str,
    tool_names: list[str],
    warn: Callable[[str], None],
    at_start: Callable[[str], None] | None = None,
) -> Approvals:
    """The session's approvals: the mode, the rules in force (each warning about them said with
    `at_start`: once per cause) and the project's saved answers."""
    settings = config.permissions or PermissionSettings()
    saved = SavedGrants(config.home, config.workspace)
    saved.grants()  # read now, so a corrupt file is said at start
    problems = [*settings.warnings, *unknown_tool_warnings(settings.rules, tool_names)]
    for problem in problems + ([saved.problem] if saved.problem else []):
        (at_start or warn)(problem)
    return Approvals(config.mode, approve, cannot_ask_hint, settings.rules, saved, warn)
