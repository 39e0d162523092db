"""Approvals: the one place that decides whether a tool call may run.

The mode says what needs asking (plan: only read-only tools are offered, and a call to
another is blocked with a result that says so; ask: writes, edits and commands ask; auto:
nothing asks), the approver asks the user, and grants remember the "always" answers of this
conversation, each scoped (loop/grants.py): a command prefix, a path, or a whole tool. A "no"
may carry the user's reason, which the model reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.calls import WRITING_TOOLS
from nanohermes.errors import ToolError
from nanohermes.loop.grants import TOOL, Grant, covers, grant_for
from nanohermes.tools import Tool, ToolContext, parse_arguments

PREVIEW_FALLBACK_CHARS = 500
# Plan mode offers only read-only tools, but a model may still call one it saw earlier in the
# session (before a /mode switch) or one it imagines: it must learn why, not "unknown tool".
PLAN_MODE_BLOCKED = (
    "blocked in plan mode: {name} can change files or run commands, and plan mode allows only "
    "read-only tools, so it was not run. Use read-only tools and propose the change in your plan instead."
)
# A read-only tool that finds, while it runs, that it is about to act (web_fetch reaching a
# local address): plan mode refuses that part.
PLAN_MODE_ASKED = (
    "blocked in plan mode: this {name} needs the user's approval (it can act on this machine or its "
    "network), and plan mode allows only actions that change nothing, so it was not done."
)


@dataclass(frozen=True)
class Decision:
    answer: str  # "yes" | "no" | "always"
    reason: str = ""  # with "no": why, or what to do instead, in the user's words


# (tool, arguments, preview) -> "yes" | "no" | "always", or a Decision (a "no" with a reason)
Approver = Callable[[Tool, dict, str], str | Decision]


class Approvals:
    def __init__(self, mode: str, approver: Approver | None, cannot_ask_hint: str = ""):
        """`approver` None means nothing can be asked (a one-shot run): calls that need a yes
        are refused, and `cannot_ask_hint` tells the model how the user could allow them."""
        self.mode = mode
        self.approver = approver
        self.cannot_ask_hint = cannot_ask_hint
        self.grants: list[Grant] = []
        self.unasked: list[str] = []  # tools refused because nothing could ask (read by the loop per turn)

    def offered(self, tools: list[Tool]) -> list[Tool]:
        """The tools the model may see in this mode: plan mode offers only read-only ones."""
        return [t for t in tools if self.mode != "plan" or not t.needs_approval]

    def refusal(self, tool: Tool, arguments: str, ctx: ToolContext) -> str | None:
        """None when the call may run; else the text the model gets instead of a result."""
        if self.mode == "plan" and tool.needs_approval:
            return PLAN_MODE_BLOCKED.format(name=tool.name)
        if not tool.needs_approval or self.mode == "auto":
            return None
        try:
            args = parse_arguments(tool, arguments)
        except ToolError:
            return None  # dispatch rejects the same arguments with a clear error; nothing can run
        if tool.asks is not None and not tool.asks(args):
            return None
        if sandboxed(tool.name, args, ctx):  # the sandbox confines it: nothing to ask
            return None
        path = _shown_path(tool.name, args, ctx)
        if any(covers(g, tool.name, args, path) for g in self.grants):
            return None
        if self.approver is None:
            self.unasked.append(tool.name)
            hint = f" {self.cannot_ask_hint}" if self.cannot_ask_hint else ""
            return (
                f"refused: {tool.name} needs the user's approval and this non-interactive run cannot ask. "
                f"It was not run.{hint}"
            )
        answer = self.approver(tool, args, _preview(tool, ctx, args))
        decision = answer if isinstance(answer, Decision) else Decision(answer)
        if decision.answer == "always":
            self.grant(grant_for(tool.name, args, path))
        if decision.answer in ("yes", "always"):
            return None
        refused = f"refused: the user declined this {tool.name} call; it was not run."
        if decision.reason:
            return f"{refused} The user said: {decision.reason}"
        return f"{refused} Ask or try another way."

    def scope(self, tool: Tool, args: dict, ctx: ToolContext) -> Grant:
        """What an "always" for this call would cover (the prompt names it before asking)."""
        return grant_for(tool.name, args, _shown_path(tool.name, args, ctx))

    def grant(self, grant: Grant) -> None:
        if grant not in self.grants:
            self.grants.append(grant)

    def revoke(self, grant: Grant) -> None:
        self.grants.remove(grant)

    def confirm(self, tool: Tool, preview: str) -> str | None:
        """Asked by a tool while it runs, for an action only it can see coming (web_fetch reaching
        a local address after DNS or a redirect): None when allowed, else the text the model gets.
        Decided as a call that needs approval is, but plan mode refuses it: it may act."""
        if self.mode == "plan":
            return PLAN_MODE_ASKED.format(name=tool.name)
        grant = Grant(TOOL, tool.name)  # "always" here covers such actions of this tool, this conversation
        if self.mode == "auto" or grant in self.grants:
            return None
        if self.approver is None:
            self.unasked.append(tool.name)
            hint = f" {self.cannot_ask_hint}" if self.cannot_ask_hint else ""
            return (
                f"refused: this {tool.name} needs the user's approval and this non-interactive run cannot ask. "
                f"It was not done.{hint}"
            )
        answer = self.approver(tool, {}, preview)
        decision = answer if isinstance(answer, Decision) else Decision(answer)  # the REPL and ACP answer Decisions
        if decision.answer == "always":
            self.grant(grant)
        if decision.answer in ("yes", "always"):
            return None
        refused = f"refused: the user declined this {tool.name}; it was not done."
        return (
            f"{refused} The user said: {decision.reason}" if decision.reason else f"{refused} Ask or try another way."
        )

    def reset(self) -> None:
        """A new conversation starts without the old one's "always" answers."""
        self.grants.clear()


def sandboxed(tool_name: str, args: dict, ctx: ToolContext) -> bool:
    """A command that will run inside the enforced sandbox: the model did not ask to leave it."""
    return (
        tool_name == "run_command" and not args.get("unsandboxed") and ctx.sandbox is not None and ctx.sandbox.confined
    )


def _shown_path(tool_name: str, args: dict, ctx: ToolContext) -> str | None:
    """An edit's path as the tools show it, so `a/../x.py` and `x.py` are one grant."""
    if tool_name not in WRITING_TOOLS or not isinstance(args.get("path"), str):
        return None
    from nanohermes.tools.paths import display_path, resolve_path

    try:
        return display_path(ctx, resolve_path(ctx, args["path"], must_exist=False))
    except ToolError:
        return None


def _preview(tool: Tool, ctx: ToolContext, args: dict) -> str:
    try:
        return tool.preview(ctx, **args) if tool.preview else json.dumps(args)[:PREVIEW_FALLBACK_CHARS]
    except Exception as exc:  # a broken preview must never skip the question
        return f"(no preview: {type(exc).__name__}) {json.dumps(args, ensure_ascii=False)[:PREVIEW_FALLBACK_CHARS]}"
