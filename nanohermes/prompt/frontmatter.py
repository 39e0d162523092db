"""Front matter: the `---` block of YAML at the top of a SKILL.md or a command file, as people write it.

Parsed with a real YAML parser (PyYAML's safe_load, imported on first use): Anthropic's own skills
write `description: |-` and `>` blocks, quoted values and keys NanoHermes does not know (ignored).
Files written for Claude Code's lenient reader hold lines YAML rejects (`argument-hint: [pr] [priority]`,
`description: Review: the diff`); such a line, and only such a line, is read as the plain text it
means (not one that opens a quote and never closes it: that is a mistake). Anything else that is
not YAML raises FrontMatterError with the parser's reason and line.

Front matter comes from cloned repositories, so the parse is bounded: its size, how deep it nests and
how many values it holds once YAML's aliases are expanded (an anchor bomb: nine anchors of nine
aliases each is 9^9 values when a description is made text of it; a block nested 100,000 deep
overflows the parser's recursion). Past a bound the file fails at once with FrontMatterError, and
the skill or command is skipped with a warning naming the file — never a hang or a traceback.

`split_front_matter` is pure text; `parse_front_matter` adds the YAML.
"""

from __future__ import annotations

import functools
import re

# A top-level `key: value` line of the block; only these are candidates for the lenient reading.
_TOP_LEVEL_LINE = re.compile(r"^([A-Za-z][\w-]*):[ \t]+(\S.*)$")
# Bounds, far above any real front matter (Anthropic's skills: ~1 KB, two levels, a few values):
MAX_FRONT_MATTER_CHARS = 64_000
MAX_DEPTH = 32  # nesting levels of lists and mappings
MAX_VALUES = 10_000  # values once aliases are expanded (each alias counts what it stands for)


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
    if len(block) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(f"the front matter is over {MAX_FRONT_MATTER_CHARS:,} characters; it holds a few keys")
    meta = _load(block)
    if not isinstance(meta, dict):
        raise FrontMatterError(f"the front matter is a {type(meta).__name__}, not `key: value` lines")
    return {str(k).strip().lower(): v for k, v in meta.items()}, body


def unclosed_front_matter(text: str) -> bool:
    """The text opens a front matter block (a first `---` line) that no `---` line closes."""
    lines = text.lstrip("\ufeff").splitlines()
    return bool(lines) and lines[0].strip() == "---" and split_front_matter(text)[0] is None


def _load(block: str) -> object:
    import yaml  # only when a file has front matter: start-up without skills or commands never pays for it

    try:
        return _bounded_load(block, yaml)
    except yaml.YAMLError as exc:
        lenient = _as_plain_text(block, yaml)
        if lenient != block:
            try:
                return _bounded_load(lenient, yaml)
            except yaml.YAMLError:
                pass
        raise FrontMatterError(_reason(exc)) from None


def _bounded_load(text: str, yaml) -> object:
    """yaml.safe_load within MAX_DEPTH and MAX_VALUES (FrontMatterError past either)."""
    loader = _bounded_loader(yaml)(text)
    try:
        return loader.get_single_data()
    except RecursionError:  # a bound above should come first; never a traceback whatever the input
        raise FrontMatterError(f"the front matter nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


@functools.cache
def _bounded_loader(yaml) -> type:
    """PyYAML's SafeLoader, counting as it composes: the depth of each node and the values it stands
    for with aliases expanded (an alias is the node it names: counted again each time it is used)."""

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream):
            super().__init__(stream)
            self.depth, self.sizes = 0, {}

        def compose_node(self, parent, index):
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise FrontMatterError(f"the front matter nests deeper than {MAX_DEPTH} levels")
                node = super().compose_node(parent, index)
            finally:
                self.depth -= 1
            size = self.sizes.get(id(node))
            if size is None:
                size = self.sizes[id(node)] = 1 + sum(self.sizes.get(id(child), 1) for child in _children(node))
            if size > MAX_VALUES:
                raise FrontMatterError(
                    f"the front matter holds over {MAX_VALUES:,} values once its YAML aliases are expanded "
                    "(an alias bomb?)"
                )
            return node

    return BoundedLoader


def _children(node) -> list:
    value = node.value
    if isinstance(value, list):
        return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]
    return []


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
        _bounded_load(f"k: {value}", yaml)
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
