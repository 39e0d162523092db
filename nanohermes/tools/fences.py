"""A write_file content wrapped in a Markdown code fence, unwrapped (pure).

Small models often send a file's content as they would show it in a chat reply: ```` ```python ````
on the first line, ```` ``` ```` on the last. Written as sent, the file no longer runs (a
SyntaxError on line 1) and the model rarely sees why. Aider strips the fence in its whole-file
format for the same reason. Only the plain case is repaired: exactly one opening and one closing
fence line around everything else, in a file that is not prose (a Markdown file may well begin
with a fence). The result says that it was done.
"""

from __future__ import annotations

import re

PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc")
_OPENING = re.compile(r"\s*(```|~~~)[\w.+#-]*\s*")
_FENCE_LINE = re.compile(r"\s*(```|~~~)")


def unfenced(shown: str, content: str) -> tuple[str, str]:
    """(the content to write, a note for the result): the content without a fence wrapped around
    all of it, or the content unchanged and ''."""
    if shown.lower().endswith(PROSE_SUFFIXES):
        return content, ""
    lines = content.strip("\n").split("\n")
    if len(lines) < 3 or not _OPENING.fullmatch(lines[0]) or lines[-1].strip() != _OPENING.match(lines[0]).group(1):
        return content, ""
    inner = lines[1:-1]
    if any(_FENCE_LINE.match(line) for line in inner):  # fences inside: not one wrapped block
        return content, ""
    note = f"\nnote: the Markdown fence around the content ({lines[0].strip()} … {lines[-1].strip()}) was left out"
    return "\n".join(inner) + "\n", note
