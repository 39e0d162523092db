"""Slash commands that switch something mid-session: /model, /mode and /resume; `open_session`, the
switch to another session that /resume, /clear and /fork make.

A model or mode switch takes effect on the next request; it is the one documented place the
prompt prefix changes within a session (Runtime.switch says how)."""

from __future__ import annotations

import shutil

from nanohermes.config import MODES
from nanohermes.ui.command_table import handles

# Shift-Tab's order: one press from ask is the safe read-only mode, then each asks less.
MODE_CYCLE = ("ask", "plan", "accept-edits", "auto")
RESUME_CHOICES = 10  # the most recent sessions /resume offers; older ones by name
MODE_HELP = (
    "plan: read-only tools, commands read-only in the sandbox · ask: edits, writes and commands outside the "
    "sandbox ask first, commands in it run unasked (/rewind undoes them) · accept-edits: edits are made and "
    "shown, the rest as in ask · auto: nothing asks (but ask and deny rules)"
)


def next_mode(mode: str) -> str:
    return MODE_CYCLE[(MODE_CYCLE.index(mode) + 1) % len(MODE_CYCLE)] if mode in MODE_CYCLE else MODE_CYCLE[0]


@handles("/model")
def _model(repl, arg: str) -> bool:
    runtime = repl.runtime
    known = repl.models()
    if not arg:
        listing = f"; the server lists: {', '.join(known)}" if known else ""
        repl.say(f"model {runtime.config.model}{listing}")
        return True
    runtime.switch(model=arg)
    note = " (not in the server's list; it will be tried anyway)" if known and arg not in known else ""
    repl.say(f"model {arg} from the next request{note}")
    return True


@handles("/mode")
def _mode(repl, arg: str) -> bool:
    mode = repl.runtime.config.mode
    if not arg:
        repl.say(f"mode {mode} ({MODE_HELP}); Shift-Tab cycles {' → '.join(MODE_CYCLE)}")
        return True
    if arg not in MODES:
        repl.say(f"unknown mode {arg!r}: use /mode {'|'.join(MODES)} ({MODE_HELP})")
        return True
    repl.runtime.switch(mode=arg)
    repl.say(f"mode {arg} from the next request")
    return True


@handles("/resume")
def _resume(repl, arg: str) -> bool:
    from nanohermes.storage.catalog import in_workspace, list_sessions
    from nanohermes.ui.session_list import session_rows

    runtime = repl.runtime
    infos = list_sessions(runtime.config.home)
    if arg:
        if not any(i.name == arg for i in infos):
            repl.say(f"no saved session {arg!r} (nanohermes sessions --all lists them)")
            return True
        open_session(repl, arg)
        return True
    choices = [i for i in in_workspace(infos, runtime.config.workspace) if i.name != runtime.session.name][
        :RESUME_CHOICES
    ]
    if not choices:
        repl.say(
            "no other saved session in this workspace "
            "(`nanohermes sessions --all` lists every workspace's; /resume NAME opens one)"
        )
        return True
    repl.say("\n".join(session_rows(choices, shutil.get_terminal_size().columns, numbered=True)))
    answer = repl.ask(f"resume which? 1-{len(choices)} or a name, Enter to stay: ").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(choices):
        open_session(repl, choices[int(answer) - 1].name)
    elif answer:
        return _resume(repl, answer)
    return True


def open_session(repl, name: str | None) -> None:
    """/resume: continue session `name`; /clear: a new one (None). The current one stays saved."""
    from nanohermes.runtime import build_runtime
    from nanohermes.ui.show_commands import resumed_calls

    if name == repl.runtime.session.name:
        repl.say(f"already in session {name}")
        return
    runtime = build_runtime(
        repl.runtime.config, name, repl.renderer, approve=repl.approve, ask_user=repl.ask_form, trust=repl.trust
    )
    old, repl.runtime = repl.runtime, runtime
    repl.renderer.checkpoints = runtime.checkpoints
    repl.renderer.ran = resumed_calls(runtime.agent.messages)
    repl.context_for_model = []  # it belongs to the conversation left
    old.close()
    repl.say_session()


def session_names(home) -> list[str]:
    """For /resume's Tab completion."""
    from nanohermes.storage.catalog import list_sessions

    return [i.name for i in list_sessions(home)]
