"""recall: the way back to a full tool output that the model saw cut or replaced by a placeholder."""

from __future__ import annotations

from nanohermes.errors import ToolError
from nanohermes.text import fit_utf8
from nanohermes.tools import ToolContext, tool

DEFAULT_CHUNK_CHARS = 12_000  # well under one tool result's cap, so a chunk arrives whole
# A smaller limit is raised to this: Qwen2.5-Coder-1.5B asked for limit=1 (lines, as read_file
# counts them) and walked a 1,719-char output one character a call, 34 calls, until its time ran out.
MIN_CHUNK_CHARS = 1_000
NOTE_RESERVE_BYTES = 300  # header and continuation note must fit beside the chunk


@tool(
    params={
        "id": "",
        "offset": "",
        "limit": "",
    },
    read_only=True,
)
def recall(ctx: ToolContext, id: str, offset: int = 0, limit: int = DEFAULT_CHUNK_CHARS) -> str:
    """Full output of a call a truncation or placeholder note names."""
    full = ctx.outputs.get(id)
    if full is None:
        known = ", ".join(ctx.outputs.recent_ids(5)) or "none"
        raise ToolError(f"no stored output for tool call id {id!r} (recent ids with stored output: {known})")
    offset = max(0, offset)
    limit = max(MIN_CHUNK_CHARS, min(limit, DEFAULT_CHUNK_CHARS * 2))
    chunk = fit_utf8(full[offset : offset + limit], ctx.max_output - NOTE_RESERVE_BYTES)
    end = offset + len(chunk)
    header = f"recall {id} chars {offset}–{end} of {len(full)}"
    more = f"\n… {len(full) - end} more chars: recall id={id} offset={end}" if end < len(full) else ""
    return f"{header}\n{chunk}{more}"
