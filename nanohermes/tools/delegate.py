"""`task`: hand a self-contained piece of work to a helper agent with a fresh context
(loop/subagents.py runs it, reached through ctx.subagents), so its reading never enters the
caller's window: only the helper's final answer comes back. With `isolation = "worktree"` the
helper works in a git worktree of its own (loop/isolated.py): such calls of one reply run side by
side, and each helper's diff is brought into the workspace when it answers."""

from __future__ import annotations

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, tool

WORKTREE = "worktree"


def _in_worktree(args: dict) -> bool:
    return args.get("isolation") == WORKTREE


@tool(
    params={"description": "", "prompt": "", "isolation": WORKTREE},
    lean=False,
    apart=_in_worktree,
)
def task(ctx: ToolContext, description: str, prompt: str, isolation: str = "") -> str:
    """Delegate a self-contained task to a fresh helper agent."""
    if ctx.subagents is None:
        raise ToolError("delegation is not available here (a helper cannot start helpers)")
    if not prompt.strip():
        raise ToolError("prompt is empty: say the whole task, the helper sees nothing else")
    if isolation.strip() not in ("", WORKTREE):
        raise ToolError(f'isolation is "{WORKTREE}" (a git worktree of its own) or left out, not {isolation!r}')
    return ctx.subagents.run(description, prompt, isolation.strip() == WORKTREE, ctx)
