"""/rewind and /fork: back to before an earlier request (the files, the conversation, or both),
and a new session from where this one stands. The words for a rewind's outcome are here, for
the REPL and `-p --rewind` alike."""

from __future__ import annotations

from nanohermes.loop.rewind import BOTH, WHATS, Report, RewindError, choices, rewind
from nanohermes.ui.command_table import handles
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line

PICKER_ROWS = 20  # the latest requests listed; older ones are reached with /rewind N
NAMED_FILES = 8  # files named in each line of the outcome; the rest counted
WHAT_KEYS = {"": BOTH, "b": BOTH, "both": BOTH, "c": "code", "code": "code", "h": "chat", "chat": "chat"}


def parse_rewind(arg: str) -> tuple[int, str]:
    """'2', '2 code', '2:chat' → (2, 'code'); RewindError on anything else."""
    words = arg.replace(":", " ").split()
    if not words or not words[0].isdigit() or len(words) > 2 or (len(words) == 2 and words[1] not in WHATS):
        raise RewindError(f"usage: /rewind [N [both|code|chat]] (N: requests back, 1 = the last); got {arg!r}")
    return int(words[0]), words[1] if len(words) == 2 else BOTH


def _names(paths) -> str:
    paths = [neutralize(p) for p in paths]
    more = f" and {len(paths) - NAMED_FILES} more" if len(paths) > NAMED_FILES else ""
    return ", ".join(paths[:NAMED_FILES]) + more


def report_lines(report: Report) -> list[Line]:
    """What a rewind did, for people: the request, the files put back, what could not be."""
    lines: list[Line] = [[("↶ ", "cyan"), (f"rewound {report.what} to before: {neutralize(report.prompt.line)}", "")]]
    if report.what != "code":
        lines.append([(f"  conversation: {report.dropped} message(s) taken back", "dim")])
    files = report.files
    if files is None:
        return lines
    if report.unchanged:
        lines.append([("  files: none changed since that request", "dim")])
    for verb, paths, style in (("put back", files.written, ""), ("removed", files.removed, "")):
        if paths:
            lines.append([(f"  {verb} {len(paths)}: {_names(paths)}", style)])
    if files.kept:
        lines.append([(f"  kept (changed outside NanoHermes since): {_names(files.kept)}", "yellow")])
    for path, why in list(files.uncovered.items()) + list(files.failed.items()):
        lines.append([(f"  not restored: {neutralize(path)} ({why})", "yellow")])
    return lines


def rewind_for_script(runtime, arg: str) -> list[str]:
    """`-p --rewind N[:WHAT]`: rewind before the task; nothing can be asked, so a file changed
    outside NanoHermes is kept. The outcome as plain lines; RewindError when it cannot be done."""
    report = rewind(runtime.agent, runtime.snapshots, *parse_rewind(arg), lambda paths: False)
    return ["".join(text for text, _ in line) for line in report_lines(report)]


def picker_lines(rows) -> list[Line]:
    lines: list[Line] = [[("requests, the latest first (files changed since):", "bold")]]
    for choice in rows[:PICKER_ROWS]:
        since = f" · {choice.touched} file(s) changed since" if choice.touched else ""
        lines.append([(f"{choice.back:>3}. ", "cyan"), (neutralize(choice.prompt.line)[:100], ""), (since, "dim")])
    return lines


def _pick(repl) -> tuple[int, str] | None:
    rows = choices(repl.runtime.agent, repl.runtime.snapshots)
    if not rows:
        repl.say("nothing to rewind: no request yet in this session", "dim")
        return None
    repl.show(picker_lines(rows))
    answer = repl.ask("rewind to before which request? (number, Enter: cancel) ").strip()
    if not answer.isdigit():
        return None
    what = repl.ask("restore [b]oth (default), [c]ode only, or c[h]at only? ").strip().lower()
    if what not in WHAT_KEYS:
        repl.say(f"not rewound: {what!r} is not b, c or h", "yellow")
        return None
    return int(answer), WHAT_KEYS[what]


@handles("/rewind")
def _rewind(repl, arg: str) -> bool:
    try:
        chosen = parse_rewind(arg) if arg else _pick(repl)
        if chosen is None:
            return True

        def confirm(paths: list[str]) -> bool:
            repl.say(f"changed outside NanoHermes since the agent left them: {_names(paths)}", "yellow")
            return repl.ask("overwrite them too? [y/N] ").strip().lower() in ("y", "yes")

        report = rewind(repl.runtime.agent, repl.runtime.snapshots, *chosen, confirm)
    except (RewindError, OSError) as exc:
        repl.say(f"not rewound: {exc}", "yellow")
        return True
    repl.show(report_lines(report))
    return True


@handles("/fork")
def _fork(repl, arg: str) -> bool:
    from nanohermes.errors import SessionError
    from nanohermes.storage.fork import fork_session
    from nanohermes.ui.switch_commands import open_session

    old = repl.runtime.session.name
    try:
        name = fork_session(repl.runtime.config.home, old, arg.strip() or None)
    except SessionError as exc:
        repl.say(str(exc), "yellow")
        return True
    open_session(repl, name)
    repl.say(f"forked from {old} (still there: /resume {old})", "dim")
    return True
