"""Hook scripts written for Claude Code, as its documentation prints them, and the settings.json
that names them: the hooks tests run them unchanged against NanoHermes.

Sources (Claude Code's docs, code.claude.com/docs/en/hooks and /hooks-guide):
- BLOCK_RM: the reference's "How a hook resolves" example (`.claude/hooks/block-rm.sh`), with
  its settings entry (matcher "Bash", `if`, exec form `args: []`, `${CLAUDE_PROJECT_DIR}`).
- PROTECT_FILES: the guide's "Block edits to protected files" (`.claude/hooks/protect-files.sh`).
- FORMAT_COMMAND: the guide's "Auto-format code after edits" hook, `jq -r '.tool_input.file_path'
  | xargs ...`, with `sed` standing in for `npx prettier --write` (no network in the tests).
- STOP_EVERYTHING: the reference's "To stop Claude entirely" JSON, printed by a hook.
- PY_TO_PY3: a PreToolUse hook in Claude Code's documented shape that rewrites the call
  (`permissionDecision: "allow"` with `updatedInput`, the whole input echoed with one change).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

BLOCK_RM = """\
#!/bin/bash
# .claude/hooks/block-rm.sh
COMMAND=$(jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  jq -n '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Destructive command blocked by hook"
    }
  }'
else
  exit 0  # no decision; normal permission flow applies
fi
"""

# The reference's settings for it, byte for byte as JSON.
BLOCK_RM_SETTINGS = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "if": "Bash(rm *)",
                        "command": "${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh",
                        "args": [],
                    }
                ],
            }
        ]
    }
}

PROTECT_FILES = """\
#!/bin/bash
# protect-files.sh

INPUT=$(cat)
FILE_PATH=$(echo "$INPUT" | jq -r '.tool_input.file_path // empty')

# Normalize Windows backslash separators so the patterns below match
FILE_PATH="${FILE_PATH//\\\\//}"

PROTECTED_PATTERNS=(".env" "package-lock.json" ".git/")

for pattern in "${PROTECTED_PATTERNS[@]}"; do
  if [[ "$FILE_PATH" == *"$pattern"* ]]; then
    echo "Blocked: $FILE_PATH matches protected pattern '$pattern'" >&2
    exit 2
  fi
done

exit 0
"""

PROTECT_FILES_ENTRY = {
    "matcher": "Edit|Write",
    "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/protect-files.sh'}],
}

FORMAT_COMMAND = "jq -r '.tool_input.file_path' | xargs sed -i 's/[[:space:]]*$//'"

STOP_EVERYTHING = """\
#!/bin/bash
cat > /dev/null
echo '{ "continue": false, "stopReason": "Build failed, fix errors before continuing" }'
"""

PY_TO_PY3 = """\
#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
command = data["tool_input"].get("command", "")
if command.startswith("python "):
    updated = dict(data["tool_input"], command="python3 " + command[len("python "):])
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "python is python3 here",
            "updatedInput": updated,
        }
    }))
"""

SCRIPTS = {
    "block-rm.sh": BLOCK_RM,
    "protect-files.sh": PROTECT_FILES,
    "stop-everything.sh": STOP_EVERYTHING,
    "py-to-py3.py": PY_TO_PY3,
}


def write_claude_scripts(folder: Path) -> dict[str, str]:
    """The scripts in `folder`, executable as Claude Code requires; name -> absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, source in SCRIPTS.items():
        (folder / name).write_text(source)
        os.chmod(folder / name, 0o755)
        paths[name] = str(folder / name)
    return paths


def command_hook(command: str, **extra) -> dict:
    return {"type": "command", "command": command, **extra}


def write_settings(path: Path, hooks: dict, **extra) -> Path:
    """A Claude Code settings.json holding `hooks` (event -> matcher groups)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks, **extra}, indent=2))
    return path
