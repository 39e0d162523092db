"""Command line: `nanohermes` (REPL), `nanohermes -p TASK` (one-shot), `sessions`, `doctor`.

Errors are mapped to one paragraph and an exit code here, and only here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from enum import Enum

import typer

from nanohermes import __version__
from nanohermes.config import MODES

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# What a one-shot run tells the model when an action needed a yes it could not ask for.
CANNOT_ASK_HINT = "The user can allow it by re-running with --yes (or --mode auto)."
Mode = Enum("Mode", {m: m for m in MODES}, type=str)  # --mode's choices; config validates the other sources

app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False,
                  help="NanoHermes: a terminal coding agent for any OpenAI-compatible model.")


def _version(value: bool):
    if value:
        print(f"nanohermes {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    prompt: Optional[str] = typer.Option(None, "-p", "--prompt", help="Run TASK to completion and print the answer ('-' reads stdin)."),
    session: Optional[str] = typer.Option(None, "--session", help="Create or resume the named session."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (env NANOHERMES_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."),
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-C", help="Work in DIR instead of the current directory."),
    yes: bool = typer.Option(False, "--yes", help="Approve every action (same as --mode auto)."),
    mode: Optional[Mode] = typer.Option(None, "--mode", help="plan (read-only) | ask (default) | auto."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Stop a turn after N model requests (default 50)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
):
    if ctx.invoked_subcommand is not None:
        return
    from nanohermes.errors import NanoHermesError

    mode = mode.value if mode is not None else None
    if yes and mode not in (None, "auto"):
        _fail(f"--yes approves everything, which contradicts --mode {mode}; use one or the other.", EXIT_USAGE)
    if workspace is not None and not workspace.is_dir():
        _fail(f"--workspace {workspace} is not a directory.", EXIT_USAGE)
    try:
        config = _config(model=model, base_url=base_url, workspace=workspace, mode="auto" if yes else mode, max_steps=max_steps)
        if prompt is not None:
            code = _one_shot(config, prompt, session)
        else:
            from nanohermes.ui.repl import run_repl

            code = run_repl(config, session)
    except NanoHermesError as exc:
        _fail(str(exc))
    raise typer.Exit(code)


def _config(**flags):
    from nanohermes.config import load_config

    return load_config(**flags)


def _fail(message: str, code: int = EXIT_FAILURE):
    print(f"nanohermes: {message}", file=sys.stderr)
    raise typer.Exit(code)


def _one_shot(config, prompt: str, session_name: str | None) -> int:
    from nanohermes.runtime import build_runtime
    from nanohermes.ui.plain import PlainRenderer, stop_message, usage_line

    task = sys.stdin.read() if prompt == "-" else prompt
    if not task.strip():
        _fail("the task is empty (give it with -p TEXT, or -p - and text on stdin).", EXIT_USAGE)
    renderer = PlainRenderer()
    runtime = build_runtime(config, session_name, renderer, approve=None, cannot_ask_hint=CANNOT_ASK_HINT)
    try:
        if runtime.session.generated:
            print(f"· session {runtime.session.name} (resume with --session {runtime.session.name})", file=sys.stderr)
        result = runtime.agent.run_turn(task)
    finally:
        runtime.close()
    if result.usage:
        print(usage_line(result.usage), file=sys.stderr)
    if result.stopped_reason == "interrupted":
        print("nanohermes: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.stopped_reason:
        print(f"nanohermes: {stop_message(result)}", file=sys.stderr)
        return EXIT_FAILURE
    print(result.final_text)
    return EXIT_OK


@app.command("sessions")
def sessions_command():
    """List saved sessions: name, messages, size, last used."""
    from datetime import datetime

    from nanohermes.config import home_dir
    from nanohermes.storage.session import list_sessions

    infos = list_sessions(home_dir())
    if not infos:
        print("no saved sessions")
        return
    print(f"{'NAME':<32} {'MESSAGES':>8} {'SIZE':>10}  LAST USED")
    for info in infos:
        count = "corrupt" if info.messages < 0 else str(info.messages)
        when = datetime.fromtimestamp(info.last_used).strftime("%Y-%m-%d %H:%M")
        print(f"{info.name:<32} {count:>8} {_human(info.size):>10}  {when}")


@app.command("doctor")
def doctor_command(
    model: Optional[str] = typer.Option(None, "--model", help="Model name (env NANOHERMES_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."),
):
    """Check the endpoint: reachable, key, model, streaming, tool calls, usage, context window."""
    from nanohermes.provider.doctor import exit_code, run_checks, summary_line
    from nanohermes.errors import NanoHermesError

    try:
        config = _config(model=model, base_url=base_url)
    except NanoHermesError as exc:
        _fail(str(exc))
    print(f"nanohermes doctor: model {config.model!r} at {config.effective_base_url}", flush=True)
    checks = run_checks(config)
    for check in checks:
        print(check.line())
    print(summary_line(checks))
    raise typer.Exit(exit_code(checks))


def _human(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def main():
    try:
        app()
    except KeyboardInterrupt:
        print("\nnanohermes: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
