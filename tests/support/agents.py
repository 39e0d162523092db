"""Builders shared by the loop tests: a real Agent over a real session and the scripted server."""

from __future__ import annotations

import os
from pathlib import Path

from nanohermes.cli import CANNOT_ASK_HINT
from nanohermes.config import Config
from nanohermes.loop.agent import Agent
from nanohermes.loop.approvals import Approvals
from nanohermes.provider import Provider
from nanohermes.redact import NO_SECRETS
from nanohermes.storage.session import Session
from nanohermes.tools import ToolContext, tool


@tool(params={"text": "text to echo"})
def echo(ctx, text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@tool(params={"size": "bytes to return"})
def big(ctx, size: int) -> str:
    """Return size bytes."""
    return "x" * size


@tool(params={"message": "error text"})
def explode(ctx, message: str) -> str:
    """Raise an exception."""
    raise RuntimeError(message)


@tool(params={"path": "file"}, approval=True)
def danger(ctx, path: str) -> str:
    """Needs approval."""
    Path(ctx.workspace, path).write_text("done")
    return f"wrote {path}"


TEST_TOOLS = [echo, big, explode, danger]


def make_config(server, workspace: Path, **kw) -> Config:
    home = Path(os.environ["NANOHERMES_HOME"])
    defaults = dict(
        model="test-model", base_url=server.url, api_key="sk-test", workspace=workspace, home=home, mode="auto"
    )
    defaults.update(kw)
    return Config(**defaults)


def make_agent(
    server, workspace: Path, *, tools=TEST_TOOLS, session_name=None, approve=None, events=None, sleep=None, **kw
):
    hooks = kw.pop("hooks", None)  # hooks/__init__.py's Hooks, for the hooks tests
    redactor = kw.pop("redactor", NO_SECRETS)  # the session's secrets (the provider knows only the config's)
    config = make_config(server, workspace, **kw)
    session = Session(config.home, session_name)
    sink = events if events is not None else []
    provider = Provider(
        config, on_retry=lambda text: sink.append(("retry", text)), sleep=sleep or (lambda s: sink.append(("sleep", s)))
    )
    ctx = ToolContext(workspace=workspace, home=config.home, redactor=redactor)
    agent = Agent(
        config=config,
        provider=provider,
        session=session,
        tools=tools,
        ctx=ctx,
        system_prompt=lambda: "SYSTEM",
        emit=sink.append,
        approvals=Approvals(config.mode, approve, CANNOT_ASK_HINT),
        hooks=hooks,
    )
    agent.resume()
    return agent
