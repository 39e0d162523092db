"""What is kept mechanically, whatever the summariser does: the file ledger appended to every
summary, and the deterministic digest used when the summariser fails (no model, bounded,
never silent).

The digest keeps what the next step needs most and can be read off the messages: the files
changed and read, what the user asked, which tools ran on what, where the assistant left off,
and the previous summary (so a failure does not also lose older history).
"""

from __future__ import annotations

from nanohermes.calls import describe_call, files_read, files_touched, one_line, parse_tool_call
from nanohermes.synthetic import is_users
from nanohermes.text import head_tail_text, strip_thinking

# The digest replaces a 300-word summary: keep it in the same few-thousand-char range.
DIGEST_MAX_CHARS = 4_000
USER_REQUESTS_SHOWN = 8  # the most recent ones; the first (the goal) is always shown too
USER_REQUEST_CHARS = 300
TOOLS_SHOWN = 20  # the most recent calls
LAST_ASSISTANT_CHARS = 500
EARLIER_SUMMARY_CHARS = 1_800  # a digest of a digest must not nest without bound
CHANGED_PREFIX = "Files changed: "
READ_PREFIX = "Files read: "
LEDGER_LINE_CHARS = 700  # per line; a long task touching more files is listed by its latest paths


def file_ledger(dropped: list[dict], previous_summary: str | None = None) -> str:
    """`Files changed: …` and `Files read: …`, read off the tool calls in `dropped` and carried
    over from the previous summary's ledger, so paths survive however weak the summariser is."""
    changed: list[str] = []
    read: list[str] = []
    for line in (previous_summary or "").splitlines():
        for prefix, into in ((CHANGED_PREFIX, changed), (READ_PREFIX, read)):
            if line.startswith(prefix):
                into.extend(p.strip() for p in line[len(prefix) :].split(",") if p.strip())
    changed = list(dict.fromkeys(changed + files_touched(dropped)))
    read = [p for p in dict.fromkeys(read + files_read(dropped)) if p not in changed]
    lines = [
        prefix + _latest_that_fit(paths, LEDGER_LINE_CHARS - len(prefix))
        for prefix, paths in ((CHANGED_PREFIX, changed), (READ_PREFIX, read))
        if paths
    ]
    return "\n".join(lines)


def _latest_that_fit(paths: list[str], room: int) -> str:
    kept: list[str] = []
    for path in reversed(paths):
        if kept and sum(len(p) + 2 for p in kept) + len(path) > room:
            break
        kept.insert(0, path)
    return ", ".join(kept)


def without_ledger(summary: str) -> str:
    """A summary's text without its ledger lines (the next ledger carries them over)."""
    return "\n".join(
        line for line in summary.splitlines() if not line.startswith((CHANGED_PREFIX, READ_PREFIX))
    ).strip()


def _user_requests(messages: list[dict]) -> list[str]:
    texts = [m["content"] for m in messages if is_users(m) and isinstance(m.get("content"), str)]
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
        if m.get("role") == "assistant" and isinstance(content, str) and strip_thinking(content).strip():
            return one_line(strip_thinking(content), LAST_ASSISTANT_CHARS)
    return ""


def build_digest(dropped: list[dict], previous_summary: str | None = None) -> str:
    """A plain-text digest of `dropped` of at most DIGEST_MAX_CHARS. Same input, same output."""
    sections: list[str] = []
    if ledger := file_ledger(dropped, previous_summary):
        sections.append(ledger)
    if requests := _user_requests(dropped):
        sections.append("User requests:\n" + "\n".join(requests))
    if last := _last_assistant_text(dropped):
        sections.append(f"Last assistant text: {last}")
    if previous_summary:
        earlier = head_tail_text(without_ledger(previous_summary), EARLIER_SUMMARY_CHARS)
        sections.append("Earlier summary:\n" + earlier)
    if tools := _tools_run(dropped):  # last: the least needed, the first cut
        sections.append("Tools run:\n" + "\n".join(tools))
    digest = "\n\n".join(sections) or "(the omitted messages held no text)"
    if len(digest) > DIGEST_MAX_CHARS:
        digest = digest[: DIGEST_MAX_CHARS - 40].rstrip() + "\n… digest cut to stay small"
    return digest
