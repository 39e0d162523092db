"""Byte-exact text cutting shared by every cap: clamp (keep the head) and head_tail (keep both ends)."""


def _cut_utf8(data: bytes, end: int) -> int:
    """Largest index <= end that does not split a UTF-8 character."""
    end = max(0, min(end, len(data)))
    while 0 < end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    return end


def clamp(text: str, max_bytes: int) -> str:
    """Keep at most max_bytes UTF-8 bytes of text, cut on a character boundary, with a note."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    end = _cut_utf8(data, max_bytes)
    kept = data[:end].decode("utf-8", errors="replace")
    return f"{kept}\n… output truncated ({len(data) - end} bytes omitted)"


def head_tail(data: bytes, max_bytes: int, note: str) -> tuple[bytes, int]:
    """Keep the first and last parts of data within max_bytes, with `note` (formatted with the
    omitted byte count as {n}) between them. Returns (result, omitted)."""
    if len(data) <= max_bytes:
        return data, 0
    head_end = _cut_utf8(data, max_bytes * 2 // 5)  # errors live at the end: give the tail more
    tail_start = len(data) - (max_bytes - head_end)
    while tail_start < len(data) and (data[tail_start] & 0xC0) == 0x80:
        tail_start += 1
    omitted = tail_start - head_end
    middle = ("\n" + note.format(n=omitted) + "\n").encode()
    return data[:head_end] + middle + data[tail_start:], omitted


def head_tail_text(text: str, max_chars: int, marker: str = "…[{n} chars cut]…") -> str:
    """Character version of head_tail for summaries and previews."""
    if len(text) <= max_chars:
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    return text[:head] + marker.format(n=len(text) - head - tail) + text[-tail:]
