"""A reply that shows a fix instead of making it.

Asked "the test fails: run it, find the cause and fix it", Qwen2.5-Coder-1.5B ran the test,
explained the KeyError correctly and ended its turn with the fix in a code block; no file was
changed. Told once that it had changed nothing and that the user asked for the change itself,
the same model made the edit (4 of 4 tries). A standing prompt rule had the opposite effect:
it made the model rewrite files while answering a plain question. So the nudge comes after the
fact, and only when all of these hold: the user asked for a change (a request, not a question
like "how do I fix …?"), the reply carries a code block, and no file changed this turn. Pure.
"""

from __future__ import annotations

import re

CHANGE_VERBS = re.compile(
    r"\b(fix|change|edit|implement|update|rename|refactor|replace|add|remove|delete|correct)\b", re.I
)
QUESTION_START = re.compile(r"^\s*(how|what|why|which|where|when|who|is|are|does|do|did|should|explain)\b", re.I)
CODE_BLOCK = re.compile(r"^\s*```", re.M)
MAKE_THE_CHANGE = (
    "[You described a change but no file was changed, and the user asked for the change itself. "
    "Make it with edit_file, then check it. If you made it another way, or it can't be done, say so.]"
)


def asks_for_a_change(user_text: str) -> bool:
    """A request to change the code ("fix it", "add a flag"), not a question about how to."""
    return bool(CHANGE_VERBS.search(user_text)) and not QUESTION_START.match(user_text)


def shows_an_unmade_change(user_text: str, reply: str, changed: bool) -> bool:
    """The reply ends the turn with code for a change the user asked for, and nothing changed."""
    return not changed and bool(CODE_BLOCK.search(reply)) and asks_for_a_change(user_text)
