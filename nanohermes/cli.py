"""Command line: `nanohermes` (REPL), `nanohermes -p TASK` (one-shot); the subcommands are in
subcommands.py, what both share (exit codes, the app, one-line errors) in cli_base.py.

Errors are mapped to one paragraph and an exit code here, and only here."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from nanohermes import __version__, subcommands  # noqa: F401  (the subcommands join the app)
from nanohermes.cli_base import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OVER_BUDGET,
    EXIT_UNFINISHED,
    EXIT_USAGE,
    Mode,
    app,
    error,
    fail,
    load,
    refuse_unpriced,
)

# What a one-shot run tells the model (and the user) when an action needed a yes it could not
# ask for: `{allow}` becomes the --allow flags with the exact rules that would have allowed it.
CANNOT_ASK_HINT = "The user can allow it by re-running with {allow} (or --yes to allow everything)."
ASK_RULE_HINT = (
    "An ask rule makes it ask every time; only an interactive session (nanohermes, or an editor) can allow it."
)
# A one-shot run's own defaults, under config.toml and the environment. A script must not hang
# on a silent server for the REPL's 20 minutes (request_timeout 600 s, retried once; a person
# watches the REPL and Ctrl-C stops it): 150 s without a byte of the reply, retried once, bounds
# the wait to about 5 minutes (docs/configuration.md, "When the endpoint is wrong"). A local model on a CPU
# whose first token takes longer gets more with request_timeout in config.toml.
ONE_SHOT_DEFAULTS = {"request_timeout": 150.0}
OutputFormat = Enum("OutputFormat", {f: f for f in ("text", "json", "stream-json")}, type=str)


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
    fork: str | None = typer.Option(
        None, "--fork", metavar="SESSION", help="Start a new session copied from SESSION (which stays as it is)."
    ),
    rewind: str | None = typer.Option(
        None,
        "--rewind",
        metavar="N[:WHAT]",
        help="With -p: first rewind to before the Nth last request; WHAT: both (default) | code | chat.",
    ),
    max_cost: float | None = typer.Option(
        None, "--max-cost", metavar="USD", min=0.0001, help="Stop when this run has spent USD dollars (warned at 80%)."
    ),
    allow_unpriced: bool = typer.Option(
        False, "--allow-unpriced", help="With --max-cost: run even when the model has no known price (uncounted)."
    ),
    coach: str | None = typer.Option(
        None,
        "--coach",
        metavar="HOW",
        help="How the model is coached: auto (default) | plain | small (docs/small-models.md).",
    ),
    local: bool = typer.Option(
        False, "--local", help="No key needed: run a small coding model on this computer (downloaded once)."
    ),
    model_file: Path | None = typer.Option(
        None, "--model-file", metavar="PATH", help="With --local: serve this GGUF model file instead."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
):
    if ctx.invoked_subcommand is not None:
        return
    from nanohermes.errors import NanoHermesError

    mode = mode.value if mode is not None else None
    output_format = output_format.value
    if yes and mode not in (None, "auto"):
        fail(f"--yes approves everything, which contradicts --mode {mode}; use one or the other.", EXIT_USAGE)
    if workspace is not None and not workspace.is_dir():
        fail(f"--workspace {workspace} is not a directory.", EXIT_USAGE)
    if continue_ and session:
        fail("--continue and --session both choose a session; use one or the other.", EXIT_USAGE)
    if fork and continue_:
        fail("--fork names the session to copy; --continue picks one too: use one or the other.", EXIT_USAGE)
    if rewind and prompt is None:
        fail("--rewind applies to -p runs; in the REPL use /rewind.", EXIT_USAGE)
    if output_format != "text" and prompt is None:
        fail(f"--output-format {output_format} applies to -p runs; the REPL has its own display.", EXIT_USAGE)
    local = local or model_file is not None
    if local and (base_url or model):
        fail("--local serves its own model; drop --base-url and --model (another GGUF file: --model-file).", EXIT_USAGE)
    served = None  # the --local server, stopped however the run ends
    try:
        config = load(
            model=model,
            base_url=base_url,
            workspace=workspace,
            mode="auto" if yes else mode,
            max_steps=max_steps,
            sandbox_level=sandbox,
            allow=allow or (),
            deny=deny or (),
            max_cost=max_cost,
            coach=coach,
            defaults=ONE_SHOT_DEFAULTS if prompt is not None and not local else None,  # a CPU model: the REPL's wait
        )
        if local:
            from nanohermes.local import serve_locally

            served = serve_locally(config, model_file)
            config = served.session_config(config)
        if max_cost is not None and not allow_unpriced:
            refuse_unpriced(config)
        if continue_:
            session = _latest_session(config)
        from nanohermes.sandbox.probe import probe_soon

        if (config.sandbox is None or config.sandbox.level != "off") and (prompt is not None or session):
            probe_soon()  # bwrap's test run overlaps the imports before the runtime is built (a new REPL
            # session builds it after its first prompt is drawn: ui/repl_start.py)
        if fork:
            from nanohermes.storage.fork import fork_session

            session = fork_session(config.home, fork, session)
        if prompt is not None:
            code = _one_shot(config, prompt, session, output_format, trust_workspace, rewind)
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
    finally:
        if served is not None:
            served.stop()
    raise typer.Exit(code)


def _report_failure(message: str, output_format: str) -> int:
    """A failure before a run started, as one paragraph on stderr (and as JSON on stdout for scripts)."""
    if output_format != "text":
        import json

        from nanohermes.crash import redacted
        from nanohermes.ui.script_output import error_dict

        print(json.dumps(error_dict(redacted(message), EXIT_FAILURE, None), ensure_ascii=False), flush=True)
    error(message)
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


def _one_shot(
    config, prompt: str, session_name: str | None, output_format: str, trust: bool = False, rewind: str | None = None
) -> int:
    from nanohermes.errors import NanoHermesError
    from nanohermes.piped import TaskStillOpen, read_piped, read_task, request_with
    from nanohermes.runtime import build_runtime
    from nanohermes.ui.script_output import error_dict, make_output, result_dict, start_lines

    try:
        task = read_task() if prompt == "-" else prompt
    except TaskStillOpen as exc:
        fail(str(exc), EXIT_USAGE)
    if not task.strip():
        fail("the task is empty (give it with -p TEXT, or -p - and text on stdin).", EXIT_USAGE)
    piped = read_piped() if prompt != "-" else None  # `git diff | nanohermes -p "review this"`
    output = make_output(output_format)
    trusts = (lambda hooks: True) if trust else None  # -p asks nothing: the workspace's hooks need the flag
    try:
        runtime = build_runtime(
            config, session_name, output, approve=None, cannot_ask_hint=CANNOT_ASK_HINT, trust=trusts
        )
    except NanoHermesError as exc:  # no session: the error alone (after what was said while it was built)
        output.failed(error_dict(str(exc), EXIT_FAILURE, None))
        error(exc)
        return EXIT_FAILURE
    name = runtime.session.name
    try:
        output.started(*start_lines(runtime))
        expanded, mentions = _custom_command_prompt(task, runtime, output)  # mentions: the words naming files
        task = _mcp_prompt(task, runtime, output) if expanded == task else expanded  # a server's text names none
        if rewind:
            from nanohermes.ui.rewind_commands import rewind_for_script

            for line in rewind_for_script(runtime, rewind):
                error(line)
        # files are named by the task's words only: piped text is what a command printed (prompt/mentions.py)
        result = runtime.agent.run_turn(request_with(task, piped, runtime.agent, output), mentions=mentions)
    except NanoHermesError as exc:
        from nanohermes.crash import redacted

        output.failed(error_dict(redacted(str(exc)), EXIT_FAILURE, name))
        error(exc)
        return EXIT_FAILURE
    finally:
        runtime.close()
    if result.usage:
        output(result.usage)
    code, reason, message = _outcome(result, cannot_ask_hint(runtime.agent.approvals.suggested))
    if message:
        error(message)
    output.finished(result_dict(result, name, output.log.calls, reason, message, code))
    return code


def _custom_command_prompt(task: str, runtime, emit):
    """`-p "/review src/x.py"`: the prompt of the command file named (nanohermes/custom_commands.py)
    and the words in it that may name files (prompt/mentions.py: Mentions); any other task as it is,
    all of it the user's words. A built-in command's name (slash/table.py) is never a file's, here as anywhere."""
    from nanohermes.prompt.mentions import Mentions

    if not task.startswith("/"):
        return task, Mentions(task)
    from nanohermes import events as ev
    from nanohermes.custom_commands import find_invocation, prompt_for
    from nanohermes.prompt.commands import discover_commands
    from nanohermes.repo_files import Boundary
    from nanohermes.slash.table import COMMANDS

    config = runtime.config
    commands, warnings = discover_commands(config.home, config.workspace, COMMANDS, Boundary.for_config(config))
    for warning in warnings:
        emit(ev.Notice(warning, "warning"))
    invocation = find_invocation(task, commands)
    if invocation is None:
        return task, Mentions(task)
    emit(ev.Notice(f"/{invocation.command.name}: the prompt of {invocation.command.shown_path(config.workspace)}"))
    prompt = prompt_for(invocation, runtime.agent, lambda note: emit(ev.Notice(note)))
    return prompt.text, prompt.mentions


def _mcp_prompt(task: str, runtime, emit) -> str:
    """`-p "/server:prompt ARGUMENTS"` (or the REPL's `/mcp:server:prompt`): that MCP server's prompt
    (nanohermes/mcp/prompts.py); any other task as it is. A PromptError says what is missing."""
    hub = runtime.configured.mcp if runtime.configured is not None else None
    if hub is None or not task.startswith("/"):
        return task
    from nanohermes import events as ev
    from nanohermes.mcp.prompts import find_prompt_command, prompt_text

    found = find_prompt_command(task, hub.servers)
    if found is None:
        return task
    server, name, typed = found
    text = prompt_text(hub, server, name, typed)
    emit(ev.Notice(f"/{server}:{name}: the prompt of the MCP server {server} ({len(text):,} chars)"))
    return text


def _outcome(result, hint: str) -> tuple[int, str | None, str | None]:
    """(exit code, stop reason, what to say) for a one-shot run's result; `hint`: how to allow what was refused."""
    from nanohermes.events import StopCode
    from nanohermes.stops import stop_message

    if result.stop_code == StopCode.INTERRUPTED:
        return EXIT_INTERRUPTED, result.stop_code, stop_message(result)
    if result.stop_code == StopCode.MAX_COST:
        return EXIT_OVER_BUDGET, result.stop_code, stop_message(result)
    if result.stop_code or result.cannot_ask:
        return EXIT_UNFINISHED, result.stop_code or StopCode.NEEDS_APPROVAL, stop_message(result, hint)
    return EXIT_OK, None, None


def cannot_ask_hint(rules) -> str:
    """CANNOT_ASK_HINT naming the rules that would have allowed what was refused."""
    from nanohermes.loop.approvals import allow_flags

    if not rules:  # refused because an ask rule says to ask every time: no flag allows it
        return ASK_RULE_HINT
    return CANNOT_ASK_HINT.replace("{allow}", allow_flags(rules))


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
        error(message)
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
