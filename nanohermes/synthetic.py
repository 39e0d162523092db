"""Messages the loop writes for the model, told apart from the user's own.

A nudge ("your reply was cut mid tool call", "make the change you showed", "give your answer
now") travels in the user role, because that is what the model reads. In the working set it
carries its kind under SYNTHETIC; the session keeps the kind beside the message (as it keeps a
result's facts), the provider takes the key off before a request, and every reader that means
"what the user said" — the resume recap, an editor's history, /context, the digest and the
summariser's excerpt — tells the two apart by it, never by the text.
"""

from __future__ import annotations

SYNTHETIC = "nanohermes_synthetic"  # never sent: Provider strips it (provider/__init__.py)


def synthetic_message(kind: str, text: str) -> dict:
    """A user-role message written by the loop; `kind` names the nudge (loop/nudges.py)."""
    return {"role": "user", "content": text, SYNTHETIC: kind}


def synthetic_kind(message: dict) -> str | None:
    return message.get(SYNTHETIC)


def is_loops(message: dict) -> bool:
    """A message the loop wrote (a nudge, or its own answer to one: the rewind note's ack)."""
    return SYNTHETIC in message


def is_users(message: dict) -> bool:
    """A user-role message the user wrote (not one of the loop's)."""
    return message.get("role") == "user" and SYNTHETIC not in message


def untagged(message: dict) -> dict:
    """The message as the chat API knows it."""
    if SYNTHETIC not in message:
        return message
    return {k: v for k, v in message.items() if k != SYNTHETIC}


def tagged(message: dict, kind: str | None) -> dict:
    """A message read back from a session, with the kind the session kept beside it."""
    return {**message, SYNTHETIC: kind} if kind else message
