"""What the loop tells the model, and when: every message it writes in the user role, and the
decisions that send them. A nudge is saved tagged with its kind (synthetic.py), so nothing
reads it as the user's words.

A reply that cannot stand as it came is sent back once or twice with a note: cut mid tool call
by max_tokens (broken JSON: never run), cut for repeating one passage (provider/runaway.py), a
tool call written as text, or a change the user asked for shown in a code block but not made.
A model going round in circles is asked once a turn, tool calls off, for its answer. A run the
loop stops still ends with an answer: one last request, tools off, marked partial (loop/ending.py,
which also holds the answers the loop writes itself).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.events import StopCode
from nanohermes.loop import wholefile
from nanohermes.loop.turn import Answered, AnswerNow, StopTurn, Turn
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

CUT_CALL_RETRY = (
    "[Your last reply was cut off by the output token limit in the middle of a tool call, so it was not run. "
    "Call the tool again with shorter arguments (e.g. write a large file in several smaller edits).]"
)
TOO_LONG_CALL_RETRY = (
    f"[Your last reply passed NanoHermes's cap of {MAX_REPLY_CHARS // 2**20} MB in the middle of a tool call, so "
    "it was not run. Call the tool again with much shorter arguments (e.g. write a large file in several edits).]"
)
# What the user is told of a reply that was cut and kept as the answer, by why it was cut.
CUT_ANSWER_NOTICES = {
    "length": "the answer was cut at max_tokens; ask to continue",
    FINISH_TOO_LONG: f"the answer passed {MAX_REPLY_CHARS // 2**20} MB and was cut there; the rest was not read",
}
# A file asked for whole that came back cut (Qwen2.5-Coder-1.5B wrote `s = s.replace(…)` lines to the
# output limit): asked again, sampled, by why it was cut.
WHOLE_CUT = {
    FINISH_REPEATED: "[Your last reply was cut: it kept repeating the same passage.",
    "length": "[Your last reply was cut at the output token limit before the file's end.",
}


# … or that came back as a write_file call written as text the loop could not repair (Qwen2.5-Coder-1.5B,
# asked for allergies.py whole, wrote it as ```json {"name": "write_file", …} with a bracket wrong, twice;
# told "make a real tool call", it read the tests instead): asked again for what was asked, sampled.
WHOLE_AS_CALL = "[Your last reply wrote a {name} call as text, so nothing ran; no call is needed for this."


def asked_for_again(path: str, why: str = FINISH_REPEATED) -> str:
    """The file asked for whole again after a reply cut for `why` (a finish reason)."""
    return wholefile.asked_for(path, WHOLE_CUT[why])


REPEATED_RETRY = (
    "[Your last reply was cut: it kept repeating the same passage (one copy is kept above). "
    "Don't repeat it. Go on from there: call a tool if something is missing, else give your answer.]"
)
CALL_AS_TEXT_RETRY = (
    "[Your last reply wrote a {name} call as text, so nothing ran. To use a tool, make a real tool "
    "call (not text); or, if you have what you need, give your answer.]"
)
# A model that repeated a call at temperature 0 repeats it again: the request after it is sampled.
# Qwen2.5-Coder's own recommended temperature; a configured temperature above it is kept.
RESAMPLE_TEMPERATURE = 0.7
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
# Asked "the test fails: run it, find the cause and fix it", Qwen2.5-Coder-1.5B ran the test,
# explained the KeyError and ended its turn with the fix in a code block; no file changed. Told
# once that it had changed nothing, the same model made the edit (4 of 4 tries). A standing
# prompt rule had the opposite effect: it rewrote files while answering a plain question. So
# this comes after the fact, and only for a request to change the code.
MAKE_THE_CHANGE = (
    "[You described a change but no file was changed, and the user asked for the change itself. "
    "Make it with edit_file, then check it. If you made it another way, or it can't be done, say so.]"
)
UNMADE_CHANGE_NOTICE = "the reply showed a change without making it; told the model to make it"
# Asked to modify a file the request named, the same model re-read it and answered in prose
# ("isogram is an isogram"), no code shown, nothing changed. When the request names a file of
# the workspace, an answer that changed nothing is sent back once, code block or not. The note
# names no file: listing the request's files (instructions, code, tests) had the model edit the
# instructions (2 of 2 Exercism runs where it fired).
NOTHING_CHANGED_YET = "[No file has changed yet, and the user asked for a change."
NOTHING_CHANGED = (
    f"{NOTHING_CHANGED_YET} Make it now with edit_file or write_file in the file the request asks you to "
    "change, then check it. If it cannot be done, say why.]"
)
# Either note, when the request named one code file to change: that file whole, tools off, its
# block run as a write_file call (loop/wholefile.py).
WHOLE_FILE_NOTICE = "asked the model for {path} whole in a code block, tool calls off"
WHOLE_FILE_WRITTEN = "the model wrote {path} whole in a code block; it is run as a write_file call"
CALL_REPAIRED = "the model wrote its tool call as text; it was run as a call"
# The same model, asked to change a file, read the files the request named round and round (the
# same results) and, asked for its answer with tools off, said it had changed the file: nothing
# had changed. For a change not made yet the tools stay on and the change is asked for.
GOING_ROUND = "[NanoHermes: you are going round in circles (the same reads, the same results): you have what you need."
GOING_ROUND_AFTER_CHANGE = "[NanoHermes: you are going round in circles (the same calls, the same results)."
# Asked to change the one code file it named (attached whole), the same model re-read an attached
# file first in 9 of 9 dev exercises, was shown the pointer to the attachment, read again, and only
# then was seen going round: ~4 requests for nothing. The first read of an attached file is enough.
READ_AGAIN = "[NanoHermes: that file is attached to the request above, unchanged: you have what you need."
# … and in 15 of 15 held-out exercises its first request was such a read. With a small window (the lean
# tool set) that file is asked for whole in the request itself, tools off, as aider's "whole" edit format
# asks a weak model from the first reply: one request less, and no read and pointer in the history.
WHOLE_AT_ONCE = "[NanoHermes: the files this request names are attached above: you have what you need."
# A PostToolUse hook that blocks a change (exit 2, decision "block") is a Claude Code user's
# auto-test saying the change failed: its output is in the change's result.
CHECK_FAILED = "[NanoHermes: the check a PostToolUse hook ran after your change failed (its output is above)."
# The first read of an attached file's ask, then three more, as aider's --auto-test sends failing tests
# back three times; a 1.5B model needs 1–3 minutes for each. Failing the check after that, the run stops;
# so it does when, asked again sampled, the model wrote the same failing file (Qwen2.5-Coder-1.5B wrote
# the same failing file again in 8 of 15 held-out exercises, and none of them passed: the same file
# fails the same check again).
MAX_WHOLE_FILE_ASKS = 4
# The file asked for whole passes the user's check: the work is done, as aider's --auto-test ends on
# tests that pass, with no request more. Qwen2.5-Coder-1.5B given its tools back then wrote "The tests
# passed successfully." over the file that passed (1 of 15 held-out runs), or asked for it whole again
# (another); asked for a few lines, tools off, it spent a request (1,800–2,300 tokens sent) saying it.
WHOLE_PASSED = "{path}, written whole as asked, passes the check a PostToolUse hook runs."
# Going round after the user's check passed: the work is done, only the answer is missing.
CHECK_PASSED = (
    "[NanoHermes: the check a PostToolUse hook ran after your change passed, and you are going round in circles. "
    "No tool calls in this reply: give your answer.]"
)
MAKE_IT_NOW = f"{GOING_ROUND} Make the change now with edit_file or write_file; if it cannot be made, say why.]"
# Qwen2.5-Coder-1.5B, asked to make a module pass its tests, edited it and answered that they
# pass without running them (every Exercism run we read; aider runs them for it, --auto-test).
# Only for a request that names tests, once a turn, with run_command offered.
CHECK_THE_CHANGE = (
    "[You changed files but ran nothing since, and the user's request is about tests. Run the tests "
    "with run_command, fix what fails, then answer. If they cannot be run here, say so.]"
)
UNCHECKED_CHANGE_NOTICE = "the model answered without running the tests after its change; told it to run them"

CHANGE_VERBS = re.compile(
    r"\b(fix|change|edit|modify|implement|complete|update|rename|refactor|replace|add|remove|delete|correct)\b", re.I
)
QUESTION_START = re.compile(r"^\s*(how|what|why|which|where|when|who|is|are|does|do|did|should|explain)\b", re.I)
CODE_BLOCK = re.compile(r"^\s*```", re.M)
NAMES_TESTS = re.compile(r"\b(tests?|pytest|unittest|spec)\b|\w_tests?\.\w+|\btest_\w+", re.I)


@dataclass(frozen=True)
class Nudge:
    kind: str  # saved with the message (synthetic.py): which of the loop's notes this is
    text: str  # what the model is told
    notice: str  # what the user is told
    keeps_reply: bool = True  # False: the reply's tool calls are dropped (cut mid call), only its text kept
    tools_off: bool = False  # the next request offers no tool call (tool_choice "none")

    def kept_of(self, reply: AssistantTurn) -> dict:
        """What joins the history of the reply sent back."""
        return reply.as_message() if self.keeps_reply else {"role": "assistant", "content": reply.content}


def repaired(
    turn: Turn, reply: AssistantTurn, schemas: list[dict], workspace: Path, messages: list[dict] = ()
) -> tuple[AssistantTurn, str] | None:
    """A reply that is nothing but tool calls written as text (provider/textcalls.py), as the
    calls it means — unless it only echoes text the model was shown in `messages` (a tool result,
    a request's files: what a file said is never run as a call) — or one that holds the whole new
    file the request asked to change, as its write_file call (loop/wholefile.py): run and recorded
    as real calls, so the next request's history is valid. With what to tell the user."""
    asked = turn.whole_reply = turn.whole_asked
    turn.whole_asked = False
    if reply.tool_calls or reply.finish_reason == FINISH_REPEATED:
        return None
    if calls := tool_calls_from_text(reply.content, schemas):
        shown = (str(m.get("content") or "") for m in messages if m.get("role") in ("tool", "user"))
        if echoes(reply.content, shown):
            return None
        return replace(reply, content="", tool_calls=calls, finish_reason="tool_calls"), CALL_REPAIRED
    path = turn.target
    if path is None or "write_file" not in _names(schemas) or not asks_for_a_change(turn.request):
        return None
    write = wholefile.as_write(reply, path, workspace, asked)
    return (write, WHOLE_FILE_WRITTEN.format(path=path)) if write else None


def after_reply(turn: Turn, reply: AssistantTurn, schemas: list[dict]) -> Nudge | None:
    """A reply to send back rather than act on (counted on `turn`); StopTurn when replies keep
    being cut mid tool call. `schemas`: the tools offered."""
    if reply.finish_reason in CUT_ANSWER_NOTICES and reply.tool_calls:
        turn.cut_calls += 1
        if turn.cut_calls > MAX_LENGTH_RETRIES:
            raise StopTurn(StopCode.CUT_CALLS)
        if reply.finish_reason == FINISH_TOO_LONG:
            notice = f"reply passed {MAX_REPLY_CHARS // 2**20} MB mid tool call; asking the model to retry"
            return Nudge("cut_call", TOO_LONG_CALL_RETRY, notice, keeps_reply=False)
        notice = "reply cut by max_tokens mid tool call; asking the model to retry"
        return Nudge("cut_call", CUT_CALL_RETRY, notice, keeps_reply=False)
    _no_file_after_a_failed_check(turn, reply, _names(schemas))
    nudge = None if turn.runaways >= MAX_RUNAWAY_RETRIES else _runaway(turn, reply, _names(schemas))
    turn.runaways += nudge is not None
    return nudge or _stop_hook(turn, reply)


def _no_file_after_a_failed_check(turn: Turn, reply: AssistantTurn, offered: list[str]) -> None:
    """StopTurn when the file, asked for whole after the check failed, came back as a call written as
    text the loop could not repair, or cut once more after the last retry: no file came, and the change
    still fails (a held-out run ended so with exit 0, its tests failing). Such a call is not asked for
    again: Qwen2.5-Coder-1.5B, its file failing the tests, answered the ask so in 5 held-out runs, and
    the 9 asks again brought no file (such calls again, or empty replies), each a request of 4,000–5,400
    tokens sent."""
    if not (turn.whole_reply and turn.check_passed is False and (path := turn.target)) or reply.tool_calls:
        return
    as_text = reply.finish_reason not in WHOLE_CUT and tool_call_in_text(reply.content, offered)
    if as_text or (turn.runaways >= MAX_RUNAWAY_RETRIES and _whole_again(reply, path, offered)):
        raise StopTurn(StopCode.CHECK_FAILING, tries=turn.whole_asks)


def _stop_hook(turn: Turn, reply: AssistantTurn) -> Nudge | None:
    """The model answered: a Stop hook (exit 2, or decision "block") may send it back to work with
    its reason, MAX_STOP_BLOCKS times a turn (a hook that never lets go must not hold the run)."""
    if reply.tool_calls or turn.hooks is None or turn.stop_blocks >= MAX_STOP_BLOCKS:
        return None
    reason = turn.hooks.at_stop(reply.content, active=turn.stop_blocks > 0)
    if reason is None:
        return None
    turn.stop_blocks += 1
    return Nudge("hook_stop", reason, "a Stop hook sent the model back to work")


def _runaway(turn: Turn, reply: AssistantTurn, offered: list[str]) -> Nudge | None:
    if turn.whole_reply and (path := turn.target) and (again := _whole_again(reply, path, offered)):
        turn.whole_asked = turn.resample = True  # at temperature 0 the same request brings the same reply
        return again
    if reply.finish_reason == FINISH_REPEATED:
        turn.resample = True  # at temperature 0 the same request loops the same way
        return Nudge("repeating", REPEATED_RETRY, "the reply kept repeating itself; it was cut and the model told so")
    if reply.tool_calls:
        return None
    if nudge := _unmade_change(turn, reply.content, offered, answer=True) or _unchecked_change(turn, offered):
        return nudge  # before a call as text: the fix is the point
    if name := tool_call_in_text(reply.content, offered):
        notice = f"the model wrote a {name} call as text; told it to make a real call"
        return Nudge("call_as_text", CALL_AS_TEXT_RETRY.format(name=name), notice)
    return None


def _whole_again(reply: AssistantTurn, path: str, offered: list[str]) -> Nudge | None:
    """The file asked for whole again: the reply to that ask was cut, or it wrote a call as text."""
    if reply.finish_reason in WHOLE_CUT:
        notice = f"the reply with {path} whole was cut ({reply.finish_reason}); asked again"
        return Nudge("repeating", asked_for_again(path, reply.finish_reason or ""), notice, tools_off=True)
    if reply.tool_calls or not (name := tool_call_in_text(reply.content, offered)):
        return None
    notice = f"asked for {path} whole, the model wrote a {name} call as text; asked again"
    return Nudge("call_as_text", wholefile.asked_for(path, WHOLE_AS_CALL.format(name=name)), notice, tools_off=True)


def unmade_change(turn: Turn, reply_text: str, schemas: list[dict]) -> Nudge | None:
    """Once a turn: the reply shows code for a change the user asked for, and no file changed."""
    return _unmade_change(turn, reply_text, _names(schemas))


def _unmade_change(turn: Turn, reply_text: str, offered: list[str], answer: bool = False) -> Nudge | None:
    """`answer`: the reply ends the turn (no calls beside it)."""
    if turn.nudged or turn.write_refused or "edit_file" not in offered:
        return None  # the user, a rule or a hook refused the write: not pressed for again
    if answer and not turn.changed and (whole := _whole_file(turn, offered, NOTHING_CHANGED_YET)):
        nudge = whole
    elif shows_an_unmade_change(turn.request, reply_text, turn.changed):
        nudge = Nudge("make_the_change", MAKE_THE_CHANGE, UNMADE_CHANGE_NOTICE)
    elif answer and turn.attached and not turn.changed and asks_for_a_change(turn.request):
        nudge = Nudge("make_the_change", NOTHING_CHANGED, UNMADE_CHANGE_NOTICE)  # the request named files
    else:
        return None
    turn.nudged = True
    if turn.answer_now is AnswerNow.DUE:  # the change needs the tools: don't ask for an answer without them
        turn.answer_now = AnswerNow.WAIVED
    return nudge


def _unchecked_change(turn: Turn, offered: list[str]) -> Nudge | None:
    """Once a turn: the model answers after changing files for a request about tests, and no
    command ran since the change. Not after it was asked for its answer (it went round)."""
    if turn.check_asked or not turn.changed or turn.checked or turn.answer_now is AnswerNow.ASKED:
        return None
    if "run_command" not in offered or not NAMES_TESTS.search(turn.request):
        return None
    turn.check_asked = True
    return Nudge("check_the_change", CHECK_THE_CHANGE, UNCHECKED_CHANGE_NOTICE)


def shows_an_unmade_change(user_text: str, reply: str, changed: bool) -> bool:
    """The reply ends the turn with code for a change the user asked for, and nothing changed."""
    return not changed and bool(CODE_BLOCK.search(reply)) and asks_for_a_change(user_text)


def asks_for_a_change(user_text: str) -> bool:
    """A request to change the code ("fix it", "add a flag"), not a question about how to."""
    return bool(CHANGE_VERBS.search(user_text)) and not QUESTION_START.match(user_text)


def answer_now(turn: Turn, schemas: list[dict]) -> Nudge | None:
    """After the first time a turn went round in circles: ask for the answer, tool calls off, or,
    for a change asked for and not made yet, for the change (tools on: it needs them). A change to
    the one code file the request named: that file whole, tools off, made or not (going round after
    a write, the model is stuck on a file the tests refuse), MAX_WHOLE_FILE_ASKS times a turn; that
    file whole also after the model read a file attached to the request (it has them all), and after
    a PostToolUse hook blocked a change (the user's auto-test failed); blocked after the last ask,
    StopTurn. That file written whole as asked and passing the check: Answered, in the loop's words.
    After the check passed, going round asks for the answer only."""
    offered = _names(schemas)
    read_again, failed = turn.read_again, turn.check_failed
    turn.read_again = turn.check_failed = False  # each is answered once
    if turn.whole_passed:
        raise Answered(WHOLE_PASSED.format(path=turn.target), written=True)
    if failed and (turn.whole_asks >= MAX_WHOLE_FILE_ASKS or (turn.same_failed and turn.whole_asks > 1)):
        raise StopTurn(StopCode.CHECK_FAILING, tries=turn.whole_asks)  # spent, or the same file after a sampled ask
    if failed and "edit_file" in offered and (whole := _whole_file(turn, offered, CHECK_FAILED)):
        return whole  # as aider's --auto-test sends a failing test run back
    if read_again and turn.answer_now is AnswerNow.NOT_NEEDED and "edit_file" in offered:
        return _whole_file(turn, offered, READ_AGAIN)  # the file whole at the first read of an attached one
    if turn.answer_now is not AnswerNow.DUE:
        return None
    why = GOING_ROUND_AFTER_CHANGE if turn.changed else GOING_ROUND
    if not turn.check_passed and "edit_file" in offered and (whole := _whole_file(turn, offered, why)):
        turn.answer_now = AnswerNow.NOT_NEEDED  # going round again asks again, or for the answer at last
        return whole
    turn.answer_now = AnswerNow.ASKED
    if turn.check_passed:
        return Nudge(
            "answer_now",
            CHECK_PASSED,
            "the check passed and the model went round; asked for its answer",
            tools_off=True,
        )
    if not turn.changed and asks_for_a_change(turn.request) and "edit_file" in offered:
        return Nudge("make_it_now", MAKE_IT_NOW, "the model was going round in circles; asked it to make the change")
    notice = "the model was going round in circles; asked it for its answer, tool calls off"
    return Nudge("answer_now", ANSWER_NOW, notice, tools_off=True)


def _whole_file(turn: Turn, offered: list[str], why: str) -> Nudge | None:
    """A change to the one code file the request named: asked for whole, tools off."""
    path = turn.target
    if path is None or turn.whole_asks >= MAX_WHOLE_FILE_ASKS or "write_file" not in offered:
        return None
    if not asks_for_a_change(turn.request) or turn.write_refused:
        return None
    turn.whole_asked, turn.whole_asks = True, turn.whole_asks + 1
    # The first time greedily (code is best written so); asked again, the same model at temperature 0
    # wrote the same file again (dev set): sampled. A reply that loops is sampled again too (_runaway).
    turn.resample = turn.whole_asks > 1
    return Nudge("write_it_whole", wholefile.asked_for(path, why), WHOLE_FILE_NOTICE.format(path=path), tools_off=True)


def whole_at_once(turn: Turn, attached: dict[str, str], lean: bool, schemas: list[dict]) -> str:
    """The note that asks, with the request, for the one code file it names whole (tools off), when the
    window is small (`lean`: the lean tool set is offered); "" otherwise. `attached`: the request's files."""
    turn.attached = attached
    nudge = _whole_file(turn, _names(schemas), WHOLE_AT_ONCE) if lean else None
    return nudge.text if nudge else ""


def request_options(turn: Turn, nudge: Nudge | None, temperature: float | None) -> dict:
    """The next request's options: tool calls off for an answer (or a file whole) asked for so; sampled at
    RESAMPLE_TEMPERATURE (when the configured temperature is lower) once after the model went
    round in circles or a reply looped — at temperature 0 the same conversation brings the same call
    again (a file asked for whole: from the second time, _whole_file)."""
    options: dict = {"tool_choice": "none"} if (nudge and nudge.tools_off) or turn.whole_asked else {}
    if turn.resample and (temperature is None or temperature < RESAMPLE_TEMPERATURE):
        options["temperature"] = RESAMPLE_TEMPERATURE
    turn.resample = False
    return options


def final_answer(stop: StopTurn) -> Nudge:
    return Nudge("final_answer", FINAL_ANSWER_REQUEST.format(why=TO_MODEL[stop.code]), "")


def final_text(reply: AssistantTurn, schemas: list[dict]) -> str:
    """The stopped run's last reply as its answer. One that is nothing but calls written as text
    (a small model asked for its answer with tools off often writes one more ```json call) is
    said in words: the user would otherwise read a call that never ran as the answer."""
    content = strip_thinking(reply.content).strip()
    calls = tool_calls_from_text(content, schemas)
    if not calls:
        return content
    names = ", ".join(dict.fromkeys(c["function"]["name"] for c in calls))
    return NO_ANSWER_BUT_CALLS.format(names=names)


REWOUND = "rewound"  # the kind of the note /rewind leaves (loop/rewind.py)
REWOUND_NOTE = "[NanoHermes: {what}.]"
REWOUND_ACK = "Understood."  # the note's answer: strict chat templates need the roles to alternate


def rewound(what: str) -> str:
    """The note that tells the model what /rewind took back."""
    return REWOUND_NOTE.format(what=what)


def _names(schemas: list[dict]) -> list[str]:
    return [s["function"]["name"] for s in schemas]
