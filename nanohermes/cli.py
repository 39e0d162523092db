"""Command line: `nanohermes` (REPL), `nanohermes -p TASK` (one-shot), `sessions`, `doctor`.

Errors are mapped to one paragraph and an exit code here, and only here."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from nanohermes import __version__
from nanohermes.config import MODES

# Exit codes (README, "Exit codes"): a script can tell a finished task from one that stopped.
EXIT_OK = 0  # the model answered
EXIT_FAILURE = 1  # provider, configuration or session error
EXIT_USAGE = 2  # bad command line
# Stopped before the task was done: step limit, loop guard, cut calls, an action refused because nothing could ask.
EXIT_UNFINISHED = 3
EXIT_INTERRUPTED = 130  # Ctrl-C
# What a one-shot run tells the model (and the user) when an action needed a yes it could not
# ask for: `{allow}` becomes the --allow flags with the exact rules that would have allowed it.
CANNOT_ASK_HINT = "The user can allow it by re-running with {allow} (or --yes to allow everything)."
ASK_RULE_HINT = (
    "An ask rule makes it ask every time; only an interactive session (nanohermes, or an editor) can allow it."
)
# A one-shot run's own defaults, under config.toml and the environment. A script must not hang
# on a silent server for the REPL's 20 minutes (request_timeout 600 s, retried once; a person
# watches the REPL and Ctrl-C stops it): 150 s without a byte of the reply, retried once, bounds
# the wait to about 5 minutes (README, "When the endpoint is wrong"). A local model on a CPU
# whose first token takes longer gets more with request_timeout in config.toml.
ONE_SHOT_DEFAULTS = {"request_timeout": 150.0}
Mode = Enum("Mode", {m: m for m in MODES}, type=str)  # --mode's choices; config validates the other sources
OutputFormat = Enum("OutputFormat", {f: f for f in ("text", "json", "stream-json")}, type=str)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no <bool> after flags, and [mcp.servers.NAME] is text, not markup
    help="NanoHermes: a terminal coding agent for any OpenAI-compatible model.",
)


def _subcommands(name: str, help: str, short_help: str) -> typer.Typer:
    """A group of subcommands (`nanohermes sessions …`) with the main app's plain help."""
    group = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, help=help)
    app.add_typer(group, name=name, short_help=short_help)
    return group


sessions_app = _subcommands(
    "sessions",
    "List saved sessions (this workspace's; --all for every one), remove or prune them.",
    "List, remove or prune saved sessions.",
)
mcp_app = _subcommands(
    "mcp",
    "The MCP servers of config.toml ([mcp.servers.NAME]): their state and tools.",
    "The configured MCP servers and their tools.",
)


def _version(value: bool):
    if value:
        print(f"nanohermes {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    prompt: str | None = typer.Option(
        None, "-p", "--prompt", metavar="TASK", help="Run TASK to completion and print the answer ('-' reads stdin)."
    ),
    continue_: bool = typer.Option(False, "--continue", "-c", help="Resume the most recent session of this workspace."),
    session: str | None = typer.Option(None, "--session", metavar="NAME", help="Create or resume the named session."),
    output_format: OutputFormat = typer.Option(
        "text",
        "--output-format",
        help="With -p: text (the answer) | json (one object) | stream-json (one event per line).",
    ),
    model: str | None = typer.Option(None, "--model", metavar="NAME", help="Model name (env NANOHERMES_MODEL)."),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-C", metavar="DIR", help="Work in DIR instead of the current directory."
    ),
    yes: bool = typer.Option(False, "--yes", help="Approve every action (same as --mode auto)."),
    mode: Mode | None = typer.Option(
        None, "--mode", help="plan (read-only) | ask (default) | accept-edits (edits without asking) | auto."
    ),
    allow: list[str] | None = typer.Option(
        None,
        "--allow",
        metavar="RULE",
        help="Allow calls matching RULE without asking (repeatable), e.g. 'run_command:pytest *'.",
    ),
    deny: list[str] | None = typer.Option(
        None,
        "--deny",
        metavar="RULE",
        help="Refuse calls matching RULE in every mode (repeatable), e.g. 'run_command:git push *'.",
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, metavar="N", help="Stop a turn after N model requests (default 50)."
    ),
    sandbox: str | None = typer.Option(
        None,
        "--sandbox",
        metavar="LEVEL",
        help="Where commands may write: workspace-write (default) | read-only | off.",
    ),
    trust_workspace: bool = typer.Option(
        False, "--trust-workspace", help="Trust the hooks of this workspace's .nanohermes/config.toml (kept)."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
):
    if ctx.invoked_subcommand is not None:
        return
    from nanohermes.errors import NanoHermesError

    mode = mode.value if mode is not None else None
    output_format = output_format.value
    if yes and mode not in (None, "auto"):
        _fail(f"--yes approves everything, which contradicts --mode {mode}; use one or the other.", EXIT_USAGE)
    if workspace is not None and not workspace.is_dir():
        _fail(f"--workspace {workspace} is not a directory.", EXIT_USAGE)
    if continue_ and session:
        _fail("--continue and --session both choose a session; use one or the other.", EXIT_USAGE)
    if output_format != "text" and prompt is None:
        _fail(f"--output-format {output_format} applies to -p runs; the REPL has its own display.", EXIT_USAGE)
    try:
        config = _config(
            model=model,
            base_url=base_url,
            workspace=workspace,
            mode="auto" if yes else mode,
            max_steps=max_steps,
            sandbox_level=sandbox,
            allow=allow or (),
            deny=deny or (),
            defaults=ONE_SHOT_DEFAULTS if prompt is not None else None,
        )
        if continue_:
            session = _latest_session(config)
        from nanohermes.sandbox.probe import probe_soon

        if config.sandbox is None or config.sandbox.level != "off":
            probe_soon()  # bwrap's test run overlaps the imports before the runtime is built
        if prompt is not None:
            code = _one_shot(config, prompt, session, output_format, trust_workspace)
        else:
            from nanohermes.ui.repl import run_repl

            code = run_repl(config, session, trust_workspace)
    except NanoHermesError as exc:
        code = _report_failure(str(exc), output_format if prompt is not None else "text")
    except (typer.Exit, typer.Abort):  # a usage error already said (_fail), or an abort
        raise
    except Exception as exc:  # a bug: the paragraph main() would print, and the JSON a script expects
        from nanohermes.crash import report_crash

        code = _report_failure(report_crash(exc), output_format if prompt is not None else "text")
    raise typer.Exit(code)


def _config(**flags):
    from nanohermes.configure import load_config

    return load_config(**flags)


def _error(message) -> None:
    """One line on stderr: its control characters shown (a server's or a file's words may hold ESC)."""
    from nanohermes.text import neutralize

    print(f"nanohermes: {neutralize(str(message))}", file=sys.stderr, flush=True)


def _fail(message: str, code: int = EXIT_FAILURE):
    _error(message)
    raise typer.Exit(code)


def _report_failure(message: str, output_format: str) -> int:
    """A failure before a run started, as one paragraph on stderr (and as JSON on stdout for scripts)."""
    if output_format != "text":
        import json

        from nanohermes.ui.script_output import error_dict

        print(json.dumps(error_dict(message, EXIT_FAILURE, None), ensure_ascii=False), flush=True)
    _error(message)
    return EXIT_FAILURE


def _latest_session(config) -> str:
    from nanohermes.errors import SessionError
    from nanohermes.storage.catalog import latest_session

    latest = latest_session(config.home, config.workspace)
    if latest is None:
        raise SessionError(
            f"No saved session of {config.workspace} to continue. Start one with `nanohermes`, "
            "or see every workspace's with `nanohermes sessions --all` and pick one with --session NAME."
        )
    return latest.name


def _one_shot(config, prompt: str, session_name: str | None, output_format: str, trust: bool = False) -> int:
    from nanohermes.errors import NanoHermesError
    from nanohermes.piped import read_piped, read_task, request_with
    from nanohermes.runtime import build_runtime
    from nanohermes.ui.script_output import error_dict, make_output, result_dict, start_lines

    task = read_task() if prompt == "-" else prompt
    if not task.strip():
        _fail("the task is empty (give it with -p TEXT, or -p - and text on stdin).", EXIT_USAGE)
    piped = read_piped() if prompt != "-" else None  # `git diff | nanohermes -p "review this"`
    output = make_output(output_format)
    trusts = (lambda hooks: True) if trust else None  # -p asks nothing: the workspace's hooks need the flag
    runtime = build_runtime(config, session_name, output, approve=None, cannot_ask_hint=CANNOT_ASK_HINT, trust=trusts)
    name = runtime.session.name
    try:
        output.started(*start_lines(runtime))
        task = _custom_command_prompt(task, runtime, output)
        result = runtime.agent.run_turn(request_with(task, piped, runtime.agent, output))
    except NanoHermesError as exc:
        output.failed(error_dict(str(exc), EXIT_FAILURE, name))
        _error(exc)
        return EXIT_FAILURE
    finally:
        runtime.close()
    if result.usage:
        output(result.usage)
    code, reason, message = _outcome(result, cannot_ask_hint(runtime.agent.approvals.suggested))
    if message:
        _error(message)
    output.finished(result_dict(result, name, output.log.calls, reason, message, code))
    return code


def _custom_command_prompt(task: str, runtime, emit) -> str:
    """`-p "/review src/x.py"`: the prompt of the command file named (nanohermes/custom_commands.py);
    any other task as it is. A built-in REPL command's name is never a file's, here as in the REPL."""
    if not task.startswith("/"):
        return task
    from nanohermes import events as ev
    from nanohermes.custom_commands import find_invocation, prompt_for
    from nanohermes.prompt.commands import discover_commands
    from nanohermes.ui.commands import COMMANDS

    config = runtime.config
    commands, warnings = discover_commands(config.home, config.workspace, COMMANDS)
    for warning in warnings:
        emit(ev.Notice(warning, "warning"))
    invocation = find_invocation(task, commands)
    if invocation is None:
        return task
    emit(ev.Notice(f"/{invocation.command.name}: the prompt of {invocation.command.shown_path(config.workspace)}"))
    return prompt_for(invocation, runtime.agent, lambda note: emit(ev.Notice(note)))


def _outcome(result, hint: str) -> tuple[int, str | None, str | None]:
    """(exit code, stop reason, what to say) for a one-shot run's result; `hint`: how to allow what was refused."""
    from nanohermes.events import StopCode
    from nanohermes.stops import stop_message

    if result.stop_code == StopCode.INTERRUPTED:
        return EXIT_INTERRUPTED, result.stop_code, stop_message(result)
    if result.stop_code or result.cannot_ask:
        return EXIT_UNFINISHED, result.stop_code or StopCode.NEEDS_APPROVAL, stop_message(result, hint)
    return EXIT_OK, None, None


def cannot_ask_hint(rules) -> str:
    """CANNOT_ASK_HINT naming the rules that would have allowed what was refused."""
    from nanohermes.loop.approvals import allow_flags

    if not rules:  # refused because an ask rule says to ask every time: no flag allows it
        return ASK_RULE_HINT
    return CANNOT_ASK_HINT.replace("{allow}", allow_flags(rules))


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
            _error(exc)
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
        _fail(f"--older-than: {exc}.", EXIT_USAGE)
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
            _error(exc)
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
    from nanohermes.errors import NanoHermesError
    from nanohermes.provider.doctor import exit_code, run_checks, summary_line
    from nanohermes.text import neutralize

    try:
        config = _config(model=model, base_url=base_url)
    except NanoHermesError as exc:
        _fail(str(exc))
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
        config = _config(workspace=workspace)
    except NanoHermesError as exc:
        _fail(str(exc))
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
        config = _config()
    except NanoHermesError as exc:
        _fail(str(exc))
    raise typer.Exit(login(config, name, print, browser))


@app.command("acp", short_help="Serve editors over the Agent Client Protocol.")
def acp_command(
    model: str | None = typer.Option(None, "--model", metavar="NAME", help="Model name (env NANOHERMES_MODEL)."),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)."
    ),
    mode: Mode | None = typer.Option(None, "--mode", help="The sessions' first mode: plan | ask (default) | auto."),
):
    """Serve editors (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdin/stdout."""
    from nanohermes.acp.main import serve

    flags = {k: v for k, v in (("model", model), ("base_url", base_url), ("mode", mode.value if mode else None)) if v}
    raise typer.Exit(serve(flags))


def main():
    """The edge: every way out of a run becomes an exit code, and an exception nobody expected
    becomes one paragraph naming the log file that holds its traceback (crash.py)."""
    from nanohermes import signals

    signals.install()
    try:
        code = _run_app()
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being reported
        code = EXIT_INTERRUPTED
    except signals.Terminated as stop:
        code = stop.exit_code
    finally:
        signals.block_all()  # from here no signal can turn the code into a death by signal (-2)
    _flush_quietly()
    sys.exit(code)


def _run_app() -> int:
    from nanohermes import signals

    try:
        app()
        return EXIT_OK
    except signals.Terminated as stop:  # before SystemExit, which it is
        return _say_stopped(f"stopped by {stop} (sessions are saved as they go)", stop.exit_code)
    except SystemExit as done:  # typer's own exit, with the code the command chose
        return done.code if isinstance(done.code, int) else EXIT_OK if done.code is None else EXIT_FAILURE
    except KeyboardInterrupt:
        return _say_stopped("interrupted", EXIT_INTERRUPTED)
    except Exception as exc:
        from nanohermes.crash import report_crash

        return _say_stopped(report_crash(exc), EXIT_FAILURE)


def _say_stopped(message: str, code: int) -> int:
    try:
        _error(message)
    except (OSError, ValueError):  # the terminal is gone (SIGHUP) or stderr closed
        pass
    return code


def _flush_quietly() -> None:
    """A closed terminal or pipe must not add a second error at exit (Python would exit 120)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass
