"""A stopped turn in words: one table for the model, one for people. The loop only stops with a
code (events.StopCode); the CLI, the REPL and ACP say it with `for_people`, and the loop's
last request of a stopped run (and a helper's stop, told to the agent that started it) with
the model's words here."""

from __future__ import annotations

from nanohermes.events import StopCode, TurnResult

# To the model whose run stopped: its last request, tools off, asks for its best answer.
TO_MODEL = {
    StopCode.MAX_STEPS: "the step limit was reached",
    StopCode.REPEATING: "you kept repeating the same tool call",
    StopCode.CUT_CALLS: "your tool calls kept being cut by the output token limit",
    StopCode.CHECK_FAILING: "your change still fails the check a PostToolUse hook runs, after several tries",
}
# To the agent that gave a helper its task, about the helper (`{steps}`: "3 steps").
ABOUT_HELPER = {
    StopCode.MAX_STEPS: "at its step limit ({steps})",
    StopCode.REPEATING: "because it kept repeating the same tool call",
    StopCode.CUT_CALLS: "because its replies kept being cut by max_tokens",
    StopCode.CHECK_FAILING: "because its change kept failing the check a PostToolUse hook runs",
    StopCode.MAX_COST: "because the session reached its spending cap (max_cost)",
    StopCode.HOOK_STOPPED: "because a {event} hook stopped it: {reason}",
}
# To people: the command line, the REPL and an editor.
FOR_PEOPLE = {
    StopCode.MAX_STEPS: "Stopped after {steps} steps (--max-steps {max_steps}); the task may be unfinished.",
    StopCode.REPEATING: "Stopped: the model kept repeating the same tool call with the same arguments.",
    StopCode.CUT_CALLS: (
        "The model's replies keep hitting max_tokens in the middle of a tool call; stopped. "
        "Raise max_tokens or ask for smaller steps."
    ),
    StopCode.CHECK_FAILING: (
        "Stopped: the change still fails the check a PostToolUse hook runs, after the file was asked for "
        "whole {tries} times; the file is as last written."
    ),
    StopCode.HOOK_STOPPED: "Stopped by a {event} hook ({command}): {reason}",
    StopCode.INTERRUPTED: "interrupted",
    StopCode.MAX_COST: (
        "Stopped at the spending cap: {spent} spent of max_cost {max_cost}; the task may be unfinished. "
        "Raise it with --max-cost USD or max_cost in config.toml."
    ),
    StopCode.NEEDS_APPROVAL: (
        "unfinished: {tools} needed the user's approval, which a -p run cannot ask for, so it was not run. {hint}"
    ),
}


def stop_message(result: TurnResult, hint: str = "") -> str:
    """Why the turn stopped, in one sentence; for a turn that answered with actions refused
    because nothing could ask (cannot_ask), which ones, and `hint`: how the user can allow them."""
    code = result.stop_code or (StopCode.NEEDS_APPROVAL if result.cannot_ask else None)
    if code is None:
        return result.final_text
    words = {"steps": "?", "max_steps": "?", "event": "?", "command": "?", "reason": "?", **result.stop_detail}
    return FOR_PEOPLE[code].format(**words, tools=", ".join(dict.fromkeys(result.cannot_ask)), hint=hint).strip()


def about_helper(code: StopCode | None, steps: str, detail: dict | None = None) -> str:
    words = {"event": "?", "reason": "?", **(detail or {}), "steps": steps}
    return ABOUT_HELPER.get(code, "early").format(**words)
