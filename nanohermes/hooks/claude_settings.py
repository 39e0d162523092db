"""Claude Code's settings files, read for their hooks: `~/.claude/settings.json` (or
$CLAUDE_CONFIG_DIR's) as the user's own, and a project's `.claude/settings.json` and
`.claude/settings.local.json` as the repository's, which run once trusted (hooks/trust.py).

Claude Code's shape: {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
"command": "...", "timeout": 60}]}]}}. A matcher filters the tool name (Pre/PostToolUse,
PostToolUseFailure), the source (SessionStart), the trigger (Pre/PostCompact) or the agent type
(SubagentStop: a `task` helper is "general-purpose"); on other events it is ignored, as there.
A handler's `args` is the exec form: the command and its arguments, each one word, with
`${CLAUDE_PROJECT_DIR}` put in as plain text. `sandbox` (true/false) is NanoHermes's own key.

Nothing here fails a run: a file that is too big, no JSON, nested too deep or of the wrong
shape is one warning line naming it; a hook NanoHermes cannot run (an event it lacks, a type
other than "command") is left out, said in the same line.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from nanohermes.config import MAX_SECONDS
from nanohermes.fileio import TooBig, read_bounded
from nanohermes.hooks.settings import EVENTS, TOOL_EVENTS, HookSpec
from nanohermes.hooks.vocabulary import matcher_error

SETTINGS_BYTES = 1_000_000  # a settings file is a few KB; more is no settings file (and is not parsed)
# Claude Code's own defaults (its hooks reference): 600 s for a command, 30 s before each prompt.
CLAUDE_TIMEOUT, CLAUDE_PROMPT_TIMEOUT = 600.0, 30.0
PROBLEMS_SAID = 3  # a warning stays one line: the first few problems, then how many more
MATCHED_EVENTS = TOOL_EVENTS | {"SessionStart", "PreCompact", "PostCompact", "SubagentStop"}
PROJECT_DIR_PLACEHOLDERS = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
IN_TURN = ("async", "asyncRewake")  # background hooks: run in turn here (their answer then counts)


@dataclass(frozen=True)
class ClaudeHooks:
    """One settings file's hooks: those that may run, the table as read (a trust's digest covers
    it), and the one warning line about it ("" for none)."""

    specs: tuple[HookSpec, ...] = ()
    table: object = None
    warning: str = ""


def read_claude_hooks(path: Path, source: str, workspace: Path) -> ClaudeHooks:
    """The hooks of Claude Code's settings file at `path` (none when it does not exist)."""
    try:
        data = json.loads(read_bounded(path, SETTINGS_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return ClaudeHooks()
    except TooBig:
        return ClaudeHooks(warning=f"{path} is over {SETTINGS_BYTES:,} bytes: not read, its hooks are not run.")
    except OSError as exc:
        return ClaudeHooks(warning=f"{path} was not read ({exc.strerror or exc}); its hooks are not run.")
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested past the parser's depth
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        return ClaudeHooks(warning=f"{path} is not valid JSON ({why}); its hooks are not run.")
    table = data.get("hooks") if isinstance(data, dict) else None
    if table is None:
        return ClaudeHooks(warning="" if isinstance(data, dict) else f"{path} is not a JSON object; no hooks read.")
    if data.get("disableAllHooks") is True:
        return ClaudeHooks(warning=f"{path} sets disableAllHooks: its hooks are not run.")
    specs, problems = parse_claude_hooks(table, source, workspace)
    return ClaudeHooks(specs, table, _one_line(path, problems))


def parse_claude_hooks(table, source: str, workspace: Path) -> tuple[tuple[HookSpec, ...], list[str]]:
    """The hooks NanoHermes can run from a settings file's "hooks" value, and what it left out."""
    if not isinstance(table, dict):
        return (), ['"hooks" is not an object of events']
    specs, problems, lacking = [], [], []
    for event, groups in table.items():
        if event not in EVENTS:
            lacking.append(str(event))
        elif not isinstance(groups, list):
            problems.append(f"{event} is not a list of matcher groups")
        else:
            for index, group in enumerate(groups):
                specs += _group(event, group, f"{event}[{index}]", source, workspace, problems)
    if lacking:
        problems.insert(0, f"NanoHermes has no {', '.join(sorted(lacking))} event, so those hooks never run")
    return tuple(specs), problems


def _group(event: str, group, where: str, source: str, workspace: Path, problems: list[str]) -> list[HookSpec]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        problems.append(f'{where} is not {{"matcher": …, "hooks": [...]}}')
        return []
    matcher = group.get("matcher") if event in MATCHED_EVENTS else None  # elsewhere ignored, as Claude Code does
    if matcher is not None and not isinstance(matcher, str):
        problems.append(f"{where}: the matcher is not a string")
        return []
    if matcher and (error := matcher_error(matcher, claude=True)):
        problems.append(f"{where}: {error}")
        return []
    specs = []
    for index, handler in enumerate(group["hooks"]):
        spec = _handler(event, matcher, handler, f"{where}.hooks[{index}]", source, workspace, problems)
        if spec is not None:
            specs.append(spec)
    return specs


def _handler(
    event: str, matcher, handler, where: str, source: str, workspace: Path, problems: list[str]
) -> HookSpec | None:
    """One handler as a HookSpec, or None with the reason in `problems`."""
    if not isinstance(handler, dict):
        problems.append(f"{where} is not an object")
        return None
    kind, command = handler.get("type"), handler.get("command")
    if kind != "command":
        problems.append(f"{where}: type {kind!r} is not run (NanoHermes runs command hooks)")
        return None
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{where}: command is not a non-empty string")
        return None
    if handler.get("shell", "bash") != "bash":
        problems.append(f"{where}: shell {handler['shell']!r} is not run (bash only)")
        return None
    command = _exec_form(command, handler.get("args"), workspace) if "args" in handler else command
    timeout = handler.get("timeout", CLAUDE_PROMPT_TIMEOUT if event == "UserPromptSubmit" else CLAUDE_TIMEOUT)
    sandbox = handler.get("sandbox")
    if command is None or isinstance(timeout, bool) or not isinstance(timeout, int | float):
        problems.append(f"{where}: args must be a list of strings and timeout a number of seconds")
        return None
    if not 0 < timeout <= MAX_SECONDS or (sandbox is not None and not isinstance(sandbox, bool)):
        problems.append(f"{where}: timeout must be above 0 and up to {MAX_SECONDS:g} s, sandbox true or false")
        return None
    for key in IN_TURN:
        if handler.get(key) is True:
            problems.append(f"{where}: {key} is not supported, so it runs in turn")
    if "if" in handler:
        problems.append(f"{where}: `if` is not supported, so it runs on every call its matcher takes")
    return HookSpec(event, command, matcher or None, float(timeout), source, sandbox)


def _exec_form(command: str, args, workspace: Path) -> str | None:
    """Claude Code's exec form (`args`: no shell, each element one word) as a command bash runs
    the same way: every word quoted, `${CLAUDE_PROJECT_DIR}` put in as plain text."""
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return None
    words = [command, *args]
    for placeholder in PROJECT_DIR_PLACEHOLDERS:
        words = [word.replace(placeholder, str(workspace)) for word in words]
    return shlex.join(words)


def _one_line(path: Path, problems: list[str]) -> str:
    if not problems:
        return ""
    more = f"; and {len(problems) - PROBLEMS_SAID} more" if len(problems) > PROBLEMS_SAID else ""
    return f"{path}: {'; '.join(problems[:PROBLEMS_SAID])}{more}."
