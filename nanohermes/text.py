"""Byte-exact text cutting shared by every cap: clamp (keep the head) and head_tail (keep both ends)."""


def cut_utf8(data: bytes, end: int) -> int:
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
    end = cut_utf8(data, max_bytes)
    kept = data[:end].decode("utf-8", errors="replace")
    return f"{kept}\n… output truncated ({len(data) - end} bytes omitted)"


def fit_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of text whose UTF-8 fits max_bytes, cut on a character boundary."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[: cut_utf8(data, max(max_bytes, 0))].decode("utf-8", errors="surrogatepass")


def head_tail_text(text: str, max_chars: int, marker: str = "…[{n} chars cut]…", head_share: float = 2 / 3) -> str:
    """Keep the head and tail of text, max_chars in all, with `marker` ({n}: chars cut) between.
    Logs want a small head_share: their errors are at the end."""
    if len(text) <= max_chars:
        return text
    head = int(max_chars * head_share)
    tail = max_chars - head
    return text[:head] + marker.replace("{n}", f"{len(text) - head - tail:,}") + text[len(text) - tail :]
