"""The plain strategy, every model's: a reply that cannot stand as it came is sent back once or twice
with a note — cut mid tool call by max_tokens (broken JSON: never run), cut for repeating one passage
(provider/runaway.py), a tool call written as text (one that is nothing but calls runs as them); a
model going round in circles is asked once a turn, tool calls off, for its answer; a Stop hook may send
the model back to work; a run the loop stops still ends with an answer (one last request, tools off,
marked partial: loop/ending.py); a task that says to make the tests pass keeps its tests (spec.py).
The small strategy (small.py) builds on this one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from nanohermes.events import StopCode
from nanohermes.loop.coach import spec
from nanohermes.loop.coach.protocol import Ran, Verdict, names
from nanohermes.loop.nudges import CUT_ANSWER_NOTICES, Nudge
from nanohermes.loop.turn import StopTurn
from nanohermes.provider import AssistantTurn
from nanohermes.provider.runaway import tool_call_in_text
from nanohermes.provider.stream import FINISH_REPEATED, FINISH_TOO_LONG, MAX_REPLY_CHARS
from nanohermes.provider.textcalls import echoes, tool_calls_from_text
from nanohermes.stops import TO_MODEL
from nanohermes.text import strip_thinking

MAX_LENGTH_RETRIES = 2  # replies cut by max_tokens mid tool call
MAX_RUNAWAY_RETRIES = 2  # replies cut for repeating, or calls written as text: then the reply is the answer
# Claude Code stops after 8 blocks in a row; a local model's answers cost minutes, and a hook
# whose check three tries could not satisfy is one the user should look at.
MAX_STOP_BLOCKS = 3
# Asked for its change with the tools on, a model may go on reading the same things: that many
# more looks with the same result (or one refused repeat) and the run stops.
ROUNDS_AFTER_ASKED = 3

CUT_CALL_RETRY = (
    "[Your last reply was cut off by the output token limit in the middle of a tool call, so it was not run. "
    "Call the tool again with shorter arguments (e.g. write a large file in several smaller edits).]"
)
TOO_LONG_CALL_RETRY = (
    f"[Your last reply passed NanoHermes's cap of {MAX_REPLY_CHARS // 2**20} MB in the middle of a tool call, so "
    "it was not run. Call the tool again with much shorter arguments (e.g. write a large file in several edits).]"
)
REPEATED_RETRY = (
    "[Your last reply was cut: it kept repeating the same passage (one copy is kept above). "
    "Don't repeat it. Go on from there: call a tool if something is missing, else give your answer.]"
)
CALL_AS_TEXT_RETRY = (
    "[Your last reply wrote a {name} call as text, so nothing ran. To use a tool, make a real tool "
    "call (not text); or, if you have what you need, give your answer.]"
)
CALL_REPAIRED = "the model wrote its tool call as text; it was run as a call"
NO_ANSWER_BUT_CALLS = (
    "The model gave no answer: asked for one with tool calls off, it wrote another call ({names}) as text, "
    "which was not run."
)
FINAL_ANSWER_REQUEST = (
    "[NanoHermes stopped this run: {why}. No more tool calls. From what you found so far, give the "
    "best answer you can now; say what is unverified or left to do.]"
)
# Qwen2.5-Coder-1.5B, asked for a port, read config/settings.ini and then read it five more
# times; the same history with this request gave the right answer. A note in the tool result
# did not (it wrote the next call as text). Later repeats are refused, and past REPEAT_STOP
# (loop/guard.py) the run stops.
ANSWER_NOW = (
    "[NanoHermes: you are going round in circles (the same call again, the same result). No tool calls in "
    "this reply: from what you found so far, give your answer; if something is still missing, say what.]"
)
ANSWER_NOW_NOTICE = "the model was going round in circles; asked it for its answer, tool calls off"


class AnswerNow(Enum):
    """Whether to ask, tools off, for the answer of a model going round in circles (once a turn)."""

    NOT_NEEDED = "not needed"
    DUE = "due"  # it went round: the next request asks for the answer with tool calls off
    ASKED = "asked"  # asked this turn: going round again after that is hopeless (StopTurn)
    WAIVED = "waived"  # not asked after all (a nudge needs the tools): the guard alone from here


@dataclass
class Plain:
    request: str  # what the user asked, in their own words ("" for a prompt they did not write)
    hooks: object = None  # the session's hooks (hooks/__init__.py): Stop runs when the model answers
    tests_checked: bool = False  # a PostToolUse hook runs the tests after each edit (spec.py)
    seen: object = None  # auto's evidence (choice.py.Evidence): told of each reply and each round; None: not kept
    workspace: Path | None = None  # where relative paths of calls lead (spec.py)
    cut_calls: int = 0  # replies cut by max_tokens inside a tool call
    runaways: int = 0  # replies sent back: looping, a call written as text, a fix shown but not made
    stop_blocks: int = 0  # answers a Stop hook sent back this turn
    answer_now: AnswerNow = AnswerNow.NOT_NEEDED
    rounds_since_asked: int = 0
    hopeless: bool = False  # after the model was asked for its answer (or its change), it went round again
    asked: dict[str, str] = field(default_factory=dict)  # the attached files the user's own words name

    def note(self, attached: dict[str, str], asked: dict[str, str], lean: bool, schemas: list[dict]) -> str:
        self.asked = asked
        return ""

    def before_request(self, schemas: list[dict]) -> Nudge | None:
        """After the first time a turn went round in circles: the answer, tool calls off."""
        if self.answer_now is not AnswerNow.DUE:
            return None
        return self.answer_asked()

    def answer_asked(self) -> Nudge:
        self.answer_now = AnswerNow.ASKED
        return Nudge("answer_now", ANSWER_NOW, ANSWER_NOW_NOTICE, tools_off=True)

    def options(self, nudge: Nudge | None, temperature: float | None) -> dict:
        """Tool calls off for an answer asked for so."""
        return {"tool_choice": "none"} if nudge and nudge.tools_off else {}

    def after_reply(
        self, reply: AssistantTurn, schemas: list[dict], workspace: Path, messages: list[dict] = ()
    ) -> Verdict:
        """A reply that is nothing but tool calls written as text runs as the calls it means (recorded as
        real calls, so the next request's history is valid) — unless it only echoes text the model was
        shown in `messages` (a tool result, a request's files: what a file said is never run as a call);
        a reply to send back rather than act on has its nudge (counted); StopTurn when replies keep being
        cut mid tool call."""
        if self.seen is not None:
            self.seen.reply(reply, schemas)
        offered = names(schemas)
        repaired = self.repaired(reply, schemas, workspace, messages)
        if repaired is not None:
            reply = repaired[0]
        return Verdict(reply, repaired[1] if repaired else None, self.sent_back(reply, offered))

    def repaired(
        self, reply: AssistantTurn, schemas: list[dict], workspace: Path, messages: list[dict]
    ) -> tuple[AssistantTurn, str] | None:
        if reply.tool_calls or reply.finish_reason == FINISH_REPEATED:
            return None
        if calls := tool_calls_from_text(reply.content, schemas):
            shown = (str(m.get("content") or "") for m in messages if m.get("role") in ("tool", "user"))
            if echoes(reply.content, shown):
                return None
            return replace(reply, content="", tool_calls=calls, finish_reason="tool_calls"), CALL_REPAIRED
        return None

    def sent_back(self, reply: AssistantTurn, offered: list[str]) -> Nudge | None:
        if reply.finish_reason in CUT_ANSWER_NOTICES and reply.tool_calls:
            self.cut_calls += 1
            if self.cut_calls > MAX_LENGTH_RETRIES:
                raise StopTurn(StopCode.CUT_CALLS)
            if reply.finish_reason == FINISH_TOO_LONG:
                notice = f"reply passed {MAX_REPLY_CHARS // 2**20} MB mid tool call; asking the model to retry"
                return Nudge("cut_call", TOO_LONG_CALL_RETRY, notice, keeps_reply=False)
            notice = "reply cut by max_tokens mid tool call; asking the model to retry"
            return Nudge("cut_call", CUT_CALL_RETRY, notice, keeps_reply=False)
        self.check_reply(reply, offered)
        nudge = None if self.runaways >= MAX_RUNAWAY_RETRIES else self.runaway(reply, offered)
        self.runaways += nudge is not None
        return nudge or self.stop_hook(reply)

    def check_reply(self, reply: AssistantTurn, offered: list[str]) -> None:
        """A reply that ends the turn as it is (StopTurn); plain has none."""

    def runaway(self, reply: AssistantTurn, offered: list[str]) -> Nudge | None:
        if reply.finish_reason == FINISH_REPEATED:
            self.looped()
            return Nudge(
                "repeating", REPEATED_RETRY, "the reply kept repeating itself; it was cut and the model told so"
            )
        if reply.tool_calls:
            return None
        if nudge := self.answered(reply.content, offered):
            return nudge  # before a call as text: the fix is the point
        if name := tool_call_in_text(reply.content, offered):
            notice = f"the model wrote a {name} call as text; told it to make a real call"
            return Nudge("call_as_text", CALL_AS_TEXT_RETRY.format(name=name), notice)
        return None

    def looped(self) -> None:
        """A reply cut for repeating itself is sent back (small.py samples the next request)."""

    def answered(self, text: str, offered: list[str]) -> Nudge | None:
        """An answer (no calls) to send back for what it left undone; plain sends none."""
        return None

    def stop_hook(self, reply: AssistantTurn) -> Nudge | None:
        """The model answered: a Stop hook (exit 2, or decision "block") may send it back to work with
        its reason, MAX_STOP_BLOCKS times a turn (a hook that never lets go must not hold the run)."""
        if reply.tool_calls or self.hooks is None or self.stop_blocks >= MAX_STOP_BLOCKS:
            return None
        reason = self.hooks.at_stop(reply.content, active=self.stop_blocks > 0)
        if reason is None:
            return None
        self.stop_blocks += 1
        return Nudge("hook_stop", reason, "a Stop hook sent the model back to work")

    def before_call(self, name: str, arguments: str) -> str | None:
        """A write to a test file when the task's tests are its spec (spec.py)."""
        return spec.refusal(name, arguments, self.request, self.tests_checked, self.workspace)

    def after_results(self, reply: AssistantTurn, results: list[Ran], schemas: list[dict]) -> Nudge | None:
        """What the calls said of the turn; StopTurn when, asked for its answer, the model went round again."""
        for ran in results:
            self.saw(ran)
        if self.hopeless:
            raise StopTurn(StopCode.REPEATING)
        return self.after_calls(reply.content, names(schemas))

    def saw(self, ran: Ran) -> None:
        if ran.repeated:
            self.went_round(refused=True)
        if ran.same_look:
            self.went_round()

    def after_calls(self, text: str, offered: list[str]) -> Nudge | None:
        """A note after a reply's calls ran; plain has none."""
        return None

    def went_round(self, refused: bool = False) -> None:
        """A look that found the same as before, or a repeat the guard `refused`."""
        if self.seen is not None:
            self.seen.went_round()
        if self.answer_now is AnswerNow.NOT_NEEDED:
            self.answer_now = AnswerNow.DUE
        elif self.answer_now is AnswerNow.ASKED:
            self.rounds_since_asked += 1
            self.hopeless |= refused or self.rounds_since_asked >= ROUNDS_AFTER_ASKED

    def final_request(self, stop: StopTurn) -> Nudge:
        return Nudge("final_answer", FINAL_ANSWER_REQUEST.format(why=TO_MODEL[stop.code]), "")

    def final_text(self, reply: AssistantTurn, schemas: list[dict]) -> str:
        """The stopped run's last reply as its answer. One that is nothing but calls written as text
        (a small model asked for its answer with tools off often writes one more ```json call) is
        said in words: the user would otherwise read a call that never ran as the answer."""
        content = strip_thinking(reply.content).strip()
        calls = tool_calls_from_text(content, schemas)
        if not calls:
            return content
        called = ", ".join(dict.fromkeys(c["function"]["name"] for c in calls))
        return NO_ANSWER_BUT_CALLS.format(names=called)
