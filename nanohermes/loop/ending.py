"""How a turn's answer is had when the model did not give it: a stopped run's last request (tools
off, marked partial), or words the loop writes itself — the file asked for whole passed the user's
check (aider's --auto-test ends so, with no request more), or the run stopped on a check that still
fails (its last lines are the answer: the model's guess at the cause cost a whole request and
as a rule said what the check's output already showed)."""

from __future__ import annotations

from nanohermes import events as ev
from nanohermes.errors import NanoHermesError, Terminated
from nanohermes.loop import nudges
from nanohermes.loop.turn import Answered, StopTurn, Turn
from nanohermes.signals import deferred
from nanohermes.synthetic import tagged

LOOP_ANSWER = "loop_answer"  # the kind of an answer the loop wrote (synthetic.py)
# Stopped on a failing check, the run's answer is what the check said: asked for its answer then, tools
# off, the same model spent a request (2,600–5,400 tokens sent; 30 % of all sent on the held-out set) on
# a guess at the cause, as a rule one the check's output already showed; aider's --auto-test ends so too.
CHECK_STILL_FAILS = "{path} as last written still fails the check a PostToolUse hook runs."
CHECK_LAST_LINES = " The check's last lines:\n\n"
CHECK_TAIL_LINES = 8


def said(agent, answered: Answered) -> str:
    """The turn's answer; one the loop wrote (nothing streamed it) joins the history, tagged, and is shown."""
    if answered.written:
        agent.transcript.add(tagged({"role": "assistant", "content": answered.text}, LOOP_ANSWER))
        agent.emit(ev.TextDelta(answered.text))
        agent.emit(ev.AssistantMessageDone(answered.text, False))
    return answered.text


def final_answer(agent, turn: Turn, stop: StopTurn) -> str:
    """One last request, tool calls off, its prompt the conversation's (a prefix cache serves it):
    the model's best answer from what it found, marked partial; "" when that request fails too.
    Stopped on a failing check, what the check said, marked partial, with no request; stopped by a
    hook's `continue: false`, nothing (what the model wrote this turn stands)."""
    if stop.code is ev.StopCode.CHECK_FAILING:
        return said(agent, Answered(ev.PARTIAL_MARK + check_still_fails(turn), written=True))
    if stop.code in (ev.StopCode.MAX_COST, ev.StopCode.HOOK_STOPPED):  # over the cap, or a hook said stop
        return ""
    agent.transcript.add_note("final_answer", nudges.final_answer(stop).text, alternate=True)
    turn.mark = ev.PARTIAL_MARK
    try:
        agent.fit_context()
        content = nudges.final_text(agent.request(turn, tool_choice="none"), agent.tool_schemas())
    except (NanoHermesError, ValueError) as exc:  # the provider failed again: the stop says enough
        agent.emit(ev.Notice(f"no final answer: {exc}", "warning"))
        return ""
    except (KeyboardInterrupt, Terminated) as stop_again:  # keep what came; SIGTERM still leaves
        with deferred():
            agent.transcript.keep_interrupted("".join(turn.streamed))
        if isinstance(stop_again, Terminated):
            raise
        return ""
    if answer := (ev.PARTIAL_MARK + content if content else ""):
        agent.transcript.add({"role": "assistant", "content": answer})  # a call made anyway never ran
        agent.emit(ev.AssistantMessageDone(answer, False))
    return answer


def check_still_fails(turn: Turn) -> str:
    """The answer of a run stopped on a failing check: the last lines of what the check said."""
    said = turn.check_said.strip().removeprefix("[PostToolUse hook output]").strip("\n")
    tail = [line for line in said.splitlines() if line.strip()][-CHECK_TAIL_LINES:]
    still = CHECK_STILL_FAILS.format(path=turn.target or "the file")
    return still + CHECK_LAST_LINES + "\n".join(f"    {line}" for line in tail) if tail else still
