"""One user request in flight: what every turn must remember, and the ways it ends early.

Everything here lives for one turn and starts afresh with the next; the Agent keeps only what
outlives a turn (the messages, the session, its collaborators). What a turn's coaching strategy
remembers (replies sent back, files asked for whole, …) is the strategy's own (loop/coach/).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nanohermes.events import StopCode
from nanohermes.loop.usage import UsageCounter


@dataclass
class Turn:
    request: str  # what the user asked, in their own words ("" for a prompt they did not write)
    usage: UsageCounter = field(default_factory=UsageCounter)
    steps: int = 0  # requests made for this turn
    streamed: list[str] = field(default_factory=list)  # the reply in flight, as it arrived
    attached: dict[str, str] = field(default_factory=dict)  # files the request named -> their text as attached
    mark: str = ""  # put before the streamed text of a stopped run's final answer
    hook_stop: object = None  # a hook's `continue: false` (hooks.HookStop): the turn ends after this reply's calls
    coach: object = None  # the turn's strategy (loop/coach/protocol.py), chosen once the window is known


class StopTurn(Exception):
    """Ends the turn before the model answered; `code` says why, `detail` the numbers; `answer`: the
    run's answer in the loop's words (none: the model is asked for one, loop/ending.py)."""

    def __init__(self, code: StopCode, answer: str = "", **detail):
        super().__init__(code)
        self.code, self.answer, self.detail = code, answer, detail


class Answered(Exception):  # a way out of the loop, not an error
    """The model answered: the turn is done. `written`: the loop wrote the answer (nothing streamed it)."""

    def __init__(self, text: str, written: bool = False):
        super().__init__(text)
        self.text, self.written = text, written
