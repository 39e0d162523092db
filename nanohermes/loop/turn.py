"""One user request in flight: what a turn must remember, and the ways it ends early.

Everything here lives for one turn and starts afresh with the next; the Agent keeps only what
outlives a turn (the messages, the session, its collaborators).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from enum import Enum

from nanohermes.calls import WRITING_TOOLS, parse_tool_call
from nanohermes.events import StopCode
from nanohermes.hooks import AfterTool
from nanohermes.loop.usage import UsageCounter
from nanohermes.loop.wholefile import change_target

# Asked for its change with the tools on, a model may go on reading the same things: that many
# more looks with the same result (or one refused repeat) and the run stops.
ROUNDS_AFTER_ASKED = 3


class AnswerNow(Enum):
    """Whether to ask, tools off, for the answer of a model going round in circles (once a turn)."""

    NOT_NEEDED = "not needed"
    DUE = "due"  # it went round: the next request asks for the answer with tool calls off
    ASKED = "asked"  # asked this turn: going round again after that is hopeless (StopTurn)
    WAIVED = "waived"  # not asked after all (a nudge needs the tools): the guard alone from here


@dataclass
class Turn:
    request: str  # the user's words
    usage: UsageCounter = field(default_factory=UsageCounter)
    steps: int = 0  # requests made for this turn
    cut_calls: int = 0  # replies cut by max_tokens inside a tool call
    runaways: int = 0  # replies sent back: looping, a call written as text, a fix shown but not made
    changed: bool = False  # a tool changed a file
    checked: bool = False  # a command ran after the last change (the tests, say), or a PostToolUse hook did
    check_failed: bool = False  # … and that hook blocked: the change failed the user's check
    check_passed: bool | None = None  # what the last PostToolUse hook that ran after a write said (None: none ran)
    same_failed: bool = False  # the last write left its file as it was, and the check still failed
    check_said: str = ""  # what the last check that refused a write said (its hook's output)
    nudged: bool = False  # told once to make the change it showed (loop/nudges.py)
    check_asked: bool = False  # told once to run the tests after its change
    answer_now: AnswerNow = AnswerNow.NOT_NEEDED
    streamed: list[str] = field(default_factory=list)  # the reply in flight, as it arrived
    attached: dict[str, str] = field(default_factory=dict)  # files the request named -> their text as attached
    mark: str = ""  # put before the streamed text of a stopped run's final answer
    hooks: object = None  # the session's hooks (hooks/__init__.py): Stop runs when the model answers
    stop_blocks: int = 0  # answers a Stop hook sent back this turn
    hook_stop: object = None  # a hook's `continue: false` (hooks.HookStop): the turn ends after this reply's calls

    hopeless: bool = False  # after the model was asked for its answer (or its change), it went round again
    rounds_since_asked: int = 0
    resample: bool = False  # it went round, or a write changed nothing: the next request is sampled (nudges.py)
    whole_asked: bool = False  # the next reply is asked for the target file whole, tools off (loop/wholefile.py)
    whole_asks: int = 0  # … how often this turn
    whole_reply: bool = False  # the reply in hand answers that ask (cut, or a call as text: asked again, nudges.py)
    whole_passed: bool = False  # the file asked for whole was written and the user's check passed it: answer now
    write_refused: bool = False  # a write of the target was refused (the user, a rule, a hook): not pressed for again
    read_again: bool = False  # the last reply read a file as attached to the request (nudges.answer_now)

    @property
    def target(self) -> str | None:
        """The one code file the request named (loop/wholefile.py)."""
        return change_target(self.attached)

    def ran(self, name: str, changed: bool, after: AfterTool, same_write: bool = False, arguments: str = "") -> None:
        """A call finished: a change waits for a command run after it (its check), unless a
        PostToolUse hook checked it (`after`); one that blocked a change asks for it again (nudges.py).
        `same_write`: a write that left its file as it was. Refused by the check, it is the model's
        answer to the failure: asked for again like a change, or, after a sampled ask, the run
        stops (nudges.answer_now); after the check passed, the work is
        done and the model is going round (Qwen2.5-Coder-1.5B, its tests passing, wrote the same
        file and ran the same tests for 17 more requests). A write of the target file asked for
        whole (`arguments`: the call's) that the check passed has the answer asked for next."""
        if changed or same_write:  # a write that ran (a refused one leaves things as they were)
            self.same_failed = same_write and after.blocked
        if changed:
            self.changed, self.checked, self.check_failed = True, after.ran, after.blocked
        elif name == "run_command":
            self.checked = True
        elif same_write and after.blocked:
            self.check_failed = True
        elif same_write and self.check_passed:
            self.went_round()
        if after.ran and name in WRITING_TOOLS:
            self.check_passed, self.check_said = not after.blocked, after.added if after.blocked else ""
            self.whole_passed = self.whole_reply and self.check_passed and self._writes_target(name, arguments)

    def repeated(self, name: str) -> None:
        """The repeat guard refused a call: going round. A write refused so after its check failed is
        the same failing file once more (ran(), same_write)."""
        self.went_round(refused=True)
        if name in WRITING_TOOLS and self.check_passed is False:
            self.check_failed = self.same_failed = True

    def refused(self, name: str, arguments: str) -> None:
        """The user, a rule or a hook refused a call (not the repeat guard: a model repeating a failed
        edit is what the file asked for whole cures)."""
        self.write_refused |= self._writes_target(name, arguments)

    def _writes_target(self, name: str, arguments: str) -> bool:
        if name not in WRITING_TOOLS or (target := self.target) is None:
            return False
        path = parse_tool_call({"function": {"name": name, "arguments": arguments}}).arguments.get("path")
        return isinstance(path, str) and posixpath.normpath(path) == posixpath.normpath(target)

    def went_round(self, refused: bool = False) -> None:
        """A look that found the same as before, or a repeat the guard `refused`."""
        self.resample = True
        if self.answer_now is AnswerNow.NOT_NEEDED:
            self.answer_now = AnswerNow.DUE
        elif self.answer_now is AnswerNow.ASKED:
            self.rounds_since_asked += 1
            self.hopeless |= refused or self.rounds_since_asked >= ROUNDS_AFTER_ASKED


class StopTurn(Exception):
    """Ends the turn before the model answered; `code` says why, `detail` the numbers."""

    def __init__(self, code: StopCode, **detail):
        super().__init__(code)
        self.code, self.detail = code, detail


class Answered(Exception):  # a way out of the loop, not an error
    """The model answered: the turn is done. `written`: the loop wrote the answer (nothing streamed it)."""

    def __init__(self, text: str, written: bool = False):
        super().__init__(text)
        self.text, self.written = text, written
