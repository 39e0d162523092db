"""Approvals: the one place that decides whether a tool call may run.

In this order:
1. plan mode offers only read-only tools, and run_command inside the sandbox (read-only there:
   sandbox/actors.py); a call to another is blocked with a result saying so;
2. rules (permissions/rules.py, from config.toml, the project's file and --allow/--deny): a
   deny refuses, an ask asks, in every mode (auto and --yes too; a -p run that cannot ask
   refuses), an allow runs;
3. the mode: auto asks nothing; ask and accept-edits ask for calls that act (a write, an
   edit, a command, an MCP call, `remember`), except a command that runs inside the enforced
   sandbox, and, in accept-edits, a write or edit inside the workspace (not under `.git/`,
   `.nanohermes/` or `.claude/`, which the sandbox keeps from commands too);
4. the answers given before: saved for this project ("always", permissions/saved.py) or for
   this session ("session"), each scoped (permissions/grants.py): a command prefix, an exact command,
   a path, one MCP tool, a tool.
PreToolUse hooks (hooks/) have their say after the deny rules: a hook's deny refuses, its ask
asks (even in auto mode, past a grant or an allow rule), and the user's own hook's allow skips
step 3 and 4's question, never a rule's, plan mode's or leaving the sandbox (`unsandboxed`).
A "no" may carry the user's reason, which the model reads.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.calls import WRITING_TOOLS
from nanohermes.errors import NanoHermesError, ToolError
from nanohermes.hooks import ToolVerdict
from nanohermes.memory.entry_points import DROP, HOLD, SAVE
from nanohermes.permissions.grants import TOOL, Grant, covers, grant_for
from nanohermes.permissions.rules import ALLOW, ASK, DENY, PATH_TOOLS, Call, Rule, suggest_rule, verdict
from nanohermes.tools import Tool, ToolContext, parse_arguments
from nanohermes.workspace import in_state_dir

PREVIEW_FALLBACK_CHARS = 500
RESOLVED_PER_CALL = 256  # paths a call's words resolve to, kept while its rules and grants are checked
# Plan mode offers only read-only tools, but a model may still call one it saw earlier in the
# session (before a /mode switch) or one it imagines: it must learn why, not "unknown tool".
PLAN_MODE_BLOCKED = (
    "blocked in plan mode: {name} can change files or run commands, and plan mode allows only "
    "read-only tools, so it was not run. Use read-only tools and propose the change in your plan instead."
)
PLAN_MODE_COMMAND = (
    "blocked in plan mode: commands run only inside the sandbox there (read-only), and this one "
    "asked to leave it or the sandbox is off, so it was not run. Propose it in your plan instead."
)
PLAN_MODE_UNTRUSTED = (
    "blocked in plan mode: only the tools of MCP servers the user marked trusted run in plan mode, "
    "and this server is not one, so it was not run. Propose the call in your plan instead."
)
# A read-only tool that finds, while it runs, that it is about to act (web_fetch reaching a
# local address): plan mode refuses that part.
PLAN_MODE_ASKED = (
    "blocked in plan mode: this {name} needs the user's approval (it can act on this machine or its "
    "network), and plan mode allows only actions that change nothing, so it was not done."
)
DENIED = "refused: a deny rule ({rule}, from {source}) forbids this {name} call; it was not run. Do not retry it."
ASKED_BY_RULE = "An ask rule ({rule}, from {source}) makes it ask every time; only an interactive session can allow it."
YES_ANSWERS = ("yes", "always", "session")
HOOK_DENIED = "refused: a PreToolUse hook blocked this {name} call; it was not run. Its reason: {reason}"
HOOK_ASKS = "A PreToolUse hook ({command}) asks you to decide: {reason}"
ASKED_BY_HOOK = "A PreToolUse hook makes it ask; only an interactive session can allow it."
# Inside the workspace, yet read later by programs that run outside the sandbox (git's hooks
# and config) or by NanoHermes itself (the project's rules and skills): accept-edits asks.
PROTECTED_PARTS = (".git", ".nanohermes", ".claude")


@dataclass(frozen=True)
class Decision:
    answer: str  # "yes" | "no" | "always" (this project) | "session" (this session)
    reason: str = ""  # with "no": why, or what to do instead, in the user's words


# (tool, arguments, preview) -> "yes" | "no" | "always" | "session", or a Decision (a "no" with a reason)
Approver = Callable[[Tool, dict, str], str | Decision]


@dataclass(frozen=True)
class _Asked:
    """How a question about one action is worded when it cannot be asked or is declined."""

    who: str  # "run_command" / "this web_fetch"
    what: str  # "this run_command call" / "this web_fetch"
    done: str  # "run" / "done"


class Approvals:
    def __init__(
        self,
        mode: str,
        approver: Approver | None,
        cannot_ask_hint: str = "",
        rules: tuple[Rule, ...] = (),
        saved=None,
        warn: Callable[[str], None] | None = None,
    ):
        """`approver` None means nothing can be asked (a one-shot run): calls that need a yes
        are refused, and `cannot_ask_hint` tells the model how the user could allow them
        (`{allow}` in it becomes the --allow flags that would have). `saved`: the project's
        saved answers (permissions/saved.py; None: "always" lasts for the session)."""
        self.mode = mode
        self.approver = approver
        self.cannot_ask_hint = cannot_ask_hint
        self.rules = tuple(rules)
        self.saved = saved
        self.session: list[Grant] = []  # "this session only" answers (a helper agent shares the list)
        self.warn = warn or (lambda text: None)
        self.unasked: list[str] = []  # tools refused because nothing could ask (read by the loop per turn)
        self.suggested: dict[str, None] = {}  # the allow rules that would have allowed them, in order

    @property
    def grants(self) -> list[Grant]:
        """Every answer in force: saved for this project, then this session's."""
        return [*(self.saved.grants() if self.saved is not None else []), *self.session]

    def offered(self, tools: list[Tool]) -> list[Tool]:
        """The tools the model may see in this mode: plan mode offers only read-only ones."""
        return [t for t in tools if self.mode != "plan" or not t.needs_approval or t.plan_allowed is not None]

    def refusal(self, tool: Tool, arguments: str, ctx: ToolContext, hook: ToolVerdict | None = None) -> str | None:
        """None when the call may run; else the text the model gets instead of a result. `hook`: what
        PreToolUse hooks said (deny refuses; ask asks, whatever the mode or a grant; the user's own
        hook's allow skips the mode's question, never a deny or ask rule, plan mode or leaving the sandbox)."""
        found = self._verdict(tool, arguments, ctx, hook)
        if not isinstance(found, tuple):
            return found
        call, args, rule, effect = found
        scope = None if rule is not None else grant_for(tool.name, args, call.shown_path, call.workspace, call.resolve)
        words = _Asked(tool.name, f"this {tool.name} call", "run")
        if effect == ASK:  # no --allow would do: say so, and show the question the hook's reason
            preview = HOOK_ASKS.format(command=hook.command, reason=hook.reason) + "\n" + _preview(tool, ctx, args)
            return self._ask(tool, args, preview, None, words, " " + ASKED_BY_HOOK)
        return self._ask(tool, args, _preview(tool, ctx, args), scope, words, self._hint(call, rule))

    def asks(self, tool: Tool, arguments: str, ctx: ToolContext, hook: ToolVerdict | None = None) -> bool:
        """Whether refusal() would ask the user about this call (an editor shows it as waiting)."""
        return isinstance(self._verdict(tool, arguments, ctx, hook), tuple)

    def _verdict(self, tool: Tool, arguments: str, ctx: ToolContext, hook: ToolVerdict | None):
        """None: the call may run; a str: it is refused with that text; (call, args, rule, the hook's
        effect): the user decides."""
        if self.mode == "plan" and tool.needs_approval and not _plan_allows(tool, arguments, ctx):
            if tool.name == "run_command":
                return PLAN_MODE_COMMAND
            return (PLAN_MODE_UNTRUSTED if tool.plan_allowed is not None else PLAN_MODE_BLOCKED).format(name=tool.name)
        try:
            args = parse_arguments(tool, arguments)
        except ToolError:
            return None  # dispatch rejects the same arguments with a clear error; nothing can run
        call = call_of(tool.name, args, ctx)
        args = call.args
        rule = verdict(self.rules, call)
        if rule is not None and rule.effect == DENY:
            return DENIED.format(rule=rule.text(), source=rule.source, name=tool.name)
        effect = hook.effect if hook is not None else None
        if effect == DENY:
            return HOOK_DENIED.format(name=tool.name, reason=hook.reason)
        if rule is not None and rule.effect == ALLOW and effect != ASK:
            return None
        if rule is None and effect == ALLOW and not leaves_sandbox(tool.name, args):
            return None
        if rule is None and effect != ASK and not self._needs_a_yes(tool, call, ctx):
            return None
        return call, args, rule, effect

    def _needs_a_yes(self, tool: Tool, call: Call, ctx: ToolContext) -> bool:
        """The mode's default and the answers given before (steps 3 and 4 of the module's order)."""
        if not tool.needs_approval or self.mode == "auto":
            return False
        if tool.asks is not None and not tool.asks(call.args):
            return False
        if sandboxed(tool.name, call.args, ctx):  # the sandbox confines it: nothing to ask
            return False
        if tool.name in WRITING_TOOLS:
            if refused_by_the_tool(call.args, ctx):
                return False  # outside the workspace as written: the tool refuses it whatever the answer
            if self.mode == "accept-edits" and edited_without_asking(call.shown_path):
                return False
        return not any(
            covers(g, tool.name, call.args, call.shown_path, call.workspace, call.resolve) for g in self.grants
        )

    def scope(self, tool: Tool, args: dict, ctx: ToolContext) -> Grant | None:
        """What an "always" for this call would cover (the question names it before asking);
        None when nothing may last: an ask rule decides it, or it names a path outside the workspace."""
        call = call_of(tool.name, args, ctx)
        rule = verdict(self.rules, call)
        if rule is not None and rule.effect == ASK:
            return None
        return grant_for(tool.name, args, call.shown_path, call.workspace, call.resolve)

    def for_memory(self, args: dict) -> str:
        """What a compaction found worth remembering (`args`: remember's text and kind), under the
        approval `remember` needs, asking nobody: SAVE when a remember call would run unasked (auto
        mode, an allow rule, an "always" for it), DROP on a deny rule, else HOLD for the user's yes
        (plan mode, -p without --yes, ask and accept-edits: /memory confirm)."""
        if self.mode == "plan":
            return HOLD
        rule = verdict(self.rules, Call("remember", args))
        if rule is not None:
            return {DENY: DROP, ALLOW: SAVE}.get(rule.effect, HOLD)
        return SAVE if self.mode == "auto" or Grant(TOOL, "remember") in self.grants else HOLD

    def confirm(self, tool: Tool, preview: str) -> str | None:
        """Asked by a tool while it runs, for an action only it can see coming (web_fetch reaching
        a local address after DNS or a redirect): None when allowed, else the text the model gets.
        Decided as a call that needs approval is, by the rules naming the whole tool and the
        answers given before; plan mode refuses it: it may act."""
        if self.mode == "plan":
            return PLAN_MODE_ASKED.format(name=tool.name)
        call = Call(tool.name, {})
        rule = verdict(self.rules, call)
        if rule is not None and rule.effect == DENY:
            return DENIED.format(rule=rule.text(), source=rule.source, name=tool.name)
        if rule is not None and rule.effect == ALLOW:
            return None
        grant = Grant(TOOL, tool.name)  # "always" here covers such actions of this tool
        if rule is None and (self.mode == "auto" or grant in self.grants):
            return None
        words = _Asked(f"this {tool.name}", f"this {tool.name}", "done")
        return self._ask(tool, {}, preview, None if rule else grant, words, self._hint(call, rule))

    def _ask(self, tool: Tool, args: dict, preview: str, scope: Grant | None, words: _Asked, hint: str):
        """Ask (or, with nothing to ask, refuse): None when the answer allows it, else the refusal."""
        if self.approver is None:
            self.unasked.append(tool.name)
            return (
                f"refused: {words.who} needs the user's approval and this non-interactive run cannot ask. "
                f"It was not {words.done}.{hint}"
            )
        answer = self.approver(tool, args, preview)
        decision = answer if isinstance(answer, Decision) else Decision(answer)  # the REPL and ACP answer Decisions
        if scope is not None and decision.answer == "always":
            self.keep(scope)
        elif scope is not None and decision.answer == "session":
            self.grant(scope)
        if decision.answer in YES_ANSWERS:
            return None
        refused = f"refused: the user declined {words.what}; it was not {words.done}."
        return (
            f"{refused} The user said: {decision.reason}" if decision.reason else f"{refused} Ask or try another way."
        )

    def _hint(self, call: Call, rule: Rule | None) -> str:
        """What a run that cannot ask tells the model: the rule that makes it ask, or the --allow that would not."""
        if rule is not None:
            return " " + ASKED_BY_RULE.format(rule=rule.text(), source=rule.source)
        if not self.cannot_ask_hint or self.approver is not None:
            return ""
        suggestion = suggest_rule(call)
        self.suggested[suggestion] = None
        return " " + self.cannot_ask_hint.replace("{allow}", allow_flags([suggestion]))

    def keep(self, grant: Grant) -> None:
        """An "always": saved for this project; for this session when it cannot be saved."""
        if self.saved is None:
            return self.grant(grant)
        try:
            self.saved.add(grant)
        except NanoHermesError as exc:
            self.warn(f"{exc} The answer holds for this session only.")
            self.grant(grant)

    def grant(self, grant: Grant) -> None:
        """A "this session only" answer."""
        if grant not in self.session:
            self.session.append(grant)

    def revoke(self, grant: Grant) -> None:
        """Take an answer back, this session's or the project's saved one."""
        if grant in self.session:
            self.session.remove(grant)
        elif self.saved is not None:
            self.saved.remove(grant)

    def clear(self) -> None:
        """Every answer taken back: this session's and the project's saved ones."""
        self.session.clear()
        if self.saved is not None:
            self.saved.clear()

    def reset(self) -> None:
        """A new conversation starts without this session's answers (the project's saved ones stay)."""
        self.session.clear()


def allow_flags(rules) -> str:
    """`--allow 'run_command:pytest -x' --allow edit_file:a.py`: the flags that allow `rules`."""
    return " ".join(f"--allow {shlex.quote(rule)}" for rule in rules)


def leaves_sandbox(tool_name: str, args: dict) -> bool:
    """A command the model asked to run outside the sandbox: only the user's yes (or a rule) lets it."""
    return tool_name == "run_command" and bool(args.get("unsandboxed"))


def sandboxed(tool_name: str, args: dict, ctx: ToolContext) -> bool:
    """A command that will run inside the enforced sandbox: the model did not ask to leave it."""
    return (
        tool_name == "run_command" and not args.get("unsandboxed") and ctx.sandbox is not None and ctx.sandbox.confined
    )


def call_of(tool_name: str, args: dict, ctx: ToolContext) -> Call:
    """The call as rules and grants see it: a file tool's path as the tools show it (so
    `a/../x.py` and `x.py` are one), symlinks followed when a command names a path. With the
    sandbox off (the user's choice), no command leaves anything: `unsandboxed` is dropped, so a
    plain rule or grant decides it."""
    if tool_name == "run_command" and args.get("unsandboxed") and (ctx.sandbox is None or not ctx.sandbox.confined):
        args = {**args, "unsandboxed": False}
    resolve = functools.lru_cache(maxsize=RESOLVED_PER_CALL)(os.path.realpath)  # each grant asks again
    return Call(tool_name, args, _shown_path(tool_name, args, ctx), str(ctx.workspace.resolve()), resolve)


def refused_by_the_tool(args: dict, ctx: ToolContext) -> bool:
    """A write whose path, as written, is outside the workspace (or in the state directory):
    the tool refuses it whatever the disk holds, so there is nothing to ask about."""
    raw = args.get("path")
    if not isinstance(raw, str) or not raw.strip():
        return False
    lexical = Path(os.path.normpath(ctx.workspace.resolve() / os.path.expanduser(raw.strip())))
    return in_state_dir(lexical, ctx.home, ctx.workspace) or not (
        ctx.allow_outside_workspace or lexical.is_relative_to(ctx.workspace.resolve())
    )


def edited_without_asking(shown_path: str | None) -> bool:
    """accept-edits: a path inside the workspace that neither git nor NanoHermes reads as settings."""
    if not shown_path or os.path.isabs(shown_path):
        return False
    parts = Path(shown_path).parts
    return not any(part in PROTECTED_PARTS for part in parts)


def _shown_path(tool_name: str, args: dict, ctx: ToolContext) -> str | None:
    """A file tool's path as the tools show it, so `a/../x.py` and `x.py` are one grant."""
    if tool_name not in PATH_TOOLS or not isinstance(args.get("path"), str):
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


def _plan_allows(tool: Tool, arguments: str, ctx: ToolContext) -> bool:
    """Whether plan mode runs this call of a tool that needs approval (its own word: MCP's
    trusted servers; a command that stays in the enforced sandbox, made read-only there);
    arguments that cannot be read are not run."""
    if tool.plan_allowed is None:
        return False
    try:
        args = parse_arguments(tool, arguments)
    except ToolError:
        return False
    if tool.name == "run_command" and not sandboxed(tool.name, args, ctx):
        return False
    return tool.plan_allowed(args)
