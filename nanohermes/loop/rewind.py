"""/rewind: the conversation, the workspace's files, or both, back to before an earlier request.

N counts the user's requests back (1: the last one, whose whole turn is undone). The files come
back from the workspace snapshots (storage/snapshots.py, storage/restore.py); a file someone
changed since the agent last left it is overwritten only if `confirm` says so. The conversation
comes back by replaying the session file up to that request, recorded as a rewind event. The
model is told what was rewound by a tagged note (nudges.rewound), answered so roles alternate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.errors import NanoHermesError
from nanohermes.fileio import open_regular
from nanohermes.loop import nudges
from nanohermes.storage import restore
from nanohermes.storage.replay import Prompt, replay
from nanohermes.storage.snapshots import RESTORED, REWIND, Snapshots
from nanohermes.synthetic import tagged

CODE, CHAT, BOTH = "code", "chat", "both"
WHATS = (BOTH, CODE, CHAT)


class RewindError(NanoHermesError):
    """A rewind that cannot be done as asked (no such request, nothing kept): said, nothing changed."""


@dataclass(frozen=True)
class Choice:
    back: int  # N: 1 is the last request
    prompt: Prompt
    touched: int  # files a snapshot saw change since


@dataclass
class Report:
    prompt: Prompt
    what: str
    files: restore.Outcome | None = None  # None: the files were not asked for
    unchanged: bool = False  # no snapshot since: the files are as the request found them
    dropped: int = 0  # messages the conversation lost


def choices(agent, snapshots: Snapshots | None) -> list[Choice]:
    """The requests one can rewind to, the latest first."""
    prompts = agent.session.state.prompts
    touched = (lambda p: len(snapshots.touched_since(p.serial))) if snapshots else (lambda p: 0)
    return [Choice(n, p, touched(p)) for n, p in enumerate(reversed(prompts), 1)]


def rewind(agent, snapshots: Snapshots | None, back: int, what: str, confirm: Callable[[list[str]], bool]) -> Report:
    """Rewind `what` (BOTH, CODE, CHAT) to before the request `back` requests back."""
    prompts = agent.session.state.prompts
    if what not in WHATS:
        raise RewindError(f"rewind what? {what!r}: say both, code or chat")
    if not 1 <= back <= len(prompts):
        raise RewindError(f"no request {back} back: this session has {len(prompts)} to rewind to")
    if what != CHAT and snapshots is None:
        raise RewindError("the workspace's files are not kept here: only `chat` can be rewound")
    report = Report(prompts[-back], what)
    if what != CHAT:
        _files(report, snapshots, confirm)
    if what != CODE:
        report.dropped = _conversation(agent, len(prompts) - back, report.prompt)
    agent.transcript.add_note(nudges.REWOUND, nudges.rewound(_told(report)), alternate=True)
    agent.transcript.add(tagged({"role": "assistant", "content": nudges.REWOUND_ACK}, nudges.REWOUND))
    return report


def _files(report: Report, snapshots: Snapshots, confirm: Callable[[list[str]], bool]) -> None:
    start = snapshots.start_of(report.prompt.serial)
    if start is None:  # no change recorded since that request
        report.unchanged, report.files = True, restore.Outcome()
        return
    left, _ = snapshots.latest()
    now = snapshots.look()
    todo = restore.plan(start.entries, start.complete, now.entries, left, start.outside)
    overwrite = bool(todo.conflicts) and confirm(todo.conflicts)
    snapshots.checkpoint(REWIND, "rewind", now=now)  # what the rewind found: a later rewind can bring it back
    report.files = restore.apply(todo, start.entries, snapshots.workspace, snapshots.blobs, overwrite)
    snapshots.checkpoint(RESTORED, "rewind")


def _conversation(agent, keep: int, prompt: Prompt) -> int:
    """The working set as it was before `prompt` (the session file replayed up to it)."""
    path = agent.session.path
    try:
        with open_regular(path) as f:
            state, _ = replay(_lines_before(f, prompt.offset), path)
    except OSError as exc:
        raise RewindError(f"cannot read the session file {path}: {exc.strerror or exc}") from None
    before = agent.messages[1:]
    agent.session.record_rewind(before, state.messages, keep)
    agent.transcript.rewound(state.messages)
    agent.keeper.reset()  # the compaction history belonged to the longer conversation
    return max(0, len(before) - len(state.messages))


def _lines_before(f, offset: int):
    position = 0
    for raw in f:
        if position >= offset:
            return
        position += len(raw)
        yield raw


def _told(report: Report) -> str:
    """What the model is told, in plain words."""
    request = f"their request {report.prompt.line!r}"
    if report.what == CHAT:
        return (
            f"the user took the conversation back to before {request}; the workspace's files were left as they "
            "are, so they may hold changes made after it that you no longer see"
        )
    files = report.files or restore.Outcome()
    done = f"put back {len(files.written)} file(s), removed {len(files.removed)} created since"
    if report.unchanged:
        done = "no file had changed since"
    missed = list(files.uncovered) + list(files.failed) + files.kept
    if missed:
        done += f"; not restored: {', '.join(missed[:10])}" + (" …" if len(missed) > 10 else "")
    if report.what == CODE:
        return f"the user put the workspace's files back as they were before {request} ({done}); the chat stays"
    return f"the user rewound the conversation and the workspace's files to before {request} ({done})"
