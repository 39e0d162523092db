"""What a finished hook said, read as Claude Code's hook contract has it (pure).

Exit 0: go on; stdout, plain text or a JSON object, is its answer. From the JSON:
`hookSpecificOutput.additionalContext` (or a top-level `additionalContext`) for the model,
`hookSpecificOutput.permissionDecision` allow/deny/ask with `permissionDecisionReason` and
`updatedInput` (PreToolUse), `decision: "block"` with `reason`, `systemMessage` for the user,
`continue: false` with `stopReason` (the turn ends, whatever else it decided). `suppressOutput`
is accepted and changes nothing: a hook's stdout is never shown on screen here. Exit 2: block;
the reason is the JSON's blocking reason when it gives one, else stderr. Another exit code with
a JSON object on stdout: the JSON decides (Claude Code reads it on every exit code); without
one, like a timeout or a flood, a non-blocking error the user sees. Everything that reaches the
model is capped, the cut said.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from nanohermes.hooks.run import HookRun
from nanohermes.text import neutralize

BLOCK_EXIT = 2
ALLOW, DENY, ASK = "allow", "deny", "ask"
DECISIONS = frozenset({ALLOW, DENY, ASK})
LEGACY = {"approve": ALLOW, "block": DENY}  # Claude Code's older PreToolUse `decision` values
MODEL_CHARS = 4_000  # what one hook tells the model (~1,000 tokens): a note, not a log
USER_CHARS = 600  # what one hook's error shows the user: its first lines
NO_REASON = "(the hook gave no reason)"
NO_STOP_REASON = "(the hook gave no stopReason)"
NOT_AN_OBJECT = "answered an updatedInput that is no JSON object; the call's input is left as it was"


@dataclass(frozen=True)
class Outcome:
    blocked: bool = False  # exit 2 or decision "block" (PreToolUse: deny)
    decision: str | None = None  # PreToolUse: allow | deny | ask
    reason: str = ""  # why it blocked or decided (capped)
    context: str = ""  # what it adds for the model (capped)
    problem: str = ""  # a non-blocking error for the user
    message: str = ""  # a systemMessage for the user
    undecided: bool = False  # it could not answer: never started, timed out or flooded (a guard then blocks)
    stop: str | None = None  # `continue: false`: the turn ends; its stopReason, for the user
    updated_input: dict | None = None  # PreToolUse's updatedInput: the call's whole input, rewritten
    json: bool = False  # it answered with a JSON object (not plain text)


def outcome_of(run: HookRun, tool_event: bool = False) -> Outcome:
    """The hook's answer; `tool_event`: a PreToolUse hook, whose JSON may decide the call."""
    if run.error:
        return Outcome(problem=f"could not start: {run.error}", undecided=True)
    if run.timed_out:
        return Outcome(problem="timed out; it was stopped, and decided nothing", undecided=True)
    if run.flooded:
        return Outcome(problem="printed more than its output cap; it was stopped, and decided nothing", undecided=True)
    data = _json_object(run.stdout.strip())
    if run.code == BLOCK_EXIT:  # blocks whatever the JSON says; its blocking reason, when it gives one
        said = _answer(data, tool_event) if data is not None else Outcome()
        reason = said.reason if said.blocked else capped(run.stderr.strip() or NO_REASON)
        return replace(said, blocked=True, decision=DENY, reason=reason, context="", updated_input=None)
    if run.code != 0 and data is None:
        said = run.stderr.strip() or run.stdout.strip()
        return Outcome(problem=f"failed (exit {run.code})" + (f": {for_user(said)}" if said else ""))
    if data is None:
        return Outcome(context=capped(run.stdout.strip()))
    return _answer(data, tool_event)


def _answer(data: dict, tool_event: bool) -> Outcome:
    specific = data.get("hookSpecificOutput") if isinstance(data.get("hookSpecificOutput"), dict) else {}
    context = _string(specific.get("additionalContext")) or _string(data.get("additionalContext"))
    message = for_user(_string(data.get("systemMessage")))
    decision = _string(specific.get("permissionDecision")).lower() if tool_event else ""
    reason = _string(specific.get("permissionDecisionReason")) or _string(data.get("reason"))
    legacy = LEGACY.get(_string(data.get("decision")).lower())
    if decision not in DECISIONS:
        decision = legacy if tool_event else (DENY if legacy == DENY else "")
    blocked = decision == DENY
    updated = specific.get("updatedInput") if tool_event else None
    return Outcome(
        blocked,
        decision or None,
        capped(reason or (NO_REASON if blocked else "")),
        capped(context),
        NOT_AN_OBJECT if updated is not None and not isinstance(updated, dict) else "",
        message,
        stop=_stop(data),
        updated_input=updated if isinstance(updated, dict) else None,
        json=True,
    )


def _stop(data: dict) -> str | None:
    """`continue: false`: its stopReason, for the user (never the model), else words of our own."""
    if data.get("continue") is not False:
        return None
    return for_user(_string(data.get("stopReason"))) or NO_STOP_REASON


def _json_object(text: str) -> dict | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _string(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def capped(text: str, limit: int = MODEL_CHARS) -> str:
    """`text` within `limit` chars, the cut said (every cap leaves a note the model can see)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… hook output cut: {len(text) - limit:,} more chars not shown]"


def for_user(text: str) -> str:
    """A hook's words for a notice: control characters shown, its first USER_CHARS chars."""
    text = neutralize(text.strip())
    return text if len(text) <= USER_CHARS else text[:USER_CHARS] + "…"
