"""The summary: what is asked of the summariser, how its reply is cleaned, and the message that
stands in for the dropped conversation.

A summary request reuses the conversation's prefix: the same system message, tools and
messages up to the cut, plus one user message with the instructions and tool calls off, so a
prefix cache serves all of it but the instruction (and a one-slot local server keeps its
cache). Only when that would not fit, or another model summarises, is the dropped part
rendered as a compact excerpt for a separate request.

The summary message is a *user* message, not a second system message: strict chat templates
(Mistral, Llama 2, Gemma) accept one system message and alternating roles only. When the
kept messages also start with a user message, a short assistant acknowledgement sits between.
Knowing a summary message when it sees one, this module also sorts a conversation's chars by
kind (size_by_kind, for /context).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from nanohermes.context.budget import SUMMARY_MAX_CHARS, SUMMARY_MAX_WORDS, message_size
from nanohermes.context.images import chars_of
from nanohermes.memory.candidates import MEMORY_INSTRUCTION, Candidate, split_memories
from nanohermes.synthetic import is_users
from nanohermes.text import head_tail_text, strip_thinking

SUMMARY_HEADER = "[Earlier conversation summary]"
OMITTED_HEADER = "[Earlier conversation was omitted to keep the context small]"
SUMMARY_FOOTER = "[End of earlier conversation summary]"
SUMMARY_ACK = "Understood. I will continue from the summary and the messages after it."
_REFERENCE_NOTE = (  # in every request after a compaction: short
    "This is reference material about earlier work, not new instructions: don't redo what was done. "
    "The messages after it are live; answer the latest user message."
)
_DIGEST_NOTE = "The summariser was unavailable, so below is a mechanical digest of what was dropped. " + _REFERENCE_NOTE
INSTRUCTION_HEADER = "[Context compaction: write the handover note now]"
SUMMARY_ATTEMPTS = 2  # one retry, then the deterministic digest


@dataclass(frozen=True)
class SummaryRequest:
    """What the engine asks the summariser to send. `reuses_prefix`: `messages` are the
    conversation up to the cut plus the instruction — send them with the conversation's own
    tools and tool calls disabled. Otherwise `messages` are a summary prompt and an excerpt."""

    messages: list[dict]
    reuses_prefix: bool


Summarize = Callable[[SummaryRequest], str]  # returns the summary text; may raise


@cache
def summary_prompt(max_words: int = SUMMARY_MAX_WORDS) -> str:
    """The summariser's instructions, from nanohermes/context/summary.md."""
    from importlib import resources  # ~3 ms, only when a summary is due

    template = resources.files("nanohermes.context").joinpath("summary.md").read_text(encoding="utf-8")
    return template.replace("{max_words}", str(max_words)).strip()


def instruction(focus: str | None, kept_user: bool, memories: bool = False) -> dict:
    """The final user message of a summary request that reuses the conversation's prefix;
    `memories`: the reply also lists what to keep in long-term memory (memory/candidates.py)."""
    reply = "the note and the memories" if memories else "the note"
    parts = [
        INSTRUCTION_HEADER,
        summary_prompt(),  # paid uncached on every summary request: short
        f"Do not call any tool; reply with {reply} only.",
    ]
    if kept_user:
        parts.append("The latest user request stays verbatim after your note.")
    if focus and focus.strip():
        parts.append(f"The user asks the note to focus on: {focus.strip()}")
    if memories:
        parts.append(MEMORY_INSTRUCTION)
    return {"role": "user", "content": "\n\n".join(parts)}


def clean_summary(text) -> str:
    """The summary without reasoning blocks or surrounding space, cut to SUMMARY_MAX_CHARS."""
    text = strip_thinking(text if isinstance(text, str) else "").strip()
    return head_tail_text(text, SUMMARY_MAX_CHARS, "\n…[summary cut]…\n")


class SummaryReply(NamedTuple):
    summary: str | None  # None: it failed, `error` says why
    error: str | None
    memories: list[Candidate]  # what the reply's memories section offers to keep (never in `summary`)


def request_summary(summarize: Summarize, request: SummaryRequest) -> SummaryReply:
    """Ask `summarize` up to SUMMARY_ATTEMPTS times; the memories section is split off before
    the summary is cleaned and capped."""
    error = None
    for _ in range(SUMMARY_ATTEMPTS):
        try:
            reply = summarize(request)
        except Exception as exc:  # the contract: any failure of the callback means "use the digest"
            error = f"{type(exc).__name__}: {exc}"[:200]
            continue
        text, memories = split_memories(strip_thinking(reply if isinstance(reply, str) else ""))
        summary = clean_summary(text)
        if summary:
            return SummaryReply(summary, None, memories)
        error = "the summariser returned nothing"
    return SummaryReply(None, error, [])


def summary_message(summary: str) -> dict:
    """A model-written summary as the user message right after the system message."""
    return {"role": "user", "content": f"{SUMMARY_HEADER}\n{_REFERENCE_NOTE}\n\n{summary.strip()}\n{SUMMARY_FOOTER}"}


def digest_message(digest: str) -> dict:
    """The failure form: says plainly that history was omitted, then the digest."""
    return {"role": "user", "content": f"{OMITTED_HEADER}\n{_DIGEST_NOTE}\n\n{digest.strip()}\n{SUMMARY_FOOTER}"}


def ack_message() -> dict:
    return {"role": "assistant", "content": SUMMARY_ACK}


def is_summary_message(message: dict) -> bool:
    """A summary or digest message (a user message now; a system one in older sessions)."""
    content = message.get("content")
    return (
        message.get("role") in ("user", "system")
        and isinstance(content, str)
        and (content.startswith(SUMMARY_HEADER + "\n") or content.startswith(OMITTED_HEADER))
    )


def summary_text(message: dict) -> str:
    """The summary or digest inside a summary message, without the framing lines."""
    content = message.get("content") or ""
    body = content.split("\n\n", 1)[1] if "\n\n" in content else ""
    return body.removesuffix(SUMMARY_FOOTER).strip()


def find_summary(messages: list[dict]) -> int | None:
    """Index of the summary message (always 1 when present), or None."""
    if len(messages) > 1 and is_summary_message(messages[1]):
        return 1
    return None


def size_by_kind(messages: list[dict]) -> dict[str, int]:
    """Chars per kind of content (for /context): system, summary, user, notes (what the loop told
    the model in the user role, synthetic.py), assistant, tool_calls, tool, and the images any of
    them carries (context/images.py: counted by their tokens)."""
    kinds = dict.fromkeys(("system", "summary", "user", "notes", "assistant", "tool_calls", "tool", "images"), 0)
    for m in messages:
        role, images = m.get("role"), chars_of(m)
        kinds["images"] += images
        if role == "user" and not is_users(m):
            kinds["notes"] += message_size(m) - images
        elif is_summary_message(m):
            kinds["summary"] += message_size(m) - images
        elif role == "system":
            kinds["system"] += message_size(m) - images
        elif role == "assistant" and m.get("tool_calls"):
            calls = message_size({"tool_calls": m["tool_calls"]})
            kinds["tool_calls"] += calls
            kinds["assistant"] += message_size(m) - calls - images
        elif role in kinds:
            kinds[role] += message_size(m) - images
    return kinds
