"""`task`: hand a self-contained piece of work to a helper agent with a fresh context
(loop/subagents.py runs it, reached through ctx.subagents), so its reading never enters the
caller's window: only the helper's final answer comes back."""

from __future__ import annotations

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, tool


@tool(
    params={"description": "3-5 words", "prompt": ""},
    lean=False,
)
def task(ctx: ToolContext, description: str, prompt: str) -> str:
    """Delegate a self-contained task to a fresh helper agent; returns its answer."""
    if ctx.subagents is None:
        raise ToolError("delegation is not available here (a helper cannot start helpers)")
    if not prompt.strip():
        raise ToolError("prompt is empty: say the whole task, the helper sees nothing else")
    return ctx.subagents.run(description, prompt)
