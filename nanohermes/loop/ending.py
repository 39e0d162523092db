"""How a turn's answer is had when the model did not give it: a stopped run's last request (tools
off, marked partial; its words the turn's coaching strategy's), or words the loop writes itself — an
answer the strategy wrote (Answered(written=True): the file asked for whole passed the user's check, as
aider's --auto-test ends with no request more), or the answer a stop carries (StopTurn.answer: the run
stopped on a check that still fails, its last lines the answer)."""

from __future__ import annotations

from nanohermes import events as ev
from nanohermes.errors import NanoHermesError, Terminated
from nanohermes.loop.turn import Answered, StopTurn, Turn
from nanohermes.signals import deferred
from nanohermes.synthetic import tagged

LOOP_ANSWER = "loop_answer"  # the kind of an answer the loop wrote (synthetic.py)


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
    A stop that carries its answer (a failing check's last lines): that, marked partial, with no request;
    stopped by a hook's `continue: false`, nothing (what the model wrote this turn stands)."""
    if stop.answer:
        return said(agent, Answered(ev.PARTIAL_MARK + stop.answer, written=True))
    if stop.code in (ev.StopCode.MAX_COST, ev.StopCode.HOOK_STOPPED):  # over the cap, or a hook said stop
        return ""
    request = turn.coach.final_request(stop)
    agent.transcript.add_note(request.kind, request.text, alternate=True)
    turn.mark = ev.PARTIAL_MARK
    try:
        agent.fit_context()
        content = turn.coach.final_text(agent.request(turn, tool_choice="none"), agent.tool_schemas())
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
