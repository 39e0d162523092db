"""Recordings of the real model (made by scripts/record_real_model.py) and their replay.

A recording is {"name", "exchanges": [...]}; an exchange has "method", "path", "request" (a
digest), "status", and either "stream" ({"envelope", "chunks"}: SSE chunks with the fields
every chunk of the stream shares stored once) or "body" (a plain JSON response).

Machine-specific paths (the temp workspace and home) are replaced by placeholders after a
recording is made. The model streams a path token by token, so a path usually spans several
chunks: the placeholder goes into the chunk where the path starts, and the other chunks of
that span keep only what is not the path. Chunk count and order stay as recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
WORKSPACE = "@WORKSPACE@"
HOME = "@HOME@"


def load(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))


def unpack_stream(stream: dict) -> list[dict]:
    """The chunks as the server sent them: each one's own fields, then the envelope fields
    it did not override."""
    return [{**chunk, **{k: v for k, v in stream["envelope"].items() if k not in chunk}} for chunk in stream["chunks"]]


# -- normalising a fresh recording -------------------------------------------------------------


def normalise(recording: dict, replacements: dict[str, str]) -> dict:
    """Replace each machine-specific string (key) by its placeholder (value), also where a
    streamed reply spreads it over several chunks."""
    for exchange in recording["exchanges"]:
        exchange["request"] = _replace_in_json(exchange.get("request"), replacements)
        if "body" in exchange:
            exchange["body"] = _replace_in_json(exchange["body"], replacements)
        if "stream" in exchange:
            for pieces in _stream_fields(exchange["stream"]["chunks"]):
                _replace_across(pieces, replacements)
    return recording


def normalise_file(name: str, replacements: dict[str, str]) -> Path:
    path = RECORDINGS / f"{name}.json"
    recording = normalise(load(name), replacements)
    lines = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in recording["exchanges"])
    path.write_text(f'{{"name":{json.dumps(name)},"exchanges":[\n{lines}\n]}}\n', encoding="utf-8")
    return path


def _replace_in_json(value, replacements: dict[str, str]):
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False)
    for old, new in replacements.items():
        text = text.replace(json.dumps(old)[1:-1], new)
    return json.loads(text)


class _Piece:
    """One string field of one chunk (a content delta or an arguments delta), writable."""

    def __init__(self, holder: dict, key: str):
        self.holder, self.key = holder, key

    @property
    def text(self) -> str:
        return self.holder[self.key]

    @text.setter
    def text(self, value: str) -> None:
        self.holder[self.key] = value


def _stream_fields(chunks: list[dict]) -> list[list[_Piece]]:
    """The pieces of the content and of each tool call's arguments, in stream order."""
    content: list[_Piece] = []
    arguments: dict[int, list[_Piece]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                content.append(_Piece(delta, "content"))
            for call in delta.get("tool_calls") or []:
                function = call.get("function") or {}
                if isinstance(function.get("arguments"), str):
                    arguments.setdefault(call.get("index", 0), []).append(_Piece(function, "arguments"))
    return [content, *arguments.values()]


def _replace_across(pieces: list[_Piece], replacements: dict[str, str]) -> None:
    for old, new in replacements.items():
        while True:
            whole = "".join(p.text for p in pieces)
            at = whole.find(old)
            if at < 0:
                break
            _splice(pieces, at, at + len(old), new)


def _splice(pieces: list[_Piece], start: int, end: int, new: str) -> None:
    """Replace whole[start:end] by `new`, written into the piece where the span starts."""
    offset, placed = 0, False
    for piece in pieces:
        text = piece.text
        lo, hi = offset, offset + len(text)
        offset = hi
        if hi <= start or lo >= end:
            continue
        keep_head = text[: max(0, start - lo)]
        keep_tail = text[max(0, end - lo) :] if end < hi else ""
        piece.text = keep_head + ("" if placed else new) + keep_tail
        placed = True


# -- replaying -----------------------------------------------------------------------------------


def replay_replies(recording: dict, workspace: Path, home: Path):
    """Scripted-server replies for every chat request in the recording, in order: streamed
    ones as RawSSE (verbatim chunks), plain JSON ones (the summariser's non-streaming request,
    errors) as a JSON body with the recorded status."""
    from tests.support.scripted_server import Error, RawSSE

    values = {WORKSPACE: str(workspace), HOME: str(home)}
    replies = []
    for exchange in chat_exchanges(recording):
        if "stream" in exchange:
            replies.append(RawSSE(_substitute(unpack_stream(exchange["stream"]), values)))
        else:
            replies.append(Error(exchange["status"], _substitute(exchange["body"], values)))
    return replies


def chat_exchanges(recording: dict) -> list[dict]:
    return [e for e in recording["exchanges"] if e["method"] == "POST" and e["path"].endswith("/chat/completions")]


def advertised_n_ctx(recording: dict) -> int | None:
    for exchange in recording["exchanges"]:
        if (
            exchange["method"] == "GET"
            and exchange["path"].endswith("/models")
            and isinstance(exchange.get("body"), dict)
        ):
            for model in exchange["body"].get("data") or []:
                n_ctx = (model.get("meta") or {}).get("n_ctx")
                if isinstance(n_ctx, int):
                    return n_ctx
    return None


def _substitute(value, values: dict[str, str]):
    if isinstance(value, str):
        for placeholder, real in values.items():
            value = value.replace(placeholder, real)
        return value
    if isinstance(value, list):
        return [_substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, values) for k, v in value.items()}
    return value
