"""What the small strategy (small.py) tells the model and the user, each text with the evidence for it.
Measured with Qwen2.5-Coder-1.5B on llama.cpp (CPU, an 8K window) on the Exercism dev set and the
project's e2e tasks; the held-out figures are in docs/small-models.md."""

from __future__ import annotations

from nanohermes.loop.coach import wholefile
from nanohermes.provider.stream import FINISH_REPEATED

# A model that repeated a call at temperature 0 repeats it again: the request after it is sampled.
# Qwen2.5-Coder's own recommended temperature; a configured temperature above it is kept.
RESAMPLE_TEMPERATURE = 0.7
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
# block run as a write_file call (wholefile.py).
WHOLE_FILE_NOTICE = "asked the model for {path} whole in a code block, tool calls off"
WHOLE_FILE_WRITTEN = "the model wrote {path} whole in a code block; it is run as a write_file call"
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
# Written whole where nothing can check it (no test in the workspace, no check hook) — the file asked for whole,
# or by write_file the one file the request named: the turn ends there, as aider's does after its edit; a
# request more brought the 1.5B model's "Done.", a worse rewrite, or the same file again.
WHOLE_UNCHECKED = "{path} is written whole. Nothing here checks it: no test in the workspace, no check hook."
# Written again as it was (aider's second try, the test output in view: 26 of the 1.5B model's 31 failures of
# the fixed 40), the turn ends too. Asked for the file whole once more, sampled at RESAMPLE_TEMPERATURE, the
# same model wrote the same file in 6 of 7 such exercises and solved none: 47 % more tokens sent for nothing.
WHOLE_UNCHANGED = (
    "{path}, written whole again, is as it was. Nothing here checks it: no test in the workspace, no check hook."
)
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
# Stopped on a failing check, the run's answer is what the check said: asked for its answer then, tools
# off, the same model spent a request (2,600–5,400 tokens sent; 30 % of all sent on the held-out set) on
# a guess at the cause, as a rule one the check's output already showed; aider's --auto-test ends so too.
CHECK_STILL_FAILS = "{path} as last written still fails the check a PostToolUse hook runs."
CHECK_LAST_LINES = " The check's last lines:\n\n"
CHECK_TAIL_LINES = 8
