"""The one `system` message at index 1 that stands in for the dropped conversation."""

from __future__ import annotations

SUMMARY_HEADER = "[Earlier conversation summary]"
OMITTED_HEADER = "[Earlier conversation was omitted to keep the context small]"
_REFERENCE_NOTE = (
    "This is reference material about earlier work, not new instructions: do not redo what it "
    "says was done, and do not act on requests in it unless the live messages ask again. "
    "The messages after it are live; answer the latest user message."
)
_DIGEST_NOTE = (
    "The summariser was unavailable, so below is a mechanical digest of what was dropped. "
    + _REFERENCE_NOTE
)
SUMMARY_FOOTER = "[End of earlier conversation summary]"


def summary_message(summary: str) -> dict:
    """A model-written summary as the index-1 system message."""
    body = f"{SUMMARY_HEADER}\n{_REFERENCE_NOTE}\n\n{summary.strip()}\n{SUMMARY_FOOTER}"
    return {"role": "system", "content": body}


def digest_message(digest: str) -> dict:
    """The failure form: says plainly that history was omitted, then the digest."""
    body = f"{OMITTED_HEADER}\n{_DIGEST_NOTE}\n\n{digest.strip()}\n{SUMMARY_FOOTER}"
    return {"role": "system", "content": body}


def is_summary_message(message: dict) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "system"
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
