"""Byte-exact text cutting shared by every cap: clamp (keep the head) and head_tail (keep both
ends); the removal of a reasoning model's thinking; and `neutralize`: terminal control
characters shown, never executed (ui/escape.py says why)."""

import re
from collections.abc import Callable

# Reasoning models (qwen3, deepseek-r1 on local servers) put their thinking in the content; a
# reply cut by max_tokens may end inside an unclosed block.
_THINKING = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL)


def strip_thinking(text: str) -> str:
    """Text without <think>…</think> blocks (an unclosed one runs to the end)."""
    return _THINKING.sub("", text) if "<think>" in text else text


def cut_utf8(data: bytes, end: int) -> int:
    """Largest index <= end that does not split a UTF-8 character.

    At len(data) itself this also steps back over a trailing incomplete sequence (a capture
    may stop mid-character), so data[:cut_utf8(data, len(data))] always decodes whole."""
    end = max(0, min(end, len(data)))
    if end == len(data):
        for back in range(1, min(4, end) + 1):
            byte = data[end - back]
            if byte & 0xC0 != 0x80:  # ASCII or a lead byte: is its sequence complete?
                need = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                return end if back >= need else end - back
        return end
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return end


def start_utf8(data: bytes, start: int) -> int:
    """Smallest index >= start that does not fall inside a UTF-8 character."""
    start = max(0, min(start, len(data)))
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return start


def clamp_counted(text: str, max_bytes: int, hold: Callable[[str], int] | None = None) -> tuple[str, int]:
    """(text cut to max_bytes UTF-8 bytes on a character boundary with a note, bytes omitted).
    `hold(kept)`: how many chars at the end of what is kept to cut too (redact.Redactor.open_tail:
    the start of a secret, which a cut would leave where no redaction finds it)."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text, 0
    end = cut_utf8(data, max_bytes)
    kept = data[:end].decode("utf-8", errors="replace")
    omitted = len(data) - end
    if hold is not None and (held := hold(kept)):
        omitted += len(kept[-held:].encode("utf-8"))
        kept = kept[:-held]
    return f"{kept}\n… output truncated ({omitted} bytes omitted)", omitted


def clamp(text: str, max_bytes: int) -> str:
    """Keep at most max_bytes UTF-8 bytes of text, cut on a character boundary, with a note."""
    return clamp_counted(text, max_bytes)[0]


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


# Code points no UTF-8 encoder takes: a byte of an undecodable file name (os.fsdecode's
# surrogateescape turns 0xFF into U+DCFF) or a lone surrogate the model escaped in JSON (\ud800).
_SURROGATES = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)  # surrogateescape: byte 0x80-0xFF + 0xDC00


def _shown(match: re.Match) -> str:
    point = ord(match.group())
    return f"\\x{point - 0xDC00:02x}" if point in _ESCAPED_BYTES else "\ufffd"


def valid_unicode(text: str) -> str:
    """Text that encodes as UTF-8 everywhere (session file, request, terminal): a byte of an
    undecodable file name is shown escaped (`bad\\xffname.txt`), any other lone surrogate as
    U+FFFD. Text that is already valid comes back as it is."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub(_shown, text)


def valid_unicode_in(value):
    """valid_unicode over every string in a JSON-like value (keys too)."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {valid_unicode_in(k): valid_unicode_in(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_unicode_in(v) for v in value]
    return value


def split_budget(budget: int, a: int, b: int) -> tuple[int, int]:
    """Split budget between two texts (stdout and stderr): a short one keeps everything, the long one the rest."""
    if a + b <= budget:
        return a, b
    half = budget // 2
    if a <= half:
        return a, budget - a
    if b <= half:
        return budget - b, b
    return half, budget - half


# The head of the files a request names (prompt/mentions.py); a compaction finds them by it
# (context/placeholders.py: clear_attachment).
FILES_HEADER = "[NanoHermes attached the files this request names, as read_file shows them:]"
# How a read_file result that would repeat an attached file ends: it points back to the request.
POINTS_TO_ATTACHMENT = ": unchanged since it was attached to the user's request above, where its text is."


def with_attachment(text: str, block: str) -> str:
    """A message as the model reads it: its own text, then what travels with it (the files a
    request names, prompt/mentions.py), after a blank line."""
    return f"{text}\n\n{block}" if block else text


def own_words(content: str) -> str:
    """A user message without what travels with it: every attachment (files, a !command's output,
    piped text) starts with a bracketed header after a blank line. For previews, not the model."""
    return content.split("\n\n[", 1)[0]


_KEEP = "\n\t"
CONTROL_PICTURES = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in _KEEP}
CONTROL_PICTURES[0x7F] = "␡"
C1_CONTROLS = range(0x80, 0xA0)  # 0x9B alone is a CSI on some terminals
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))  # embeddings, overrides, isolates
_TABLE = str.maketrans({**CONTROL_PICTURES, **{c: f"<U+{c:04X}>" for c in (*C1_CONTROLS, *BIDI_CONTROLS)}})


def neutralize(text: str) -> str:
    """`text` with every terminal control character shown, none executed."""
    return text.translate(_TABLE)
