"""JSON and TOML from outside (a repository's files, a model server's stream, an editor's frames)
parsed with a bound on nesting.

Both of Python's parsers recurse once per level: `[[[[…` 100,000 deep raises RecursionError, which
no caller expects (a JSON or TOML error is a ValueError), so it ended runs with a traceback. Here
it is the parser's own error (json.JSONDecodeError, tomllib.TOMLDecodeError) that says the text
nests too deep, and every caller's existing handling of bad input applies. Size bounds stay with
each reader (it knows what a sane file of its kind holds).
"""

from __future__ import annotations

import json

TOO_DEEP = "nested too deep"


def parse_json(text: str | bytes, **options) -> object:
    """json.loads(text); json.JSONDecodeError (a ValueError) also for nesting past the recursion limit."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise json.JSONDecodeError(TOO_DEEP, doc[:100], 0) from None


def parse_toml(text: str) -> dict:
    """tomllib.loads(text); tomllib.TOMLDecodeError (a ValueError) also for nesting past the recursion limit."""
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(TOO_DEEP) from None
