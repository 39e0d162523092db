"""A Python file that a write or an edit left unparseable, said in the tool's result (pure).

Qwen2.5-Coder-1.5B on held-out exercises often wrote a file with an unclosed bracket or an
indentation slip, then ran the tests, read a traceback that pointed elsewhere, and edited around
it. Aider lints every file it edits and hands the error back; this is the part of that which
needs nothing installed: the file is parsed (never run) with the interpreter's own parser. Only
a change from parsing to not parsing is said: a file that did not parse before (another Python's
syntax, a template) is left alone, so the note is never noise the model must argue with.
"""

from __future__ import annotations

import ast
import sys
import warnings

PYTHON_SUFFIXES = (".py", ".pyi")
MAX_PARSED_CHARS = 1_000_000  # a generated file this big is not worth parsing on every edit
SHOWN_LINE_CHARS = 160  # the offending line as the note quotes it


def syntax_note(shown: str, before: str | None, after: str) -> str:
    """A line for the result when `after` no longer parses as Python and `before` did (or was
    absent); else ''. `shown` is the path as the model sees it."""
    if not shown.endswith(PYTHON_SUFFIXES) or len(after) > MAX_PARSED_CHARS:
        return ""
    error = _parse_error(after)
    if error is None or (before is not None and _parse_error(before) is not None):
        return ""
    where = f"line {error.lineno}" if error.lineno else "somewhere"
    line = (error.text or "").strip()[:SHOWN_LINE_CHARS]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    quoted = f"\n  {error.lineno} | {line}" if line and error.lineno else ""
    return f"\nwarning: {shown} no longer parses as Python {version}: {error.msg} ({where}){quoted}"


def _parse_error(source: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():  # invalid escape sequences and the like are not errors
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting: not a verdict
        return None
    return None
