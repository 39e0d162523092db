"""The small strategy: plain's (plain.py), and what a small model needs to finish a change. Measured with
Qwen2.5-Coder-1.5B (small_texts.py has each text with its evidence):

- the file asked for whole: a change to the one code file the user's words named (the request, never a
  command file's expansion, piped text or a `!` output) is asked for whole in a code block, tools off,
  and the block run as a write_file call (wholefile.py) — when the model reads an attached file again,
  goes round, answers without a change, or the user's check refuses its change; with a small window
  (the lean tool set) the request itself asks for it;
- an unmade change: a fix shown in a code block, or an answer that changed nothing, sent back once;
  a change answered without running the tests the request named, sent back once;
- the check's answer: the file asked for whole that a PostToolUse hook (the user's auto-test) passes
  ends the turn in the loop's words; still refused after MAX_WHOLE_FILE_ASKS asks, or the same failing
  file after a sampled ask, the run stops (StopCode.CHECK_FAILING) with the check's last lines;
- resampling: after going round, a reply that looped, or a write that changed nothing, the next
  request is sampled at RESAMPLE_TEMPERATURE (at temperature 0 the same request brings the same reply).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from nanohermes.calls import WRITING_TOOLS, parse_tool_call
from nanohermes.events import StopCode
from nanohermes.hooks import AfterTool
from nanohermes.loop.coach import spec, wholefile
from nanohermes.loop.coach.plain import MAX_RUNAWAY_RETRIES, AnswerNow, Plain
from nanohermes.loop.coach.protocol import Ran, names
from nanohermes.loop.coach.small_texts import (
    CHECK_FAILED,
    CHECK_LAST_LINES,
    CHECK_PASSED,
    CHECK_STILL_FAILS,
    CHECK_TAIL_LINES,
    CHECK_THE_CHANGE,
    GOING_ROUND,
    GOING_ROUND_AFTER_CHANGE,
    MAKE_IT_NOW,
    MAKE_THE_CHANGE,
    MAX_WHOLE_FILE_ASKS,
    NOTHING_CHANGED,
    NOTHING_CHANGED_YET,
    READ_AGAIN,
    RESAMPLE_TEMPERATURE,
    UNCHECKED_CHANGE_NOTICE,
    UNMADE_CHANGE_NOTICE,
    WHOLE_AS_CALL,
    WHOLE_AT_ONCE,
    WHOLE_CUT,
    WHOLE_FILE_NOTICE,
    WHOLE_FILE_WRITTEN,
    WHOLE_PASSED,
    WHOLE_UNCHANGED,
    WHOLE_UNCHECKED,
    asked_for_again,
)  # fmt: skip
from nanohermes.loop.nudges import Nudge
from nanohermes.loop.turn import Answered, StopTurn
from nanohermes.provider import AssistantTurn
from nanohermes.provider.runaway import tool_call_in_text
from nanohermes.provider.stream import FINISH_REPEATED
from nanohermes.provider.textcalls import tool_calls_from_text
from nanohermes.workspace import list_workspace

CHANGE_VERBS = re.compile(
    r"\b(fix|change|edit|modify|implement|complete|update|rename|refactor|replace|add|remove|delete|correct)\b", re.I
)
QUESTION_START = re.compile(r"^\s*(how|what|why|which|where|when|who|is|are|does|do|did|should|explain)\b", re.I)
CODE_BLOCK = re.compile(r"^\s*```", re.M)
NAMES_TESTS = re.compile(r"\b(tests?|pytest|unittest|spec)\b|\w_tests?\.\w+|\btest_\w+", re.I)
TESTS_LOOKED_AT = 2_000  # files of the workspace looked through for a test; beyond, it has some, say


def has_tests(workspace: Path) -> bool:
    """The workspace holds a test to run (its first TESTS_LOOKED_AT files, or more than that: assumed)."""
    listing = list_workspace(workspace, limit=TESTS_LOOKED_AT)
    return not listing.complete or any(spec.is_test_file(f) for f in listing.files)


def asks_for_a_change(user_text: str) -> bool:
    """A request to change the code ("fix it", "add a flag"), not a question about how to."""
    return bool(CHANGE_VERBS.search(user_text)) and not QUESTION_START.match(user_text)


def shows_an_unmade_change(user_text: str, reply: str, changed: bool) -> bool:
    """The reply ends the turn with code for a change the user asked for, and nothing changed."""
    return not changed and bool(CODE_BLOCK.search(reply)) and asks_for_a_change(user_text)


@dataclass
class Small(Plain):
    changed: bool = False  # a tool changed a file
    checked: bool = False  # a command ran after the last change (the tests, say), or a PostToolUse hook did
    check_failed: bool = False  # … and that hook blocked: the change failed the user's check
    check_passed: bool | None = None  # what the last PostToolUse hook that ran after a write said (None: none ran)
    same_failed: bool = False  # the last write left its file as it was, and the check still failed
    check_said: str = ""  # what the last check that refused a write said (its hook's output)
    nudged: bool = False  # told once to make the change it showed
    check_asked: bool = False  # told once to run the tests after its change
    resample: bool = False  # it went round, or a write changed nothing: the next request is sampled
    whole_asked: bool = False  # the next reply is asked for the target file whole, tools off (wholefile.py)
    whole_asks: int = 0  # … how often this turn
    whole_reply: bool = False  # the reply in hand answers that ask (cut, or a call as text: asked again)
    whole_passed: bool = False  # the file asked for whole was written and the user's check passed it: answer now
    # … or the one file named, written by write_file, with no check after it: the answer, if nothing here
    # could check it (_written_whole)
    whole_unchecked: str = ""
    write_refused: bool = False  # a write of the target was refused (the user, a rule, a hook): not pressed for again
    read_again: bool = False  # the last reply read a file as attached to the request (before_request)

    @property
    def target(self) -> str | None:
        """The one code file the user's words named (wholefile.py)."""
        return wholefile.change_target(self.asked)

    def note(self, attached: dict[str, str], asked: dict[str, str], lean: bool, schemas: list[dict]) -> str:
        """With a small window (`lean`: the lean tool set is offered), the ask for the one code file the
        request names whole (tools off); "" otherwise."""
        self.asked = asked
        nudge = self._whole_file(names(schemas), WHOLE_AT_ONCE) if lean else None
        return nudge.text if nudge else ""

    def before_request(self, schemas: list[dict]) -> Nudge | None:
        """After the first time a turn went round in circles: ask for the answer, tool calls off, or,
        for a change asked for and not made yet, for the change (tools on: it needs them). A change to
        the one code file the request named: that file whole, tools off, made or not (going round after
        a write, the model is stuck on a file the tests refuse), MAX_WHOLE_FILE_ASKS times a turn; that
        file whole also after the model read a file attached to the request (it has them all), and after
        a PostToolUse hook blocked a change (the user's auto-test failed); blocked after the last ask,
        StopTurn. That file written whole as asked and passing the check, or where nothing could check it
        (no test in the workspace, no check hook): Answered, in the loop's words.
        After the check passed, going round asks for the answer only."""
        offered = names(schemas)
        read_again, failed = self.read_again, self.check_failed
        self.read_again = self.check_failed = False  # each is answered once
        if self.whole_passed:
            raise Answered(WHOLE_PASSED.format(path=self.target), written=True)
        if unchecked := self.whole_unchecked:  # looked at once: the workspace is listed for a test
            self.whole_unchecked = ""
            if not self.tests_checked and self.workspace and not has_tests(self.workspace):
                raise Answered(unchecked, written=True)
        if failed and (self.whole_asks >= MAX_WHOLE_FILE_ASKS or (self.same_failed and self.whole_asks > 1)):
            self.check_still_failing()  # spent, or the same file after a sampled ask
        if failed and "edit_file" in offered and (whole := self._whole_file(offered, CHECK_FAILED)):
            return whole  # as aider's --auto-test sends a failing test run back
        if read_again and self.answer_now is AnswerNow.NOT_NEEDED and "edit_file" in offered:
            return self._whole_file(offered, READ_AGAIN)  # the file whole at the first read of an attached one
        if self.answer_now is not AnswerNow.DUE:
            return None
        why = GOING_ROUND_AFTER_CHANGE if self.changed else GOING_ROUND
        if not self.check_passed and "edit_file" in offered and (whole := self._whole_file(offered, why)):
            self.answer_now = AnswerNow.NOT_NEEDED  # going round again asks again, or for the answer at last
            return whole
        if self.check_passed:
            self.answer_now = AnswerNow.ASKED
            return Nudge(
                "answer_now",
                CHECK_PASSED,
                "the check passed and the model went round; asked for its answer",
                tools_off=True,
            )
        if not self.changed and asks_for_a_change(self.request) and "edit_file" in offered:
            self.answer_now = AnswerNow.ASKED
            return Nudge(
                "make_it_now", MAKE_IT_NOW, "the model was going round in circles; asked it to make the change"
            )
        return self.answer_asked()

    def _whole_file(self, offered: list[str], why: str) -> Nudge | None:
        """A change to the one code file the request named: asked for whole, tools off."""
        path = self.target
        if path is None or self.whole_asks >= MAX_WHOLE_FILE_ASKS or "write_file" not in offered:
            return None
        if not asks_for_a_change(self.request) or self.write_refused:
            return None
        self.whole_asked, self.whole_asks = True, self.whole_asks + 1
        # The first time greedily (code is best written so); asked again, the same model at temperature 0
        # wrote the same file again (dev set): sampled. A reply that loops is sampled again too (runaway).
        self.resample = self.whole_asks > 1
        notice = WHOLE_FILE_NOTICE.format(path=path)
        return Nudge("write_it_whole", wholefile.asked_for(path, why), notice, tools_off=True)

    def options(self, nudge: Nudge | None, temperature: float | None) -> dict:
        """Tool calls off for an answer (or a file whole) asked for so; sampled at RESAMPLE_TEMPERATURE
        (when the configured temperature is lower) once after the model went round in circles or a reply
        looped — at temperature 0 the same conversation brings the same call again (a file asked for
        whole: from the second time, _whole_file)."""
        options: dict = {"tool_choice": "none"} if (nudge and nudge.tools_off) or self.whole_asked else {}
        if self.resample and (temperature is None or temperature < RESAMPLE_TEMPERATURE):
            options["temperature"] = RESAMPLE_TEMPERATURE
        self.resample = False
        return options

    def repaired(
        self, reply: AssistantTurn, schemas: list[dict], workspace: Path, messages: list[dict]
    ) -> tuple[AssistantTurn, str] | None:
        """Plain's calls written as text, or a reply that holds the whole new file the request asked to
        change, as its write_file call (wholefile.py)."""
        asked = self.whole_reply = self.whole_asked
        self.whole_asked = False
        found = super().repaired(reply, schemas, workspace, messages)
        if found is not None or reply.tool_calls or reply.finish_reason == FINISH_REPEATED:
            return found
        if tool_calls_from_text(reply.content, schemas):
            return None  # calls that only echo what the model was shown (plain's): never a file either
        path = self.target
        if path is None or "write_file" not in names(schemas) or not asks_for_a_change(self.request):
            return None
        write = wholefile.as_write(reply, path, workspace, asked)
        return (write, WHOLE_FILE_WRITTEN.format(path=path)) if write else None

    def check_reply(self, reply: AssistantTurn, offered: list[str]) -> None:
        """StopTurn when the file, asked for whole after the check failed, came back as a call written as
        text the loop could not repair, or cut once more after the last retry: no file came, and the change
        still fails (a held-out run ended so with exit 0, its tests failing). Such a call is not asked for
        again: Qwen2.5-Coder-1.5B, its file failing the tests, answered the ask so in 5 held-out runs, and
        the 9 asks again brought no file (such calls again, or empty replies), each a request of 4,000–5,400
        tokens sent."""
        if not (self.whole_reply and self.check_passed is False and (path := self.target)) or reply.tool_calls:
            return
        as_text = reply.finish_reason not in WHOLE_CUT and tool_call_in_text(reply.content, offered)
        if as_text or (self.runaways >= MAX_RUNAWAY_RETRIES and _whole_again(reply, path, offered)):
            self.check_still_failing()

    def runaway(self, reply: AssistantTurn, offered: list[str]) -> Nudge | None:
        if self.whole_reply and (path := self.target) and (again := _whole_again(reply, path, offered)):
            self.whole_asked = self.resample = True  # at temperature 0 the same request brings the same reply
            return again
        return super().runaway(reply, offered)

    def looped(self) -> None:
        self.resample = True  # at temperature 0 the same request loops the same way

    def answered(self, text: str, offered: list[str]) -> Nudge | None:
        return self._unmade_change(text, offered, answer=True) or self._unchecked_change(offered)

    def after_calls(self, text: str, offered: list[str]) -> Nudge | None:
        """Once a turn: the reply shows code for a change the user asked for, and no file changed."""
        return self._unmade_change(text, offered)

    def _unmade_change(self, reply_text: str, offered: list[str], answer: bool = False) -> Nudge | None:
        """`answer`: the reply ends the turn (no calls beside it)."""
        if self.nudged or self.write_refused or "edit_file" not in offered:
            return None  # the user, a rule or a hook refused the write: not pressed for again
        if answer and not self.changed and (whole := self._whole_file(offered, NOTHING_CHANGED_YET)):
            nudge = whole
        elif shows_an_unmade_change(self.request, reply_text, self.changed):
            nudge = Nudge("make_the_change", MAKE_THE_CHANGE, UNMADE_CHANGE_NOTICE)
        elif answer and self.asked and not self.changed and asks_for_a_change(self.request):
            nudge = Nudge("make_the_change", NOTHING_CHANGED, UNMADE_CHANGE_NOTICE)  # the request named files
        else:
            return None
        self.nudged = True
        if self.answer_now is AnswerNow.DUE:  # the change needs the tools: don't ask for an answer without them
            self.answer_now = AnswerNow.WAIVED
        return nudge

    def _unchecked_change(self, offered: list[str]) -> Nudge | None:
        """Once a turn: the model answers after changing files for a request about tests, and no
        command ran since the change. Not after it was asked for its answer (it went round)."""
        if self.check_asked or not self.changed or self.checked or self.answer_now is AnswerNow.ASKED:
            return None
        if "run_command" not in offered or not NAMES_TESTS.search(self.request):
            return None
        if self.workspace is not None and not has_tests(self.workspace):
            return None  # "tests" named in passing (aider's benchmark: "referenced from … unit tests"), none to run
        self.check_asked = True
        return Nudge("check_the_change", CHECK_THE_CHANGE, UNCHECKED_CHANGE_NOTICE)

    def saw(self, ran: Ran) -> None:
        """A call's outcome, in the order the loop learned it: refused by the repeat guard or another,
        read as attached, a look that found the same, what it changed and what the check said."""
        if ran.repeated:
            self.repeated(ran.name)
        if ran.refused:
            self.write_refused |= self._writes_target(ran.name, ran.arguments)
        self.read_again |= ran.read_again  # for a change to one file, reason enough to ask for it whole
        if ran.same_look:
            self.went_round()
        same_write = ran.name in WRITING_TOOLS and ran.ok and not ran.changed
        self.ran(ran.name, ran.changed, ran.after, same_write, ran.arguments)
        self.resample |= ran.name in WRITING_TOOLS and not ran.changed  # the same write again, at temperature 0

    def ran(self, name: str, changed: bool, after: AfterTool, same_write: bool = False, arguments: str = "") -> None:
        """A call finished: a change waits for a command run after it (its check), unless a
        PostToolUse hook checked it (`after`); one that blocked a change asks for it again.
        `same_write`: a write that left its file as it was. Refused by the check, it is the model's
        answer to the failure: asked for again like a change, or, after a sampled ask, the run
        stops (before_request); after the check passed, the work is done and the model is going
        round (Qwen2.5-Coder-1.5B, its tests passing, wrote the same file and ran the same tests for
        17 more requests). A write of the target file asked for whole (`arguments`: the call's)
        that the check passed has the answer asked for next."""
        if changed or same_write:  # a write that ran (a refused one leaves things as they were)
            self.same_failed = same_write and after.blocked
            written = self._written_whole(name, arguments) if not after.ran else None
            said = WHOLE_UNCHANGED if same_write else WHOLE_UNCHECKED
            self.whole_unchecked = said.format(path=written) if written else ""
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

    def _written_whole(self, name: str, arguments: str) -> str | None:
        """The file a write_file call made whole when the request named that one file and nothing else —
        asked for whole, or written so unasked (bowling.py's 114 lines, aider's second try, attached in
        part: the 1.5B model wrote it, then the same file again, a request more each). A request that
        also names a document or a test ("…and say so in README.md") is not done by this write."""
        only = wholefile.only_file(self.asked)
        return only if name == "write_file" and only and _writes(only, name, arguments) else None

    def _writes_target(self, name: str, arguments: str) -> bool:
        return (target := self.target) is not None and _writes(target, name, arguments)

    def went_round(self, refused: bool = False) -> None:
        self.resample = True
        super().went_round(refused)

    def check_still_failing(self) -> None:
        """StopTurn: the change still fails the user's check; the check's last lines are the answer."""
        raise StopTurn(StopCode.CHECK_FAILING, answer=self.check_still_fails(), tries=self.whole_asks)

    def check_still_fails(self) -> str:
        """The answer of a run stopped on a failing check: the last lines of what the check said."""
        said = self.check_said.strip().removeprefix("[PostToolUse hook output]").strip("\n")
        tail = [line for line in said.splitlines() if line.strip()][-CHECK_TAIL_LINES:]
        still = CHECK_STILL_FAILS.format(path=self.target or "the file")
        return still + CHECK_LAST_LINES + "\n".join(f"    {line}" for line in tail) if tail else still


def _writes(target: str, name: str, arguments: str) -> bool:
    if name not in WRITING_TOOLS:
        return False
    path = parse_tool_call({"function": {"name": name, "arguments": arguments}}).arguments.get("path")
    return isinstance(path, str) and posixpath.normpath(path) == posixpath.normpath(target)


def _whole_again(reply: AssistantTurn, path: str, offered: list[str]) -> Nudge | None:
    """The file asked for whole again: the reply to that ask was cut, or it wrote a call as text."""
    if reply.finish_reason in WHOLE_CUT:
        notice = f"the reply with {path} whole was cut ({reply.finish_reason}); asked again"
        return Nudge("repeating", asked_for_again(path, reply.finish_reason or ""), notice, tools_off=True)
    if reply.tool_calls or not (name := tool_call_in_text(reply.content, offered)):
        return None
    notice = f"asked for {path} whole, the model wrote a {name} call as text; asked again"
    return Nudge("call_as_text", wholefile.asked_for(path, WHOLE_AS_CALL.format(name=name)), notice, tools_off=True)
