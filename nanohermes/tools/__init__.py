"""The one tool registry and the one dispatch: every tool result passes through `clamp` here.

A tool is a plain function `f(ctx, **arguments) -> str | ToolOutput`. Its JSON schema comes from the
signature (type hints, defaults) and the `params` descriptions given to `@tool`; its description
is the docstring. Tools raise ToolError for failures the model should read and fix.
"""

from __future__ import annotations

import inspect
import json
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from nanohermes.calls import NO_FACTS, ResultFacts
from nanohermes.context.budget import MAX_TOOL_RESULT_BYTES
from nanohermes.errors import ToolError
from nanohermes.redact import NO_SECRETS, Redactor
from nanohermes.text import clamp_counted, valid_unicode
from nanohermes.tools.outputs import OutputStore

if TYPE_CHECKING:
    from nanohermes.memory.store import MemoryStore
    from nanohermes.sandbox.policy import Policy
    from nanohermes.storage.checkpoints import Checkpoints
    from nanohermes.storage.images import ImageStore
    from nanohermes.storage.snapshots import Snapshots
    from nanohermes.tools.background import BackgroundTasks


class Shelf(Protocol):
    """The skills a session found, as the `skill` tool reads them (prompt/skills.py: Skills). A
    protocol, so this layer names what it needs without importing the prompt, which imports it."""

    def __len__(self) -> int: ...
    def names(self) -> list[str]: ...
    def folders(self) -> list[Path]: ...
    def get(self, name: str) -> object | None: ...
    def body(self, skill: object) -> str: ...


class Delegator(Protocol):
    """Runs a helper agent for `task` (loop/subagents.py: Subagents), which the loop above builds:
    in the workspace, or in a git worktree of its own (`worktree`), the call's `ctx` its parent's."""

    def run(self, description: str, prompt: str, worktree: bool, ctx: ToolContext) -> str: ...


class Diagnoser(Protocol):
    """A language server's new problems in a file write_file or edit_file changed (lsp/: Diagnostics,
    which the wiring builds above this layer)."""

    def after_change(self, path: Path, shown: str, before: str | None, after: str) -> str: ...


@dataclass
class ToolContext:
    """What a tool may touch and use. `max_output` shrinks with small context windows."""

    workspace: Path
    home: Path
    max_output: int = MAX_TOOL_RESULT_BYTES
    command_timeout: int = 120
    allow_outside_workspace: bool = False
    memory: MemoryStore | None = None  # for `remember`
    skills: Shelf | None = None  # for `skill`
    tasks: BackgroundTasks | None = None  # run_command's background tasks, for task_output and task_stop
    subagents: Delegator | None = None  # runs helper agents for `task` (None inside a helper)
    outputs: OutputStore = field(default_factory=OutputStore)  # full outputs, for `recall`: the transcript records them
    checkpoints: Checkpoints | None = None  # write_file and edit_file keep the old content here, for /undo
    snapshots: Snapshots | None = None  # the workspace's files around changes, for /rewind (loop/changes.py)
    sandbox: Policy | None = None  # commands run confined by it (sandbox/); None: unconfined
    call_id: str = ""  # the call being run (set by the loop for each call)
    progress: Callable[[str], None] | None = None  # a long tool reports its latest output here, throttled
    # The session's secrets (redact.py): the clamp never cuts one in two, and the loop redacts what a client
    # is shown of a running call; a result is redacted once, as the transcript records it (loop/transcript.py).
    redactor: Redactor = NO_SECRETS
    # Asks for an action a tool finds only while it runs (web_fetch reaching a local address
    # after DNS or a redirect): the preview in, None when allowed or the refusal text out. The
    # loop binds it to the approvals for each call; None: nothing can allow such an action.
    confirm: Callable[[str], str | None] | None = None
    # An editor's files and terminal (acp/editor_files.py): read_text(path) -> its buffer's text or
    # None, write_text(path, data) -> whether it wrote them, run_shell(...) -> whether it ran an
    # unconfined command. None: the disk and our own processes, directly.
    editor: object | None = None
    images: ImageStore | None = None  # where an image sent to the model is kept (tools/images.py); None: none is
    # Why the model cannot be sent an image now (it takes none, or nothing says it does), or None
    # when it can; asked on the first image only (the loop learns it from the server). None: no images.
    vision: Callable[[], str | None] | None = None
    # Runs a function on the loop's thread and returns its value, for a call running beside others
    # on a thread of its own (loop/together.py): a question, an event for the front ends. None: the
    # call runs on the loop's thread itself.
    on_loop: Callable[[Callable[[], object]], object] | None = None
    diagnostics: Diagnoser | None = None  # what a language server finds new after a change (None: nothing asked)

    def report(self, text: str) -> None:
        """Tell whoever watches (the REPL's status line) what a running tool is doing."""
        if self.progress is not None:
            self.progress(text)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    func: Callable[..., str]
    needs_approval: bool = False
    preview: Callable[..., str] | None = None  # what the user sees before approving
    # Per call, whether a tool that needs approval needs it for these arguments (MCP: not for a
    # trusted server, nor for a call that cannot run). None: every call does.
    asks: Callable[[dict], bool] | None = None
    # In plan mode, whether a tool that needs approval may run these arguments (MCP: a trusted
    # server's call, docs/mcp-and-acp.md). None: plan mode neither offers nor runs it.
    plan_allowed: Callable[[dict], bool] | None = None
    # In the lean set a small window is offered (context/budget.py: LEAN_TOOLS_BELOW_TOKENS):
    # False leaves the tool out, and `lean_drops` names arguments its schema leaves out there.
    lean: bool = True
    lean_drops: frozenset[str] = frozenset()
    # Changes nothing and shares nothing with another call but stores that lock: the loop runs
    # the read-only calls of one reply side by side (loop/execute.py). Not MCP's: a server may ask
    # the user or report progress mid-call, and the hub shows both on the one waiting thread.
    read_only: bool = False
    # Per call (its arguments), whether it works apart from everything else (a helper in its own git
    # worktree): the loop runs such calls of one reply side by side, at most task_parallel at once.
    apart: Callable[[dict], bool] | None = None

    def schema(self, lean: bool = False) -> dict:
        parameters = self.parameters
        if lean and self.lean_drops:
            properties = {k: v for k, v in parameters["properties"].items() if k not in self.lean_drops}
            parameters = {**parameters, "properties": properties}
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }


class ToolOutput(str):
    """A tool's text with the facts about it attached (exit code, path, …). A tool returns
    one when it has facts to report, else a plain str; either way it is the text."""

    facts: ResultFacts
    streams: tuple[str, str] | None  # a command's stdout and stderr apart (a PostToolUse hook reads them)
    images: tuple[dict, ...]  # images sent with the result (context/images.py's entries): read_file's

    def __new__(
        cls,
        text: str,
        facts: ResultFacts = NO_FACTS,
        streams: tuple[str, str] | None = None,
        images: tuple[dict, ...] = (),
    ) -> ToolOutput:
        self = super().__new__(cls, text)
        self.facts, self.streams, self.images = facts, streams, images
        return self


@dataclass(frozen=True)
class ToolResult:
    content: str  # what the model sees (clamped)
    full: str  # the whole output, kept in the session for `recall`
    # As a tool gives it: secrets are redacted from both and the facts as the transcript records it.
    ok: bool = True
    facts: ResultFacts = NO_FACTS
    streams: tuple[str, str] | None = None  # a command's stdout and stderr apart, for hooks; never kept or sent
    images: tuple[dict, ...] = ()  # images the model is sent beside the text (context/images.py's entries)


_JSON_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _json_type(annotation) -> str:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    return _JSON_TYPES[annotation]


def tool(
    *,
    params: dict[str, str],
    approval: bool = False,
    preview: Callable[..., str] | None = None,
    lean: bool = True,
    lean_drops: frozenset[str] = frozenset(),
    read_only: bool = False,
    apart: Callable[[dict], bool] | None = None,
):
    """Turn `f(ctx, ...)` into a Tool; `params` describes each argument in a few words ("" when its
    name and type say it all: every word of a schema is paid on every request); `lean` and
    `lean_drops` say what of it a small window is offered; `read_only` that its calls may run
    beside other reads; `apart(arguments)` that a call may run beside others that work apart."""

    def wrap(func: Callable[..., str]) -> Tool:
        hints = typing.get_type_hints(func)
        properties, required = {}, []
        for name, param in list(inspect.signature(func).parameters.items())[1:]:
            described = {"description": params[name]} if params[name] else {}
            properties[name] = {"type": _json_type(hints[name]), **described}
            if param.default is inspect.Parameter.empty:
                required.append(name)
        schema = {"type": "object", "properties": properties, "required": required}
        doc = inspect.cleandoc(func.__doc__ or "")
        return Tool(
            func.__name__,
            doc,
            schema,
            func,
            approval,
            preview,
            lean=lean,
            lean_drops=frozenset(lean_drops),
            read_only=read_only,
            apart=apart,
        )

    return wrap


def parse_arguments(tool_: Tool, raw: str | dict | None) -> dict:
    """Decode and check the model's arguments; ToolError says exactly what to resend."""
    if isinstance(raw, dict):
        args = raw
    else:
        text = (raw or "").strip() or "{}"
        try:
            args = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"arguments for {tool_.name} are not valid JSON ({exc.msg} at char {exc.pos}); "
                f"send one JSON object with keys {', '.join(tool_.parameters['properties'])}"
            ) from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments for {tool_.name} must be a JSON object, got {type(args).__name__}")
    props = tool_.parameters["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolError(f"{tool_.name} has no argument(s) {', '.join(unknown)}; it takes {', '.join(props)}")
    missing = [name for name in tool_.parameters["required"] if args.get(name) is None]
    if missing:
        raise ToolError(f"{tool_.name} needs argument(s) {', '.join(missing)}")
    return {
        name: _coerce(tool_.name, name, props[name]["type"], value) for name, value in args.items() if value is not None
    }


def _coerce(tool_name: str, name: str, kind: str, value):
    """Small models send "10" for 10 and "true" for true; accept what is unambiguous. A number
    must be finite and not negative (every count, offset and timeout here): NaN would turn a
    timeout off and -1 a limit inside out."""
    if kind in ("integer", "number") and not isinstance(value, bool):
        return _number(tool_name, name, kind, value)
    try:
        if kind == "boolean":
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("true", "false"):
                return str(value).lower() == "true"
            raise ValueError
        if kind == "string":
            return value if isinstance(value, str) else json.dumps(value)
        if kind == "object" and isinstance(value, (dict, str)):  # a JSON object, or its text: the tool parses it
            return value
    except (TypeError, ValueError):
        pass
    raise ToolError(f"argument {name} of {tool_name} must be a {kind}, got {json.dumps(value)[:80]}")


def _number(tool_name: str, name: str, kind: str, value) -> int | float:
    try:
        number = value if isinstance(value, int) else float(value)
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or (isinstance(number, float) and not math.isfinite(number)):
        raise ToolError(f"argument {name} of {tool_name} must be a finite {kind}, got {json.dumps(value)[:80]}")
    if number < 0:
        raise ToolError(f"argument {name} of {tool_name} must not be negative, got {json.dumps(value)[:80]}")
    if kind == "integer":
        if number != int(number):
            raise ToolError(f"argument {name} of {tool_name} must be a whole number, got {json.dumps(value)[:80]}")
        return int(number)
    return float(number)


def dispatch(ctx: ToolContext, tools: dict[str, Tool], name: str, raw_arguments) -> ToolResult:
    """Run one tool call; every failure becomes a result the model can read."""
    tool_ = tools.get(name)
    if tool_ is None:
        text = f"error: unknown tool {name!r}. Available tools: {', '.join(sorted(tools))}"
        return ToolResult(text, text, ok=False)
    facts, streams, images = NO_FACTS, None, ()
    try:
        args = parse_arguments(tool_, raw_arguments)
        output = tool_.func(ctx, **args)
        facts, streams = getattr(output, "facts", NO_FACTS), getattr(output, "streams", None)
        images = getattr(output, "images", ())
        output, ok = str(output), True
    except ToolError as exc:
        output, ok = f"error: {exc}", False
    except Exception as exc:  # a bug in one tool must not end the session
        output, ok = f"error: {name} failed: {type(exc).__name__}: {exc}", False
    # A file name that is not UTF-8 must not break a hook's payload, the session file or the request.
    # Secrets are the transcript's to redact, with the facts and the full output (loop/transcript.py);
    # the clamp only never cuts one in two, where no redaction would find what it left.
    output = valid_unicode(output)
    if facts.tail or facts.found or facts.path:  # the facts quote the output too (a command's last lines)
        facts = replace(
            facts,
            tail=valid_unicode(facts.tail),
            found=valid_unicode(facts.found),
            path=valid_unicode(facts.path) if facts.path else facts.path,
        )
    if streams is not None:
        streams = tuple(valid_unicode(stream) for stream in streams)
    content, cut = clamp_counted(output, ctx.max_output, hold=ctx.redactor.open_tail)
    return ToolResult(content, output, ok, replace(facts, cut_bytes=cut) if cut else facts, streams, images)
