"""Text from the model, files or commands on its way to the terminal.

`neutralize` makes control characters visible instead of letting the terminal execute them:
an answer or a file holding `ESC ]0;title BEL` or `ESC [2J` must not retitle the window or
clear the screen. C0 controls become their Unicode "control pictures" (ESC → ␛), C1 controls
and the bidirectional overrides that can reorder what a line seems to say become `<U+XXXX>`.
Newlines and tabs stay. `escape` also escapes rich markup, so `[red]` is printed, not styled.
"""

from __future__ import annotations

_KEEP = "\n\t"
CONTROL_PICTURES = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in _KEEP}
CONTROL_PICTURES[0x7F] = "␡"
C1_CONTROLS = range(0x80, 0xA0)  # 0x9B alone is a CSI on some terminals
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))  # embeddings, overrides, isolates
_TABLE = str.maketrans({**CONTROL_PICTURES, **{c: f"<U+{c:04X}>" for c in (*C1_CONTROLS, *BIDI_CONTROLS)}})


def neutralize(text: str) -> str:
    """`text` with every terminal control character shown, none executed."""
    return text.translate(_TABLE)


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape  # rich is imported lazily (start-up time)

    return rich_escape(neutralize(text))
