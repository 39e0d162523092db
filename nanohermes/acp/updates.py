"""What an editor is told: the loop's events, and a saved session's history, as ACP session updates.

Text deltas become agent message chunks; a tool call a `tool_call` (title, kind, where it
acts) and its end a `tool_call_update` (completed or failed, what it returned, and for an
applied write or edit the diff); notices (compaction, retries) become thought chunks. A
helper agent's tool calls show as tool calls of their own, named after its task. The plan a
plan-mode turn proposes (its numbered or bulleted steps) is also sent as the session's plan,
which editors show as a checklist.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation

from nanohermes import events as ev
from nanohermes.calls import WRITING_TOOLS, ToolCall, describe_call, one_line, parse_tool_call
from nanohermes.errors import ToolError
from nanohermes.synthetic import is_users

TITLE_CHARS = 120  # one line in an editor's tool call card
OUTPUT_CHARS = 8_000  # what a card shows of a result; the model's own copy is capped by the clamp
RESTARTED = "\n[the reply restarted after a dropped connection and said something else:]\n"
INTERRUPTED = "[interrupted by user]"
KINDS = {
    "read_file": "read",
    "recall": "read",
    "grep": "search",
    "glob": "search",
    "run_command": "execute",
    "task_output": "execute",
    "task_stop": "execute",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "write_file": "edit",
    "edit_file": "edit",
    "task": "think",
}
FAILED_PREFIXES = ("error:", "refused:", "blocked in plan mode", INTERRUPTED)
PLAN_STEPS = 30  # a checklist longer than this is a document, not a plan
PLAN_STEP_CHARS = 200  # one line of an editor's plan view
# A top-level step: `1. …`, `2) …`, `- …`, `* …` (Markdown bold and a trailing colon dropped).
_STEP = re.compile(r"^ {0,1}(?:\d{1,3}[.)]|[-*+])\s+(?:\[[ xX]\]\s+)?(.+)$")


def title(name: str, arguments) -> str:
    return one_line(describe_call(ToolCall.of(name, arguments)), TITLE_CHARS)


def _locations(workspace: Path, arguments: str) -> list[ToolCallLocation] | None:
    """Where a call acts, for the editor to follow: only a path inside the workspace (links
    resolved); a call aimed elsewhere (/etc/passwd, ../x) names no place the editor would open."""
    path = ToolCall.of("", arguments).arguments.get("path")
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    target = Path(os.path.normpath(Path(workspace) / path))  # an absolute path replaces the workspace
    try:
        inside = target.resolve().is_relative_to(Path(workspace).resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return [ToolCallLocation(path=str(target))] if inside else None


def tool_started(
    event: ev.ToolStarted, workspace: Path, call_id: str | None = None, label: str = "", status: str = "in_progress"
):
    """The call's card; `status` pending for a call that may wait for the user's yes."""
    raw = ToolCall.of(event.name, event.arguments).arguments or None
    shown = f"{label}: {title(event.name, event.arguments)}" if label else title(event.name, event.arguments)
    return start_tool_call(
        call_id or event.call_id,
        shown,
        kind=KINDS.get(event.name, "other"),
        status=status,
        locations=_locations(workspace, event.arguments),
        raw_input=raw,
    )


def tool_finished(
    event: ev.ToolFinished,
    output: str | None,
    diff: tuple[str, str | None, str] | None = None,
    call_id: str | None = None,
):
    """`output`: what the tool returned (cut here); `diff`: (path, old text or None, new text) of an applied change."""
    content = [tool_content(text_block(_cut(output if output is not None else event.summary)))]
    if diff is not None:
        content.append(tool_diff_content(diff[0], diff[2], diff[1]))
    return update_tool_call(
        call_id or event.call_id,
        status="completed" if event.ok else "failed",
        content=content,
        locations=None if event.ok else [],  # a refused or failed call acted nowhere: its start's place is taken back
    )


def tool_progress(event: ev.ToolProgress, call_id: str | None = None):
    return update_tool_call(
        call_id or event.call_id, status="in_progress", content=[tool_content(text_block(_cut(event.text)))]
    )


def running(call_id: str):
    """An allowed call starts running."""
    return update_tool_call(call_id, status="in_progress")


def planned_change(ctx, tool_name: str, args: dict) -> tuple[str, str, str | None] | None:
    """(absolute path, new text, old text or None for a new file) a write_file or edit_file call
    would make, as tool_diff_content takes them; None for other tools and for a call that would fail
    (its preview says why)."""
    from nanohermes.tools.edit import planned_edit
    from nanohermes.tools.files import planned_write

    try:
        if tool_name == "write_file":
            target, old, new = planned_write(ctx, args["path"], args["content"])
        elif tool_name == "edit_file":
            replace_all = bool(args.get("replace_all", False))
            target, old, new = planned_edit(ctx, args["path"], args["old_text"], args["new_text"], replace_all)
        else:
            return None
    except (ToolError, KeyError, TypeError, OSError):
        return None
    if old is None and target.exists():  # a binary or huge file: no text to show as the diff's old side
        return None
    return str(target), _shown_text(new), None if old is None else _shown_text(old)


def _shown_text(text: str) -> str:
    """Undecodable bytes (kept as surrogateescape) as U+FFFD: JSON cannot carry lone surrogates."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from JSON, not an escaped byte
        data = text.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "replace")


def interrupted(call_id: str):
    """The last word on a call a cancelled turn left open (the loop answered it in the history)."""
    return update_tool_call(call_id, status="failed", content=[tool_content(text_block(INTERRUPTED))])


def text_delta(text: str):
    return update_agent_message_text(text)


def thought(text: str):
    return update_agent_thought_text(text)


def started_elsewhere(started: str, working: Path) -> str:
    """The CLI's note on resuming a session started in another folder, for the editor."""
    return f"[warning] this session was started in {started}; its tools now act in {working}\n"


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n… {len(text) - OUTPUT_CHARS:,} more chars (the model can read them with recall)"


def history(messages: list[dict], workspace: Path, facts: dict | None = None) -> list:
    """A saved session's working set, replayed as updates (session/load). A tool call is one card
    with its outcome (completed or failed, what it returned) where the call was made: a card shown
    again keeps the status it ended with, whether or not the editor had it; `facts`: the results'
    ResultFacts by call id (a command that exited non-zero failed)."""
    updates, calls = [], {}  # calls: id -> (its place in updates, the call)
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if not is_users(message) and role == "user":  # the loop's note to the model, not the user's words
            continue
        if role == "user" and isinstance(content, str):
            updates.append(update_user_message_text(content))
        elif role == "system":  # a compaction's summary: reference for the model, context for the user
            updates.append(thought(_cut(str(content))))
        elif role == "assistant":
            if content:
                updates.append(update_agent_message_text(str(content)))
            for raw in message.get("tool_calls") or ():
                call = parse_tool_call(raw)
                calls[call.id] = (len(updates), call)
                updates.append(_ended_card(call, INTERRUPTED, workspace))  # until its result says otherwise
        elif role == "tool" and message.get("tool_call_id") in calls:
            at, call = calls.pop(message["tool_call_id"])
            failed = getattr((facts or {}).get(call.id), "failed", False)
            updates[at] = _ended_card(call, str(content), workspace, failed)
    return updates


def _ended_card(call: ToolCall, result: str, workspace: Path, failed: bool = False):
    card = tool_started(ev.ToolStarted(call.id, call.name, call.raw_arguments), workspace)
    card.status = "failed" if failed or result.startswith(FAILED_PREFIXES) else "completed"
    card.content = [tool_content(text_block(_cut(result)))]
    return card


def applied_diff(checkpoints, event: ev.ToolFinished) -> tuple[str, str | None, str] | None:
    """(absolute path, old text or None for a new file, new text) of the change a write or edit made."""
    if checkpoints is None or event.name not in WRITING_TOOLS or not event.facts.changed:
        return None
    change = checkpoints.for_call(event.call_id)
    if change is None:
        return None
    try:
        before = checkpoints.content(change.before)
        after = checkpoints.content(change.after) or b""
    except OSError:  # the kept contents went missing: no diff to show
        return None
    return change.path, None if before is None else before.decode("utf-8", "replace"), after.decode("utf-8", "replace")


def prompt_text(blocks: list) -> str:
    """The user's prompt as text: text blocks, embedded files under their URI, other blocks named."""
    parts = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and getattr(block.resource, "text", None) is not None:
            parts.append(f"[{block.resource.uri}]\n{block.resource.text}")
        elif kind == "resource_link":
            parts.append(f"[file: {block.uri}]")
        else:
            parts.append(f"[{kind or 'a'} attachment, not supported: not shown]")
    return "\n\n".join(p for p in parts if p)


def plan_steps(text: str) -> list[str]:
    """The steps of a proposed plan: its top-level list items in order (none when the answer has
    fewer than two, which is an answer, not a plan). Pure."""
    steps = []
    for line in text.splitlines():
        match = _STEP.match(line)
        if match:
            step = " ".join(match.group(1).replace("**", "").split()).rstrip(":")
            steps.append(step if len(step) <= PLAN_STEP_CHARS else step[: PLAN_STEP_CHARS - 1] + "…")
    return steps[:PLAN_STEPS] if len(steps) >= 2 else []


def plan(steps: list[str]):
    return update_plan(plan_entry(step, status="pending") for step in steps)
