"""The subcommands: `nanohermes sessions` (list, rm, prune), `doctor`, `mcp` (list, login), `acp`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from nanohermes.cli_base import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Mode,
    app,
    error,
    fail,
    load,
    refuse_unpriced,
    subcommand_group,
)

sessions_app = subcommand_group(
    "sessions",
    "List saved sessions (this workspace's; --all for every one), remove or prune them.",
    "List, remove or prune saved sessions.",
)
mcp_app = subcommand_group(
    "mcp",
    "The MCP servers of config.toml ([mcp.servers.NAME]): their state and tools.",
    "The configured MCP servers and their tools.",
)


@sessions_app.callback(invoke_without_command=True)
def sessions_command(
    ctx: typer.Context,
    all_: bool = typer.Option(False, "--all", help="List the sessions of every workspace."),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-C", metavar="DIR", help="List DIR's sessions instead of the current directory's."
    ),
):
    """List saved sessions: name, messages, size, last used, workspace, title (the first request)."""
    if ctx.invoked_subcommand is not None:
        return
    import shutil

    from nanohermes.config import home_dir
    from nanohermes.storage.catalog import in_workspace, list_sessions
    from nanohermes.ui.session_list import others_note, session_rows

    here = (workspace or Path.cwd()).resolve()
    infos = list_sessions(home_dir())
    shown = infos if all_ else in_workspace(infos, here)
    if not infos:
        print("no saved sessions")
        return
    if shown:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # a pipe gets whole titles
        print("\n".join(session_rows(shown, width)))
    if not all_:
        print(others_note(len(shown), len(infos), here))


@sessions_app.command("rm")
def sessions_rm(names: list[str] = typer.Argument(..., help="Names of the sessions to remove.")):
    """Remove saved sessions by name."""
    from nanohermes.config import home_dir
    from nanohermes.errors import SessionError
    from nanohermes.storage.catalog import remove_session

    code = EXIT_OK
    for name in names:
        try:
            remove_session(home_dir(), name)
            print(f"removed {name}")
        except SessionError as exc:
            error(exc)
            code = EXIT_FAILURE
    raise typer.Exit(code)


@sessions_app.command("prune", short_help="Remove sessions not used for a while.")
def sessions_prune(
    older_than: str = typer.Option(..., "--older-than", metavar="AGE", help="Age of the last use, e.g. 30d, 12h, 2w."),
    all_: bool = typer.Option(False, "--all", help="Prune every workspace's sessions, not only this one's."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be removed."),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-C", metavar="DIR", help="Prune DIR's sessions instead of the current directory's."
    ),
):
    """Remove the sessions last used longer ago than --older-than (this workspace's, or --all)."""
    from nanohermes.config import home_dir
    from nanohermes.errors import SessionError
    from nanohermes.storage.catalog import in_workspace, list_sessions, parse_age, prune_candidates, remove_session
    from nanohermes.ui.session_list import human_size

    try:
        age = parse_age(older_than)
    except ValueError as exc:
        fail(f"--older-than: {exc}.", EXIT_USAGE)
    infos = list_sessions(home_dir())
    candidates = prune_candidates(infos if all_ else in_workspace(infos, (workspace or Path.cwd()).resolve()), age)
    removed = []
    for info in candidates:
        if dry_run:
            removed.append(info)
            continue
        try:
            remove_session(home_dir(), info.name)
            removed.append(info)
        except SessionError as exc:  # in use right now: keep it
            error(exc)
    verb = "would remove" if dry_run else "removed"
    for info in removed:
        print(f"{verb} {info.name}")
    print(
        f"{verb} {len(removed)} session(s), {human_size(sum(i.size for i in removed))}, last used over {older_than} ago"
    )


@app.command("doctor", short_help="Check the endpoint, the model and the sandbox.")
def doctor_command(
    model: str | None = typer.Option(None, "--model", metavar="NAME", help="Model name (env NANOHERMES_MODEL)."),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."
    ),
):
    """Check the endpoint: reachable, key, model, streaming, tool calls, usage, context window."""
    from nanohermes.doctor import exit_code, run_checks, summary_line
    from nanohermes.errors import NanoHermesError
    from nanohermes.text import neutralize

    try:
        config = load(model=model, base_url=base_url)
    except NanoHermesError as exc:
        fail(str(exc))
    print(f"nanohermes doctor: model {config.model!r} at {config.effective_base_url}", flush=True)
    checks = run_checks(config)
    for check in checks:
        print(neutralize(check.line()))  # a served model's name is the server's text
    print(summary_line(checks))
    raise typer.Exit(exit_code(checks))


@mcp_app.command("list", short_help="Start each server, show its state and tools, stop it.")
def mcp_list(
    workspace: Path | None = typer.Option(
        None, "--workspace", "-C", metavar="DIR", help="Start stdio servers in DIR instead of the current directory."
    ),
):
    """Start each configured MCP server, show its state and tools, and stop it again."""
    from nanohermes.errors import NanoHermesError
    from nanohermes.mcp.report import list_servers

    try:
        config = load(workspace=workspace)
    except NanoHermesError as exc:
        fail(str(exc))
    raise typer.Exit(list_servers(config, print))


@mcp_app.command("login", short_help="Log in to an HTTP server with oauth = true (opens the browser).")
def mcp_login(name: str = typer.Argument(..., metavar="NAME", help="The server's name in [mcp.servers.NAME].")):
    """Run the OAuth login of one MCP server (`oauth = true`) and keep its tokens for the sessions."""
    import webbrowser

    from nanohermes.errors import NanoHermesError
    from nanohermes.mcp.report import login

    def browser(url: str) -> None:
        print(f"Opening the browser to log in (or open this address yourself):\n{url}", flush=True)
        webbrowser.open(url)

    try:
        config = load()
    except NanoHermesError as exc:
        fail(str(exc))
    raise typer.Exit(login(config, name, print, browser))


@app.command("acp", short_help="Serve editors over the Agent Client Protocol.")
def acp_command(
    model: str | None = typer.Option(None, "--model", metavar="NAME", help="Model name (env NANOHERMES_MODEL)."),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."
    ),
    mode: Mode | None = typer.Option(None, "--mode", help="The sessions' first mode: plan | ask (default) | auto."),
    max_cost: float | None = typer.Option(
        None, "--max-cost", metavar="USD", min=0.0001, help="Stop a session's turn once it has spent USD dollars."
    ),
    allow_unpriced: bool = typer.Option(
        False, "--allow-unpriced", help="With --max-cost: serve even when the model has no known price."
    ),
):
    """Serve editors (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdin/stdout."""
    from nanohermes.acp.main import serve
    from nanohermes.errors import NanoHermesError

    given = (("model", model), ("base_url", base_url), ("mode", mode.value if mode else None), ("max_cost", max_cost))
    flags = {k: v for k, v in given if v}
    if max_cost is not None and not allow_unpriced:
        try:
            refuse_unpriced(load(**flags))
        except NanoHermesError as exc:
            fail(str(exc))
    raise typer.Exit(serve(flags))
