"""Real hook scripts for the hooks tests: the three examples of docs/hooks.md, byte for byte, and a
logger that keeps every payload it gets. Written to a folder, named in a config.toml."""

from __future__ import annotations

import json
import sys
from pathlib import Path

# docs/hooks.md: "A PreToolUse hook that blocks git push" (matcher = "run_command").
NO_PUSH = """\
import json, re, sys

call = json.load(sys.stdin)
if re.search(r"\\bgit\\s+push\\b", call["tool_input"].get("command", "")):
    print("git push is off limits here: commit locally and tell the user what to push.", file=sys.stderr)
    sys.exit(2)  # 2 = block: the call is not run, and the model reads this reason
"""

# docs/hooks.md: "A PostToolUse formatter" (matcher = "write_file|edit_file").
FORMATTER = """\
import json, pathlib, sys

call = json.load(sys.stdin)
path = pathlib.Path(call["tool_input"]["file_path"])
if path.suffix == ".py" and path.is_file():
    text = path.read_text()
    tidy = "\\n".join(line.rstrip() for line in text.splitlines()) + "\\n"
    if tidy != text:
        path.write_text(tidy)
        note = f"{path.name} was reformatted (trailing spaces removed); read it again before editing it."
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}}))
"""

# docs/hooks.md: "A PostCompact hook whose note the model sees": plain stdout reaches the model.
AFTER_COMPACT = "cat .nanohermes/after-compact.md"

# Keeps each payload as one line of `log` (argv[1]); prints argv[2] when given (its answer).
LOGGER = """\
import json, sys

payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(payload) + "\\n")
if len(sys.argv) > 2:
    print(sys.argv[2])
"""

# Exits 2 with a reason the first time (a marker file says it did), then lets the stop pass.
STOP_ONCE = """\
import json, pathlib, sys

json.load(sys.stdin)
marker = pathlib.Path(sys.argv[1])
if not marker.exists():
    marker.write_text("blocked once")
    print("run the tests before you stop", file=sys.stderr)
    sys.exit(2)
"""

SCRIPTS = {"no_push.py": NO_PUSH, "formatter.py": FORMATTER, "logger.py": LOGGER, "stop_once.py": STOP_ONCE}


def write_scripts(folder: Path) -> dict[str, str]:
    """The scripts written to `folder`; name -> the command that runs it (this Python)."""
    folder.mkdir(parents=True, exist_ok=True)
    commands = {}
    for name, source in SCRIPTS.items():
        (folder / name).write_text(source)
        commands[name] = f"{sys.executable} {folder / name}"
    return commands


def hooks_toml(hooks: list[tuple], extra: str = "") -> str:
    """`[[hooks.EVENT]]` tables for (event, command, matcher[, sandbox]) in order, after `extra` settings."""
    lines = [extra] if extra else []
    for event, command, matcher, *sandbox in hooks:
        lines.append(f"[[hooks.{event}]]")
        lines.append(f"command = {json.dumps(command)}")  # a JSON string is a TOML basic string
        if matcher is not None:
            lines.append(f"matcher = {json.dumps(matcher)}")
        if sandbox:
            lines.append(f"sandbox = {'true' if sandbox[0] else 'false'}")
    return "\n".join(lines) + "\n"


def logged(log: Path) -> list[dict]:
    """The payloads the logger kept, in order."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
