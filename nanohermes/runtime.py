"""Wiring: build an Agent from configuration. The only module that knows every part."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from nanohermes.agent import Agent, Approver
from nanohermes.config import Config
from nanohermes.provider import Provider
from nanohermes.session import Session
from nanohermes.tools import ToolContext


def all_tools():
    from nanohermes.tools.builtin import BUILTIN_TOOLS

    return list(BUILTIN_TOOLS)


@dataclass
class Runtime:
    config: Config
    session: Session
    agent: Agent

    def close(self) -> None:
        self.session.close()


def build_runtime(config: Config, session_name: str | None, emit: Callable[[object], None], approve: Approver | None) -> Runtime:
    from nanohermes import events as ev

    config.resolved_api_key()  # fail before creating a session file
    session = Session(config.home, session_name)
    try:
        provider = Provider(config, on_retry=lambda text: emit(ev.Notice(text, "warning")))
        ctx = ToolContext(
            workspace=config.workspace, home=config.home, command_timeout=config.command_timeout,
            allow_outside_workspace=config.allow_outside_workspace,
        )
        agent = Agent(
            config=config, provider=provider, session=session, tools=all_tools(), ctx=ctx,
            system_for=lambda query: _basic_system(config), emit=emit, approve=approve,
        )
    except BaseException:
        session.close()
        raise
    return Runtime(config, session, agent)


def _basic_system(config: Config) -> str:
    return f"You are NanoHermes, a coding agent. Workspace: {config.workspace}. Mode: {config.mode}."
