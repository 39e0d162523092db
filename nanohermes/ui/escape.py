"""Text from the model, files or commands on its way to a rich console: markup escaped, so a
`[red]` in an answer is printed, not interpreted."""

from __future__ import annotations


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape  # rich is imported lazily (start-up time)

    return rich_escape(text)
