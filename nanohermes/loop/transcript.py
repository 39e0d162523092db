"""The conversation as the model is sent it and as the session keeps it, in step: every message
is taken through the redactor once (a secret is neither stored nor sent), then joins both. A tool
call's result is recorded here once, its text, full output and facts redacted together: the
message, the facts beside it in the session, and the full output in the store `recall`, /show and
compaction's placeholders read (`outputs`; in the session too when the model saw less). The Agent
owns one, and nothing assigns its messages or adds to its outputs but its own methods (a
compaction's working set, a rewind's, a new system message).
"""

from __future__ import annotations

from dataclasses import replace

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolInterrupted
from nanohermes.loop import history
from nanohermes.memory.block import attach_block
from nanohermes.redact import Redactor
from nanohermes.storage.session import Session
from nanohermes.synthetic import synthetic_message
from nanohermes.text import valid_unicode, with_attachment
from nanohermes.tools import ToolResult
from nanohermes.tools.outputs import OutputStore


class Transcript:
    def __init__(self, session: Session, redactor: Redactor, system: str):
        self.session, self.redactor = session, redactor
        self.messages: list[dict] = [{"role": "system", "content": system}, *session.state.messages]
        self.outputs = OutputStore(session.state.outputs, session.state.facts)  # a resumed session's: in its file

    def add(self, *messages: dict | None) -> None:
        """Append each message (None: nothing to add); a tool result is add_result's."""
        for message in filter(None, messages):
            if message.get("role") == "tool":  # recorded once, with its full output and facts
                raise TypeError("a tool result is recorded by Transcript.add_result")
            message = self.redactor.message(message)
            self.messages.append(message)
            self.session.record_message(message)

    def add_result(self, call_id: str, result: ToolResult) -> ToolResult:
        """A tool call's result, recorded once: its text, its full output and its facts made valid
        Unicode and redacted together; the message joins the history and the session (its facts
        beside it), the full output the store (and the session, when the model saw less). Returns
        the result as recorded, which is what the front ends may be shown."""
        result = self._cleaned(result)
        message = {"role": "tool", "tool_call_id": call_id, "content": result.content}
        self.messages.append(message)
        self.session.record_message(message, result.facts.to_dict())
        self.outputs.add(call_id, result.full, result.facts)
        if result.full != result.content:
            self.session.record_tool_output(call_id, result.full)
        return result

    def _cleaned(self, result: ToolResult) -> ToolResult:
        """The result as it may be kept and sent: no secret in its text, full output or facts (which
        quote the output: a command's last lines, what a call found, a path). Its streams are
        a hook's only: never kept."""
        content = self.clean(result.content)
        full = content if result.full == result.content else self.clean(result.full)
        return ToolResult(content, full, result.ok, self._cleaned_facts(result.facts))

    def _cleaned_facts(self, facts: ResultFacts) -> ResultFacts:
        if not (facts.path or facts.found or facts.tail or facts.blocked):
            return facts
        path = self.clean(facts.path) if facts.path else facts.path
        return replace(
            facts,
            path=path,
            found=self.clean(facts.found),
            tail=self.clean(facts.tail),
            blocked=self.clean(facts.blocked),
        )

    def clean(self, text: str) -> str:
        """Text as it may be kept and sent (the user's words, a tool's output): valid Unicode (argv,
        stdin and file names carry any bytes), no secrets."""
        return self.redactor.text(valid_unicode(text))

    def add_request(self, text: str, files: str, block: str) -> None:
        """The user's request (`text`, as clean() gives it), with what goes with it (`files`: the
        user's context, the files the words name, the coach's note) and the memory `block`; the
        session keeps them beside the user's words. Values, worked out by the Agent."""
        if self.messages[-1]["role"] == "user":  # the last turn failed before any answer:
            self.add({"role": "assistant", "content": history.NO_ANSWER})  # strict templates need alternation
        files = self.redactor.text(valid_unicode(files))
        block = self.redactor.text(block)  # memory.json may predate a secret's redaction
        self.messages.append({"role": "user", "content": attach_block(with_attachment(text, files), block)})
        self.session.record_message({"role": "user", "content": text}, memory=block, files=files)

    def still_attached(self, text: str) -> bool:
        """A user message still holds `text` as it was attached (a compaction clears the files
        attached to a request once the model has acted on them)."""
        return any(m.get("role") == "user" and text in str(m.get("content") or "") for m in self.messages)

    def add_note(self, kind: str, text: str, alternate: bool = False) -> None:
        """A message the loop writes for the model (a Nudge: loop/nudges.py), tagged as such; `alternate`:
        after an empty assistant message if it would follow a user message (strict templates)."""
        if alternate and self.messages[-1]["role"] == "user":
            self.add({"role": "assistant", "content": ""})
        self.add(synthetic_message(kind, text))

    def answer_open_calls(self, text: str) -> None:
        """A result for every call of the last assistant message that has none: `text` (it did not run)."""
        for call_id in history.unanswered_calls(self.messages):
            self.add_result(call_id, ToolResult(text, text, ok=False))

    def keep_interrupted(self, streamed: str) -> None:
        """A reply stopped while it streamed: its text kept, marked interrupted."""
        self.add(history.interrupted_reply(self.messages, streamed))

    def interrupted(self, stop: BaseException, streamed: str) -> None:
        """Ctrl-C, SIGTERM or a stopped tool: every open call answered, and what streamed of a reply
        kept (the call a ToolInterrupted stopped has its answer already: loop/execute.py recorded it)."""
        if isinstance(stop, ToolInterrupted):
            self.answer_open_calls(history.INTERRUPTED)
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
