"""Permission rules: `TOOL` or `TOOL:PATTERN`, allowed, asked or denied. Pure: text and calls in,
rules and verdicts out.

The pattern is a glob over what the call acts on, its subject: the command for run_command
(`run_command:pytest *`), the path as results show it for the file tools (`edit_file:src/**`,
`write_file:docs/*.md`), `server.tool` for MCP (`mcp:github.*`), the URL for web_fetch.
`*` matches any run of characters (in a path, not `/`; `**` crosses folders), `?` one
character, `\\` makes the next character literal; a command pattern ending in ` *` also matches
the bare command (`pytest *` covers `pytest`). `run_command(unsandboxed):PATTERN` is the same
over commands the model asked to run outside the sandbox.

Which rule decides: deny wins, then ask, then allow (then the mode, in loop/approvals.py).
- An allow rule with wildcards covers one simple command only (never `pytest; rm -rf ~`), and
  never one that names a path outside the workspace; a pattern without wildcards covers exactly
  that command, whatever it contains. A plain `run_command` allow rule covers commands inside
  the sandbox only: running outside it takes `run_command(unsandboxed)` (which covers both), so a
  rule written for sandboxed `pytest` never lets the model run pytest with the user's full rights.
- A deny or ask rule matches a command that contains a matching simple command anywhere:
  after `;`, `&&` or a pipe, behind a runner (`sudo rm …`), inside quotes (`bash -c 'rm …'`).
  A plain `run_command` deny or ask rule covers both kinds of run; `run_command(unsandboxed)`
  only runs outside the sandbox.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from nanohermes.permissions.shellwords import one_command, outside_paths, simple_commands

ALLOW, ASK, DENY = "allow", "ask", "deny"
EFFECTS = (DENY, ASK, ALLOW)  # the order they decide in
# What a pattern is matched against, per tool; a tool not named here takes no pattern.
SUBJECTS = {
    "run_command": "command",
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "mcp": "name",
    "web_fetch": "url",
}
PATH_TOOLS = frozenset(tool for tool, subject in SUBJECTS.items() if subject == "path")
UNSANDBOXED = "(unsandboxed)"
RULE_SHAPE = re.compile(r"(?P<tool>[A-Za-z_][A-Za-z0-9_]*)(?P<unsandboxed>\(unsandboxed\))?(?::(?P<pattern>.*))?", re.S)
EXAMPLES = "e.g. run_command:pytest *, edit_file:src/**, mcp:github.create_issue"


@dataclass(frozen=True)
class Rule:
    effect: str  # ALLOW | ASK | DENY
    tool: str
    pattern: str | None = None  # None: every call of the tool
    unsandboxed: bool = False  # run_command(unsandboxed): about runs outside the sandbox
    source: str = ""  # where it was read: config.toml, the project's file, the command line

    def text(self) -> str:
        """The rule as it is written."""
        qualifier = UNSANDBOXED if self.unsandboxed else ""
        return f"{self.tool}{qualifier}" + ("" if self.pattern is None else f":{self.pattern}")


@dataclass(frozen=True)
class Call:
    """A tool call as the rules see it. `shown_path`: a file tool's path as results show it;
    `resolve`: what an absolute path really names (approvals follows symlinks)."""

    tool: str
    args: dict
    shown_path: str | None = None
    workspace: str | None = None
    resolve: Callable[[str], str] = field(default=posixpath.normpath, compare=False)

    @property
    def unsandboxed(self) -> bool:
        return self.tool == "run_command" and bool(self.args.get("unsandboxed"))

    def subject(self) -> str | None:
        kind = SUBJECTS.get(self.tool)
        if kind == "path":
            return self.shown_path or _text(self.args.get("path"))
        return _text(self.args.get(kind)) if kind else None


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_rule(text: str, effect: str, source: str = "") -> Rule:
    """The rule `text` says, or ValueError saying what is wrong with it."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a rule: write it as a string, {EXAMPLES}")
    shape = RULE_SHAPE.fullmatch(text.strip())
    if shape is None:
        raise ValueError(f"{text!r} is not a rule: write TOOL or TOOL:PATTERN, {EXAMPLES}")
    tool, pattern = shape["tool"], shape["pattern"]
    if shape["unsandboxed"] and tool != "run_command":
        raise ValueError(f"{text!r}: only run_command takes (unsandboxed)")
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise ValueError(f"{text!r} has an empty pattern: leave out the ':' to mean every {tool} call")
        if tool not in SUBJECTS:
            takes = ", ".join(SUBJECTS)
            raise ValueError(f"{text!r}: {tool} takes no pattern (only {takes} do); write just {tool}")
    return Rule(effect, tool, pattern, bool(shape["unsandboxed"]), source)


def verdict(rules, call: Call) -> Rule | None:
    """The rule that decides this call: the first deny that matches, else ask, else allow."""
    for effect in EFFECTS:
        for rule in rules:
            if rule.effect == effect and matches(rule, call):
                return rule
    return None


def matches(rule: Rule, call: Call) -> bool:
    if rule.tool != call.tool:
        return False
    if rule.tool == "run_command":
        if call.unsandboxed and rule.effect == ALLOW and not rule.unsandboxed:
            return False  # a sandboxed allowance never lets a command leave the sandbox
        if rule.unsandboxed and not call.unsandboxed and rule.effect != ALLOW:
            return False  # a deny or ask about runs outside the sandbox leaves those inside alone
    if rule.pattern is None:
        return True
    subject = call.subject()
    if subject is None:
        return False
    if rule.tool == "run_command":
        return _command_matches(rule, subject, call)
    return bool(glob_regex(rule.pattern, path=rule.tool in PATH_TOOLS).fullmatch(_unslashed(subject, rule.tool)))


def _unslashed(subject: str, tool: str) -> str:
    return subject[2:] if tool in PATH_TOOLS and subject.startswith("./") else subject


def _command_matches(rule: Rule, command: str, call: Call) -> bool:
    if rule.effect == ALLOW:
        if not has_wildcards(rule.pattern):
            return command == unescape(rule.pattern)
        if one_command(command) is None or outside_paths(command, call.workspace, call.resolve):
            return False
        return bool(glob_regex(rule.pattern).fullmatch(command))
    regex = glob_regex(rule.pattern)
    return any(regex.fullmatch(piece) for piece in [command, *simple_commands(command)])


def glob_regex(pattern: str, *, path: bool = False) -> re.Pattern:
    """The regular expression of a rule's glob (the module says the syntax)."""
    if path and pattern.startswith("./"):
        pattern = pattern[2:]
    trailing_any = not path and pattern.endswith(" *") and not pattern.endswith("\\ *")
    body = pattern[:-2] if trailing_any else pattern
    out, i = [], 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
            continue
        if char == "*" and path and body[i : i + 3] == "**/":
            out.append("(?:.*/)?")
            i += 3
            continue
        if char == "*" and path and body[i : i + 2] == "**":
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*" if path else ".*", "?": "[^/]" if path else "."}.get(char, re.escape(char)))
        i += 1
    return re.compile("".join(out) + ("(?: .*)?" if trailing_any else ""), re.S)


def has_wildcards(pattern: str) -> bool:
    return bool(re.search(r"(?<!\\)(?:\\\\)*[*?]", pattern))


def unescape(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.S)


def escape(text: str) -> str:
    """`text` as a pattern that matches exactly it."""
    return re.sub(r"([\\*?])", r"\\\1", text)


def suggest_rule(call: Call) -> str:
    """The allow rule that would have allowed exactly this call (for `--allow` in a refusal)."""
    subject = call.subject()
    if subject is None or call.tool not in SUBJECTS:
        return call.tool
    qualifier = UNSANDBOXED if call.unsandboxed else ""
    return f"{call.tool}{qualifier}:{escape(subject)}"
