"""Approvals: the one place that decides whether a tool call may run.

The mode says what needs asking (plan: only read-only tools are offered, and a call to
another is blocked with a result that says so; ask: writes, edits and commands ask; auto:
nothing asks), the approver asks the user, and grants remember the
"always" answers of this conversation.
"""

from __future__ import annotations

import json
from typing import Callable

from nanohermes.errors import ToolError
from nanohermes.tools import Tool, ToolContext, parse_arguments

Approver = Callable[[Tool, dict, str], str]  # (tool, arguments, preview) -> "yes" | "no" | "always"
PREVIEW_FALLBACK_CHARS = 500
# Plan mode offers only read-only tools, but a model may still call one it saw earlier in the
# session (before a /mode switch) or one it imagines: it must learn why, not "unknown tool".
PLAN_MODE_BLOCKED = ("blocked in plan mode: {name} can change files or run commands, and plan mode allows only "
                     "read-only tools, so it was not run. Use read-only tools and propose the change in your plan instead.")
# A read-only tool that finds, while it runs, that it is about to act (web_fetch reaching a
# local address): plan mode refuses that part.
PLAN_MODE_ASKED = ("blocked in plan mode: this {name} needs the user's approval (it can act on this machine or its "
                   "network), and plan mode allows only actions that change nothing, so it was not done.")


class Approvals:
    def __init__(self, mode: str, approver: Approver | None, cannot_ask_hint: str = ""):
        """`approver` None means nothing can be asked (a one-shot run): calls that need a yes
        are refused, and `cannot_ask_hint` tells the model how the user could allow them."""
        self.mode = mode
        self.approver = approver
        self.cannot_ask_hint = cannot_ask_hint
        self.grants: set[str] = set()
        self.unasked: list[str] = []  # tools refused because nothing could ask (read by the loop per turn)

    def offered(self, tools: list[Tool]) -> list[Tool]:
        """The tools the model may see in this mode: plan mode offers only read-only ones."""
        return [t for t in tools if self.mode != "plan" or not t.needs_approval]

    def refusal(self, tool: Tool, arguments: str, ctx: ToolContext) -> str | None:
        """None when the call may run; else the text the model gets instead of a result."""
        if self.mode == "plan" and tool.needs_approval:
            return PLAN_MODE_BLOCKED.format(name=tool.name)
        if not tool.needs_approval or self.mode == "auto" or tool.name in self.grants:
            return None
        if self.approver is None:
            self.unasked.append(tool.name)
            hint = f" {self.cannot_ask_hint}" if self.cannot_ask_hint else ""
            return f"refused: {tool.name} needs the user's approval and this non-interactive run cannot ask. It was not run.{hint}"
        try:
            args = parse_arguments(tool, arguments)
        except ToolError:
            return None  # dispatch rejects the same arguments with a clear error; nothing can run
        answer = self.approver(tool, args, _preview(tool, ctx, args))
        if answer == "always":
            self.grants.add(tool.name)
        if answer in ("yes", "always"):
            return None
        return f"refused: the user declined this {tool.name} call; it was not run. Ask or try another way."

    def confirm(self, tool: Tool, preview: str) -> str | None:
        """Asked by a tool while it runs, for an action only it can see coming (web_fetch reaching
        a local address after DNS or a redirect): None when allowed, else the text the model gets.
        Decided as a call that needs approval is, but plan mode refuses it: it may act."""
        if self.mode == "plan":
            return PLAN_MODE_ASKED.format(name=tool.name)
        if self.mode == "auto" or tool.name in self.grants:
            return None
        if self.approver is None:
            self.unasked.append(tool.name)
            hint = f" {self.cannot_ask_hint}" if self.cannot_ask_hint else ""
            return f"refused: this {tool.name} needs the user's approval and this non-interactive run cannot ask. It was not done.{hint}"
        answer = self.approver(tool, {}, preview)
        if answer == "always":
            self.grants.add(tool.name)
        if answer in ("yes", "always"):
            return None
        return f"refused: the user declined this {tool.name}; it was not done. Ask or try another way."

    def reset(self) -> None:
        """A new conversation starts without the old one's "always" answers."""
        self.grants.clear()


def _preview(tool: Tool, ctx: ToolContext, args: dict) -> str:
    try:
        return tool.preview(ctx, **args) if tool.preview else json.dumps(args)[:PREVIEW_FALLBACK_CHARS]
    except Exception as exc:  # a broken preview must never skip the question
        return f"(no preview: {type(exc).__name__}) {json.dumps(args, ensure_ascii=False)[:PREVIEW_FALLBACK_CHARS]}"
