"""The line a write or an edit ends with when a language server finds new problems in the file
(ToolContext.diagnostics: lsp/ does the work). The change is made before it is asked: whatever the
check does, even a bug in it, the result is the change's and the call succeeds."""

from __future__ import annotations

from pathlib import Path

from nanohermes.tools import ToolContext

MADE = "the edit was made"  # lsp/problems.py's MADE: every note says first that the change stands


def diagnostics_note(ctx: ToolContext, target: Path, shown: str, before: str | None, after: str) -> str:
    """'' or the note (new problems, or why there are none) for the result's end."""
    if ctx.diagnostics is None:
        return ""
    try:
        return ctx.diagnostics.after_change(target, shown, before, after)
    except Exception as exc:  # a failed check must not read as a failed change
        return f"\n{MADE}; no diagnostics: the check failed ({type(exc).__name__}: {exc})"
