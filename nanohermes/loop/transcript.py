"""The conversation as the model is sent it and as the session keeps it, in step: every message
is taken through the redactor once (a secret is neither stored nor sent), then joins both. The
Agent owns one, and nothing assigns its messages but its own methods (a compaction's working set,
a rewind's, a new system message).
"""

from __future__ import annotations

from nanohermes.context.images import IMAGES, images_of
from nanohermes.errors import ToolInterrupted
from nanohermes.loop import history
from nanohermes.memory.block import attach_block
from nanohermes.redact import Redactor
from nanohermes.storage.session import Session
from nanohermes.synthetic import synthetic_message
from nanohermes.text import valid_unicode, with_attachment


class Transcript:
    def __init__(self, session: Session, redactor: Redactor, system: str):
        self.session, self.redactor = session, redactor
        self.messages: list[dict] = [{"role": "system", "content": system}, *session.state.messages]

    def add(self, *messages: dict | None) -> None:
        """Append each message (None: nothing to add)."""
        for message in filter(None, messages):
            self.add_result(message, None)

    def add_result(self, message: dict, facts: dict | None) -> None:
        """Append one message; `facts` (a tool result's exit code, path, …) are kept beside it."""
        message = self.redactor.message(message)
        self.messages.append(message)
        self.session.record_message(message, facts)

    def clean(self, text: str) -> str:
        """The user's words as they may be kept and sent: valid Unicode (argv and stdin carry any
        bytes), no secrets."""
        return self.redactor.text(valid_unicode(text))

    def add_request(self, text: str, files: str, block: str, images: list[dict] = ()) -> None:
        """The user's request (`text`, as clean() gives it), with what goes with it (`files`: the
        user's context, the files the words name, the coach's note), the memory `block` and the
        `images` its words name (context/images.py's entries); the session keeps them beside the
        user's words. Values, worked out by the Agent."""
        if self.messages[-1]["role"] == "user":  # the last turn failed before any answer:
            self.add({"role": "assistant", "content": history.NO_ANSWER})  # strict templates need alternation
        files = self.redactor.text(valid_unicode(files))
        block = self.redactor.text(block)  # memory.json may predate a secret's redaction
        carried = {IMAGES: list(images)} if images else {}
        self.messages.append({"role": "user", "content": attach_block(with_attachment(text, files), block), **carried})
        self.session.record_message({"role": "user", "content": text, **carried}, memory=block, files=files)

    def still_attached(self, text: str, images: tuple[dict, ...] = ()) -> bool:
        """A user message still holds `text` as it was attached, and `images` (a compaction clears the
        files and images attached to a request once the model has acted on them)."""
        refs = {entry.get("ref") for entry in images}
        return any(
            m.get("role") == "user"
            and text in str(m.get("content") or "")
            and refs <= {entry.get("ref") for entry in images_of(m)}
            for m in self.messages
        )

    def add_note(self, kind: str, text: str, alternate: bool = False) -> None:
        """A message the loop writes for the model (a Nudge: loop/nudges.py), tagged as such; `alternate`:
        after an empty assistant message if it would follow a user message (strict templates)."""
        if alternate and self.messages[-1]["role"] == "user":
            self.add({"role": "assistant", "content": ""})
        self.add(synthetic_message(kind, text))

    def answer_open_calls(self, text: str, first: str | None = None) -> None:
        self.add(*history.answers_for_open_calls(self.messages, text, first))

    def keep_interrupted(self, streamed: str) -> None:
        """A reply stopped while it streamed: its text kept, marked interrupted."""
        self.add(history.interrupted_reply(self.messages, streamed))

    def interrupted(self, stop: BaseException, streamed: str) -> None:
        """Ctrl-C, SIGTERM or a stopped helper: every open call answered (a stopped helper's call
        with its own answer), and what streamed of a reply kept."""
        if isinstance(stop, ToolInterrupted):
            self.answer_open_calls(history.INTERRUPTED, first=stop.answer)
            return
        self.answer_open_calls(
            history.INTERRUPTED if isinstance(stop, KeyboardInterrupt) else history.STOPPED.format(stop)
        )
        self.keep_interrupted(streamed)

    def set_system(self, system: str) -> None:
        """The system message as it stands now (a mode switch, new MCP tools, the window learned)."""
        self.messages[0] = {"role": "system", "content": system}

    def compacted(self, messages: list[dict]) -> None:
        """The working set a compaction left (the keeper recorded it in the session)."""
        self.messages = messages

    def rewound(self, messages: list[dict]) -> None:
        """The working set of an earlier request, after the system message (/rewind recorded it)."""
        self.messages = [self.messages[0], *messages]

    def restart(self, system: str) -> None:
        """/reset: the conversation starts over (the session says so)."""
        self.session.record_reset()
        self.messages = [{"role": "system", "content": system}]
