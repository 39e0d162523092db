"""Folding a chat.completion.chunk stream into one assistant turn (text, tool calls, usage)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from nanohermes.bounded import TOO_DEEP, parse_json
from nanohermes.provider.runaway import CHECK_EVERY_CHARS, MIN_BLOCK_CHARS, REPEATS, Repetition, find_repetition
from nanohermes.provider.sse import reject_non_stream
from nanohermes.provider.usage_readers import normalise_usage
from nanohermes.text import strip_thinking, valid_unicode

# The finish_reason of a reply stopped here because it kept repeating one passage: the stream
# was closed (a server stops generating when its client goes) and one copy was kept.
FINISH_REPEATED = "repeated"
# The finish_reason of a reply stopped at MAX_REPLY_CHARS: the stream was closed (the server stops
# generating), the text up to the cap kept with TOO_LONG_NOTE after it; a tool call being written
# is kept cut, for the loop to refuse as it refuses one cut by max_tokens (loop/coach/plain.py).
FINISH_TOO_LONG = "too_long"
DEEP_ARGUMENTS = 500  # brackets in a call's arguments past which they are checked for nesting a parser cannot read
DEEP_HEAD_CHARS = 200  # kept of such arguments: what the model sent, in its words
MAX_REPLY_CHARS = 8 * 2**20  # text and call arguments: a max_tokens of 1M tokens is ~4 MB; twice that is a flood
TOO_LONG_NOTE = f"\n\n[NanoHermes cut this reply at {MAX_REPLY_CHARS // 2**20} MB: the rest was not read.]"
# A reply is looked at for a loop again once it grew by this fraction of its length (at least
# CHECK_EVERY_CHARS): each look reads the whole text, so a fixed step would be quadratic.
LOOP_CHECK_GROWTH = 32


@dataclass
class AssistantTurn:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None

    def as_message(self) -> dict:
        """The turn as it joins the history: without the model's <think> reasoning, which the
        next steps (and a summariser) do not need and which would be paid on every request."""
        message: dict = {"role": "assistant", "content": strip_thinking(self.content)}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class StreamCut(Exception):
    """The connection closed before a finish_reason arrived: the reply is incomplete."""


def text_of(content) -> str:
    """Message content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text"
        )
    return ""


class StreamDropped(Exception):
    """The connection broke after the reply had started (the server crashed or restarted, a
    proxy cut it): not the same as a server that cannot be reached. The message is the cause."""


class ReplyTimeout(Exception):
    """No byte of the reply for request_timeout seconds (keep-alive comments do not count)."""


class _NoWatch:
    """assemble_stream without a ReplyWatch (recorded chunk lists, tests of the folding)."""

    timed_out = False
    timeout = 0.0

    def attach(self, response) -> None: ...

    def progress(self) -> None: ...

    def finished(self) -> None: ...


def _field(obj, name: str):
    """A field of an SDK model or a plain dict. Servers send any shape; the SDK builds its models
    without checking types, so a field of the wrong shape (`choices: null`, `delta: "x"`) reads
    as absent here instead of raising later."""
    if isinstance(obj, dict):
        return obj.get(name)
    if obj is None or isinstance(obj, (str, bytes, int, float, list, tuple)):
        return None
    return getattr(obj, name, None)


def _piece(value) -> str:
    """A piece of tool-call arguments: text as sent, a JSON value (some servers send the
    arguments as an object) as its JSON text."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _choice_index(choice, position: int) -> int:
    """A choice's `index`, or its place in the list when a server leaves the index out."""
    index = _field(choice, "index")
    return index if isinstance(index, int) and not isinstance(index, bool) else position


def _plain_text(chunk) -> str | None:
    """The text of a chunk that carries only text, as nearly every chunk of a reply does; None
    for any other (read field by field). A reply can come in hundreds of thousands of chunks."""
    if type(chunk) is not dict or chunk.get("usage") is not None or chunk.get("timings") is not None:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or type(choice := choices[0]) is not dict:
        return None
    delta = choice.get("delta")
    if choice.get("finish_reason") or choice.get("index", 0) != 0 or type(delta) is not dict:
        return None
    content = delta.get("content")
    if type(content) is not str or any(key not in _TEXT_DELTA_KEYS for key in delta):
        return None
    return content


_TEXT_DELTA_KEYS = ("content", "role")

# Delta fields that carry a reasoning model's thinking: not kept, but they are the reply moving.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


class _Assembly:
    """The turn being folded together from chunks; tool calls keyed by index."""

    def __init__(self, on_text: Callable[[str], None]):
        self.on_text = on_text
        self.turn = AssistantTurn()
        self.text: list[str] = []
        self._unshown: list[str] = []  # text not given to on_text yet: a network read's text goes at once
        self.calls: dict[int, dict] = {}
        self.chunks = 0
        self.usage_seen = False  # a usage field came (not only llama.cpp's timings): it is the last chunk
        self.repetition: Repetition | None = None  # the text ran into a loop: stop reading
        self.too_long = False  # the reply passed MAX_REPLY_CHARS: stop reading
        self._unchecked = 0  # chars of text since the last look for a loop
        self._length = 0
        self._size = 0  # chars of text and call arguments so far

    def add(self, chunk) -> bool:
        """Fold one chunk in; True when it carried any of the reply (text, a call, thinking, a
        finish_reason or usage), as opposed to an empty or malformed one."""
        self.chunks += 1
        if (text := _plain_text(chunk)) is not None:
            return self._text(text)
        carried = self._usage(chunk)
        choices = _field(chunk, "choices")
        for position, choice in enumerate(choices if isinstance(choices, list) else ()):
            if _choice_index(choice, position) == 0:  # one reply was asked for: other choices are no part of it
                carried |= self._choice(choice)
        return carried

    def _usage(self, chunk) -> bool:
        usage, timings = _field(chunk, "usage"), _field(chunk, "timings")
        if usage is not None and not isinstance(usage, dict):
            usage = usage.model_dump(warnings=False) if hasattr(usage, "model_dump") else None  # odd types: no warning
        if isinstance(usage, dict) and usage:
            self.turn.usage = normalise_usage(usage, None)
            self.usage_seen = True
        if isinstance(timings, dict):  # llama.cpp: in the final chunk, beside or before usage
            self.turn.usage = normalise_usage(self.turn.usage or {}, timings)
        return bool(usage) or isinstance(timings, dict)

    def _choice(self, choice) -> bool:
        delta = _field(choice, "delta")
        carried = self._text(text_of(_field(delta, "content")))
        calls = _field(delta, "tool_calls")
        carried |= any(_field(delta, name) for name in _REASONING_FIELDS)
        for tc in calls if isinstance(calls, list) else ():
            carried |= self._call_delta(tc)
        finish = _field(choice, "finish_reason")
        if isinstance(finish, str) and finish:
            self.turn.finish_reason = finish
            carried = True
        return carried

    def _text(self, text: str) -> bool:
        text = valid_unicode(text)
        text = text[: self._room(len(text))]
        if text:
            self.text.append(text)
            self._unshown.append(text)
            self._watch_for_loops(len(text))
        return bool(text)

    def show(self) -> None:
        """Give on_text what came since it was last called, in one piece."""
        if self._unshown:
            text, self._unshown = "".join(self._unshown), []
            self.on_text(text)

    def _room(self, wanted: int) -> int:
        """How many of `wanted` more chars fit under MAX_REPLY_CHARS; at the cap the reply is over."""
        room = max(0, MAX_REPLY_CHARS - self._size)
        self._size += min(wanted, room)
        if wanted > room:
            self.too_long, self.turn.finish_reason = True, FINISH_TOO_LONG
        return min(wanted, room)

    def _watch_for_loops(self, added: int) -> None:
        self._unchecked += added
        self._length += added
        every = max(CHECK_EVERY_CHARS, self._length // LOOP_CHECK_GROWTH)
        if self._unchecked < every or self._length < MIN_BLOCK_CHARS * REPEATS:
            return
        self._unchecked = 0
        self.repetition = find_repetition("".join(self.text))
        if self.repetition is not None:
            self.turn.finish_reason = FINISH_REPEATED
            self.calls.clear()  # a call begun inside a loop is no call

    def _call_delta(self, tc) -> bool:
        if tc is None or isinstance(tc, (str, int, float, list)):
            return False
        if self.too_long:
            return True
        slot = self.calls.setdefault(self._index(tc), {"id": "", "name": "", "arguments": []})
        call_id, function = _field(tc, "id"), _field(tc, "function")
        if isinstance(call_id, str) and call_id:
            slot["id"] = call_id
        name = _field(function, "name")
        if isinstance(name, str) and name != slot["name"]:  # some servers repeat the name in every chunk
            slot["name"] += name
        piece = _piece(_field(function, "arguments"))
        slot["arguments"].append(piece[: self._room(len(piece))])  # joined once at the end: `+=` is quadratic
        return True

    def _index(self, tc) -> int:
        """Servers that omit `index`: a delta with a new id starts a call, others continue the last."""
        index, call_id = _field(tc, "index"), _field(tc, "id")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        if self.calls and (not call_id or call_id == self.calls[max(self.calls)]["id"]):
            return max(self.calls)
        return max(self.calls, default=-1) + 1

    def result(self) -> AssistantTurn:
        """The whole turn. Every call gets an id of its own: two calls a server gave one id
        would both run, but a tool result can answer only one of them."""
        turn, seen = self.turn, set()
        text = "".join(self.text)
        if self.repetition is not None:
            text = text[: self.repetition.keep]
        turn.content = valid_unicode(text)  # a surrogate pair split over two chunks joins here
        if self.too_long and not self.calls:
            turn.content += TOO_LONG_NOTE  # the answer as kept: the model and the user read where it ends
        for n, (_, slot) in enumerate(sorted(self.calls.items())):
            call_id = slot["id"] or f"call_{n}_{random.randrange(16**8):08x}"  # some servers omit ids
            while call_id in seen:
                call_id = f"{slot['id'] or 'call'}_{n}_{random.randrange(16**4):04x}"
            seen.add(call_id)
            arguments = _readable(valid_unicode("".join(slot["arguments"])))
            function = {"name": valid_unicode(slot["name"]), "arguments": arguments}
            turn.tool_calls.append({"id": call_id, "type": "function", "function": function})
        return turn


def _readable(arguments: str) -> str:
    """A call's arguments as sent, unless they nest past what a JSON parser can read (`[[[[…`
    100,000 deep made every reader of the call fail with a RecursionError): then their head and a
    mark, which no reader takes for JSON, so the call is answered as one with bad arguments."""
    if arguments.count("[") + arguments.count("{") < DEEP_ARGUMENTS:  # cheap: only many brackets can nest so
        return arguments
    try:
        parse_json(arguments)
    except ValueError as exc:
        if str(exc).startswith(TOO_DEEP):
            return arguments[:DEEP_HEAD_CHARS] + f"… [arguments {TOO_DEEP}: cut]"
    return arguments


def _raise_if_dropped(exc: Exception) -> None:
    """StreamDropped when a read failed because the connection broke (a connection error, not
    a timeout), with the innermost cause's words."""
    from nanohermes.provider.client import APIConnectionError, APITimeoutError

    if not isinstance(exc, APIConnectionError) or isinstance(exc, APITimeoutError):
        return
    raise StreamDropped(root_cause(exc)) from exc


def root_cause(exc: BaseException) -> str:
    """The innermost error's words ("peer closed connection …"), not "Connection error."."""
    seen = set()
    while (exc.__cause__ or exc.__context__) is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return str(exc) or type(exc).__name__


def assemble_stream(stream, on_text: Callable[[str], None], watch=None) -> AssistantTurn:
    """Fold chat.completion.chunk deltas into one AssistantTurn. With a ReplyWatch, report the
    reply's progress to it; a reply complete up to its finish_reason is kept whatever happens
    to the connection after it (no [DONE], a timeout, a reset)."""
    watch = watch or _NoWatch()
    reject_non_stream(stream)
    watch.attach(getattr(stream, "response", None))
    assembly = _Assembly(on_text)
    chunks, moved = iter(stream), False
    try:
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except Exception as exc:
                if assembly.turn.finish_reason is not None:
                    break  # the reply was complete: what failed after it changes nothing
                if watch.timed_out:
                    raise ReplyTimeout(f"no reply for {watch.timeout:g} s") from None
                _raise_if_dropped(exc)
                raise
            finished_before = assembly.turn.finish_reason is not None
            moved |= assembly.add(chunk)
            if not getattr(stream, "ready", 0):  # the chunks of one network read are shown as one (sse.py)
                assembly.show()
                if moved:
                    watch.progress()
                moved = False
            if assembly.turn.finish_reason is not None and not finished_before:
                watch.finished()  # usage and [DONE] follow at once, or never
            if assembly.turn.finish_reason is not None and assembly.usage_seen:
                break  # the finish_reason and the usage: nothing that matters comes after them
            if assembly.repetition is not None or assembly.too_long:
                break  # closing the stream stops the server generating the loop or the flood
    finally:
        close = getattr(stream, "close", None)
        if close:
            close()
    assembly.show()  # what came with the chunk the reading stopped at
    if assembly.turn.finish_reason is None and watch.timed_out:  # the watch ended a silent connection
        raise ReplyTimeout(f"no reply for {watch.timeout:g} s")
    if assembly.turn.finish_reason is None:
        raise StreamCut(
            f"the stream ended without a finish_reason after {assembly.chunks} chunk(s)"
            if assembly.chunks
            else "the event stream held no chunks"
        )
    return assembly.result()
