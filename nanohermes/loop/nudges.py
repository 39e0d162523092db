"""A note the loop writes for the model in the user role (a Nudge), and the loop's own notes.

Every such message is saved tagged with its kind (synthetic.py), so nothing reads it as the user's
words. Which notes a turn sends, and when, is its coaching strategy's (loop/coach/: plain.py, small.py);
the loop sends them (Agent._nudge, ending.py). Here: the Nudge, the words for an answer cut short,
and /rewind's note (loop/rewind.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from nanohermes.provider import AssistantTurn
from nanohermes.provider.stream import FINISH_TOO_LONG, MAX_REPLY_CHARS

# What the user is told of a reply that was cut and kept as the answer, by why it was cut.
CUT_ANSWER_NOTICES = {
    "length": "the answer was cut at max_tokens; ask to continue",
    FINISH_TOO_LONG: f"the answer passed {MAX_REPLY_CHARS // 2**20} MB and was cut there; the rest was not read",
}


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


REWOUND = "rewound"  # the kind of the note /rewind leaves (loop/rewind.py)
REWOUND_NOTE = "[NanoHermes: {what}.]"
REWOUND_ACK = "Understood."  # the note's answer: strict chat templates need the roles to alternate
UNDONE = "undone"  # the kind of the note /undo leaves: what it took back (Agent.tell)
HELPER_CHANGES = "helper_changes"  # the note /tasks apply|drop leaves: a helper's held changes brought in or not


def rewound(what: str) -> str:
    """The note that tells the model what /rewind took back."""
    return REWOUND_NOTE.format(what=what)
