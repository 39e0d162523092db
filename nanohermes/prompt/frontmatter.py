"""Front matter: the `---` block of YAML at the top of a SKILL.md or a command file, as people write it.

Parsed with a real YAML parser (PyYAML's safe_load, imported on first use): Anthropic's own skills
write `description: |-` and `>` blocks, quoted values and keys NanoHermes does not know (ignored).
Files written for Claude Code's lenient reader hold lines YAML rejects (`argument-hint: [pr] [priority]`,
`description: Review: the diff`); such a line, and only such a line, is read as the plain text it
means (not one that opens a quote and never closes it: that is a mistake). Anything else that is
not YAML raises FrontMatterError with the parser's reason and line.

`split_front_matter` is pure text; `parse_front_matter` adds the YAML.
"""

from __future__ import annotations

import re

# A top-level `key: value` line of the block; only these are candidates for the lenient reading.
_TOP_LEVEL_LINE = re.compile(r"^([A-Za-z][\w-]*):[ \t]+(\S.*)$")


class FrontMatterError(ValueError):
    """The front matter is not YAML (or not a mapping); the message says why and where."""


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(the YAML between leading `---` lines, the body after them); (None, all of it) when the text
    opens with no `---` line or the block is never closed."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None, text.strip()
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]).strip()
    return None, text.strip()


def parse_front_matter(text: str) -> tuple[dict[str, object], str]:
    """(the front matter's keys, lower-cased, with their values; the body). Text without front
    matter is all body. FrontMatterError when the block is not a YAML mapping."""
    block, body = split_front_matter(text)
    if block is None or not block.strip():
        return {}, body
    meta = _load(block)
    if not isinstance(meta, dict):
        raise FrontMatterError(f"the front matter is a {type(meta).__name__}, not `key: value` lines")
    return {str(k).strip().lower(): v for k, v in meta.items()}, body


def _load(block: str) -> object:
    import yaml  # only when a file has front matter: start-up without skills or commands never pays for it

    try:
        return yaml.safe_load(block)
    except yaml.YAMLError as exc:
        lenient = _as_plain_text(block, yaml)
        if lenient != block:
            try:
                return yaml.safe_load(lenient)
            except yaml.YAMLError:
                pass
        raise FrontMatterError(_reason(exc)) from None


def _as_plain_text(block: str, yaml) -> str:
    """`block` with each top-level one-line value that YAML rejects on its own quoted as the text it
    is (Claude Code reads `argument-hint: [pr] [priority]` so)."""
    lines = []
    for line in block.splitlines():
        match = _TOP_LEVEL_LINE.match(line)
        quoted = match is not None and match.group(2)[0] in "\"'"  # a quote left open is a mistake, not text
        if match is not None and not quoted and not _loads_alone(match.group(2), yaml):
            value = match.group(2).rstrip().replace("'", "''")
            line = f"{match.group(1)}: '{value}'"
        lines.append(line)
    return "\n".join(lines)


def _loads_alone(value: str, yaml) -> bool:
    try:
        yaml.safe_load(f"k: {value}")
    except yaml.YAMLError:
        return False
    return True


def _reason(exc) -> str:
    """The parser's problem and the line of the file it is on (the block starts on line 2)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"front matter is not valid YAML: {problem}" + (f" (line {mark.line + 2})" if mark is not None else "")


def text_value(meta: dict[str, object], key: str) -> str:
    """A value as one line of text: a string's whitespace folded, a list's items joined, None as ""."""
    value = meta.get(key)
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(text_value({"v": item}, "v") for item in value)
    return " ".join(str(value).split())
