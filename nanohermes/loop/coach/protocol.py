"""The points where the loop hands a turn to its coach, and the plain values that pass between them.

A strategy (plain.py, small.py) is one object per turn holding that turn's state. The loop calls:

    note(attached, asked, lean, schemas) -> str   the note sent with the request, after its files ("": none)
    before_request(schemas) -> Nudge | None        a note before the next request; may end the turn
                                                   (Answered, StopTurn)
    options(nudge, temperature) -> dict            the next request's options (tool_choice, temperature)
    after_reply(reply, schemas, workspace, messages) -> Verdict   a reply as it came: run as it is, repaired,
                                                   or sent back with a nudge; may end the turn (StopTurn)
    before_call(name, arguments) -> str | None     a refusal for a call about to run, or None
    after_results(reply, results, schemas) -> Nudge | None   a reply's calls ran (results: one Ran each,
                                                   in order); may end the turn (StopTurn)
    final_request(stop) -> Nudge                   the stopped run's last request, tools off
    final_text(reply, schemas) -> str              its reply as the run's answer

Nothing here does I/O but what a strategy is handed (hooks, the workspace's files for a block run
as a write).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nanohermes.hooks import AfterTool
from nanohermes.loop.nudges import Nudge
from nanohermes.loop.turn import StopTurn
from nanohermes.provider import AssistantTurn


@dataclass(frozen=True)
class Ran:
    """One call of a reply, after it ran (or was refused): what a coach may learn from it."""

    name: str
    arguments: str
    ok: bool  # the tool's result was no error
    changed: bool  # it changed a file
    after: AfterTool = field(default_factory=AfterTool)  # what PostToolUse hooks said (ran, blocked)
    repeated: bool = False  # the repeat guard refused it (loop/guard.py)
    refused: bool = False  # the user, a rule, a hook or the coach refused it (not the repeat guard)
    same_look: bool = False  # a look that found the same as an earlier one of this request
    read_again: bool = False  # a read of a file as attached to the request


@dataclass(frozen=True)
class Verdict:
    """What becomes of a reply: `reply` (repaired: `repaired` says how, for the user) is run or
    answers, unless `nudge` sends it back."""

    reply: AssistantTurn
    repaired: str | None = None
    nudge: Nudge | None = None


class Coach(Protocol):
    def note(self, attached: dict[str, str], asked: dict[str, str], lean: bool, schemas: list[dict]) -> str: ...

    def before_request(self, schemas: list[dict]) -> Nudge | None: ...

    def options(self, nudge: Nudge | None, temperature: float | None) -> dict: ...

    def after_reply(
        self, reply: AssistantTurn, schemas: list[dict], workspace: Path, messages: list[dict]
    ) -> Verdict: ...

    def before_call(self, name: str, arguments: str) -> str | None: ...

    def after_results(self, reply: AssistantTurn, results: list[Ran], schemas: list[dict]) -> Nudge | None: ...

    def final_request(self, stop: StopTurn) -> Nudge: ...

    def final_text(self, reply: AssistantTurn, schemas: list[dict]) -> str: ...


def names(schemas: list[dict]) -> list[str]:
    """The names of the tools offered."""
    return [s["function"]["name"] for s in schemas]
