"""Builders of plain chat histories for the context-engine tests."""

from __future__ import annotations

import json
import re


def system(text: str = "You are NanoHermes.") -> dict:
    return {"role": "system", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str | None = None, calls: list[tuple[str, str, dict]] = ()) -> dict:
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in calls
        ]
    return message


def tool(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def filler(n: int, unit: str = "line of output 0123456789\n") -> str:
    return (unit * (n // len(unit) + 1))[:n]


def read_round(i: int, chars: int, path: str | None = None) -> list[dict]:
    """One assistant read_file call and its result of about `chars` chars."""
    path = path or f"src/module_{i}.py"
    cid = f"call_{i}"
    return [
        assistant(None, [(cid, "read_file", {"path": path})]),
        tool(cid, f"read_file {path} lines 1–400 of 400\n" + filler(chars)),
    ]


def tool_history(rounds: int, chars: int, goal: str = "Goal: add gzip support to parse_log().") -> list[dict]:
    messages = [system(), user(goal)]
    for i in range(rounds):
        messages += read_round(i, chars)
    messages.append(assistant("Read everything; next I will edit src/parser.py."))
    return messages


def chat_history(turns: int, chars: int) -> list[dict]:
    messages = [system()]
    for i in range(turns):
        messages += [
            user(f"question {i}: " + filler(chars, "why? ")),
            assistant(f"answer {i}: " + filler(chars, "because. ")),
        ]
    return messages


def stub_summarizer(text: str = "Goal: gzip support. Edited src/parser.py."):
    """A summariser that returns `text`; `.calls` holds every SummaryRequest it got."""
    calls = []

    def summarize(request) -> str:
        calls.append(request)
        return text

    summarize.calls = calls
    return summarize


def failing_summarizer(exc: Exception | None = None):
    calls = []

    def summarize(request) -> str:
        calls.append(request)
        raise exc or TimeoutError("summary request timed out")

    summarize.calls = calls
    return summarize


def request_text(request) -> str:
    """All the text a summary request carries."""
    return all_text(request.messages)


def all_text(messages: list[dict]) -> str:
    """Everything the model reads: contents and tool-call arguments."""
    parts = []
    for m in messages:
        parts.append(m.get("content") or "")
        for c in m.get("tool_calls") or ():
            parts.append(c["function"]["arguments"])
    return "\n".join(parts)


TRIM_MARK = re.compile(r"chars trimmed from the middle|more chars cleared to save context")
