"""Text from the model, files or commands on its way to the terminal.

`neutralize` makes control characters visible instead of letting the terminal execute them
(it lives in text.py, so lower layers use it too: an MCP error the model reads): an answer or a
file holding `ESC ]0;title BEL` or `ESC [2J` must not retitle the window or clear the screen. C0
controls become their Unicode "control pictures" (ESC → ␛), C1 controls and the bidirectional
overrides that can reorder what a line seems to say become `<U+XXXX>`. Newlines and tabs stay.
`escape` also escapes rich markup, so `[red]` is printed, not styled.
"""

from __future__ import annotations

from nanohermes.text import neutralize

__all__ = ["escape", "neutralize"]


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape  # rich is imported lazily (start-up time)

    return rich_escape(neutralize(text))
