"""What a resumed session was about, in three short lines, and the command that resumes one.
Pure: plain messages and paths in, text out."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from nanohermes.context.summary import is_summary_message, summary_text
from nanohermes.synthetic import is_loops, is_users
from nanohermes.text import own_words
from nanohermes.ui.session_list import cut, short_path

RECAP_CHARS = 100  # one terminal line per item
_GOAL = re.compile(r"^\W*Goal:?\W*\s*(.*?)(?=^\W*[A-Z][A-Za-z ]{2,40}:|\Z)", re.MULTILINE | re.DOTALL)


def summary_goal(messages: list[dict]) -> str:
    """The 'Goal:' section of the summary that stands in for compacted history, if any."""
    summary = next((m for m in messages[:2] if is_summary_message(m)), None)  # first without the system message
    if summary is None:
        return ""
    match = _GOAL.search(summary_text(summary))
    return " ".join(match.group(1).replace("- ", " ").split()) if match else ""


def last_exchange(messages: list[dict]) -> tuple[str, str]:
    """The last request the user made and the last thing the model said after it."""
    request, answer = "", ""
    for message in messages:
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        if is_users(message):
            request, answer = own_words(content), ""
        elif message.get("role") == "assistant" and content.strip() and not is_loops(message):
            answer = content  # the model's words, not the loop's ("Understood." after a rewind's note)
    return request, answer


def recap_lines(messages: list[dict], width: int = RECAP_CHARS) -> list[str]:
    """`goal: …`, `last request: …`, `last answer: …` for the messages of a resumed session."""
    goal = summary_goal(messages)
    request, answer = last_exchange(messages)
    lines = [f"  goal: {cut(goal, width)}"] if goal else []
    if request:
        lines.append(f"  last request: {cut(request, width)}")
    if answer:
        lines.append(f"  last answer: {cut(answer, width)}")
    return lines


def workspace_note(started_in: str | None, working_in: Path) -> str:
    """Said on resume when the session was started in another directory."""
    if not started_in or started_in == str(working_in):
        return ""
    started, working = short_path(started_in, 80), short_path(str(working_in), 80)
    return f"  note: this session was started in {started}; this run works in {working}"


def resume_command(name: str, workspace: Path, cwd: Path) -> str:
    """The command that resumes session `name` from the directory the user is in."""
    where = "" if Path(cwd).resolve() == Path(workspace) else f" -C {shlex.quote(str(workspace))}"
    return f"nanohermes{where} --session {shlex.quote(name)}"
