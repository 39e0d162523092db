"""The deterministic digest used when the summariser fails: no model, bounded, never silent.

It keeps what the next step needs most and can be read off the messages mechanically:
what the user asked, which tools ran on what, which files changed, where the assistant
left off, and the previous summary (so a failure does not also lose older history).
"""

from __future__ import annotations

from nanohermes.calls import describe_call, files_read, files_touched, one_line, parse_tool_call
from nanohermes.context.summary_message import is_summary_message, summary_text
from nanohermes.text import head_tail_text

# The digest replaces a 300-word summary: keep it in the same few-thousand-char range.
DIGEST_MAX_CHARS = 4_000
USER_REQUESTS_SHOWN = 8  # the most recent ones; the first (the goal) is always shown too
USER_REQUEST_CHARS = 300
TOOLS_SHOWN = 20  # the most recent calls
LAST_ASSISTANT_CHARS = 500
EARLIER_SUMMARY_CHARS = 1_800  # a digest of a digest must not nest without bound


def _user_requests(messages: list[dict]) -> list[str]:
    texts = [m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    texts = [t for t in texts if t.strip()]
    chosen = texts if len(texts) <= USER_REQUESTS_SHOWN else [texts[0], *texts[-(USER_REQUESTS_SHOWN - 1) :]]
    return [f"- {one_line(t, USER_REQUEST_CHARS)}" for t in chosen]


def _tools_run(messages: list[dict]) -> list[str]:
    calls = [parse_tool_call(c) for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    lines = [f"- {describe_call(c)}" for c in calls[-TOOLS_SHOWN:]]
    if len(calls) > TOOLS_SHOWN:
        lines.insert(0, f"- … {len(calls) - TOOLS_SHOWN} earlier calls not listed")
    return lines


def _last_assistant_text(messages: list[dict]) -> str:
    for m in reversed(messages):
        content = m.get("content")
        if m.get("role") == "assistant" and isinstance(content, str) and content.strip():
            return one_line(content, LAST_ASSISTANT_CHARS)
    return ""


CHANGED_PREFIX = "Files changed: "
READ_PREFIX = "Files read: "
LEDGER_MAX_PATHS = 40  # per line; a long task touching more is summarised by its latest paths


def file_ledger(history: list[dict]) -> str:
    """`Files changed: …` and `Files read: …`, read mechanically off the tool calls in history and
    carried over from any earlier summary in it, so paths survive however weak the summariser is."""
    changed: list[str] = []
    read: list[str] = []
    for message in history:
        if is_summary_message(message):
            for line in summary_text(message).splitlines():
                for prefix, into in ((CHANGED_PREFIX, changed), (READ_PREFIX, read)):
                    if line.startswith(prefix):
                        into.extend(p.strip() for p in line[len(prefix) :].split(",") if p.strip())
    plain = [m for m in history if not is_summary_message(m)]
    changed = list(dict.fromkeys(changed + files_touched(plain)))
    read = [p for p in dict.fromkeys(read + files_read(plain)) if p not in changed]
    lines = [prefix + ", ".join(paths[-LEDGER_MAX_PATHS:]) for prefix, paths in ((CHANGED_PREFIX, changed), (READ_PREFIX, read)) if paths]
    return "\n".join(lines)


def build_digest(dropped: list[dict], previous_summary: str | None = None) -> str:
    """A plain-text digest of `dropped` of at most DIGEST_MAX_CHARS. Same input, same output."""
    if dropped and is_summary_message(dropped[0]):
        previous_summary = previous_summary or summary_text(dropped[0])
        dropped = dropped[1:]
    sections: list[str] = []
    files = files_touched(dropped)
    if files:
        sections.append(CHANGED_PREFIX + ", ".join(files))
    if read := [p for p in files_read(dropped) if p not in files]:
        sections.append(READ_PREFIX + ", ".join(read))
    if requests := _user_requests(dropped):
        sections.append("User requests:\n" + "\n".join(requests))
    if last := _last_assistant_text(dropped):
        sections.append(f"Last assistant text: {last}")
    if previous_summary:
        sections.append("Earlier summary:\n" + head_tail_text(previous_summary.strip(), EARLIER_SUMMARY_CHARS))
    if tools := _tools_run(dropped):  # last: the least needed, the first cut
        sections.append("Tools run:\n" + "\n".join(tools))
    digest = "\n\n".join(sections) or "(the omitted messages held no text)"
    if len(digest) > DIGEST_MAX_CHARS:
        digest = digest[: DIGEST_MAX_CHARS - 40].rstrip() + "\n… digest cut to stay small"
    return digest
