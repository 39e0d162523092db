"""What a finished hook said, read as Claude Code's hook contract has it (pure).

Exit 0: go on; stdout, plain text or a JSON object, is its answer. From the JSON:
`hookSpecificOutput.additionalContext` (or a top-level `additionalContext`) for the model,
`hookSpecificOutput.permissionDecision` allow/deny/ask with `permissionDecisionReason`
(PreToolUse), `decision: "block"` with `reason`, `systemMessage` for the user. Exit 2: block;
stderr is the reason. Anything else, a timeout or a flood: a non-blocking error the user sees.
Everything that reaches the model is capped, the cut said.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from nanohermes.hooks.run import HookRun
from nanohermes.text import neutralize

BLOCK_EXIT = 2
ALLOW, DENY, ASK = "allow", "deny", "ask"
DECISIONS = frozenset({ALLOW, DENY, ASK})
LEGACY = {"approve": ALLOW, "block": DENY}  # Claude Code's older PreToolUse `decision` values
MODEL_CHARS = 4_000  # what one hook tells the model (~1,000 tokens): a note, not a log
USER_CHARS = 600  # what one hook's error shows the user: its first lines
NO_REASON = "(the hook gave no reason)"


@dataclass(frozen=True)
class Outcome:
    blocked: bool = False  # exit 2 or decision "block" (PreToolUse: deny)
    decision: str | None = None  # PreToolUse: allow | deny | ask
    reason: str = ""  # why it blocked or decided (capped)
    context: str = ""  # what it adds for the model (capped)
    problem: str = ""  # a non-blocking error for the user
    message: str = ""  # a systemMessage for the user
    undecided: bool = False  # it could not answer: never started, timed out or flooded (a guard then blocks)


def outcome_of(run: HookRun, tool_event: bool = False) -> Outcome:
    """The hook's answer; `tool_event`: a PreToolUse hook, whose JSON may decide the call."""
    if run.error:
        return Outcome(problem=f"could not start: {run.error}", undecided=True)
    if run.timed_out:
        return Outcome(problem="timed out; it was stopped, and decided nothing", undecided=True)
    if run.flooded:
        return Outcome(problem="printed more than its output cap; it was stopped, and decided nothing", undecided=True)
    if run.code == BLOCK_EXIT:
        return Outcome(blocked=True, decision=DENY, reason=capped(run.stderr.strip() or NO_REASON))
    if run.code != 0:
        said = run.stderr.strip() or run.stdout.strip()
        return Outcome(problem=f"failed (exit {run.code})" + (f": {for_user(said)}" if said else ""))
    return _answer(run.stdout, tool_event)


def _answer(stdout: str, tool_event: bool) -> Outcome:
    text = stdout.strip()
    data = _json_object(text)
    if data is None:
        return Outcome(context=capped(text))
    specific = data.get("hookSpecificOutput") if isinstance(data.get("hookSpecificOutput"), dict) else {}
    context = _string(specific.get("additionalContext")) or _string(data.get("additionalContext"))
    message = for_user(_string(data.get("systemMessage")))
    decision = _string(specific.get("permissionDecision")).lower() if tool_event else ""
    reason = _string(specific.get("permissionDecisionReason")) or _string(data.get("reason"))
    legacy = LEGACY.get(_string(data.get("decision")).lower())
    if decision not in DECISIONS:
        decision = legacy if tool_event else (DENY if legacy == DENY else "")
    blocked = decision == DENY
    return Outcome(
        blocked, decision or None, capped(reason or (NO_REASON if blocked else "")), capped(context), "", message
    )


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
