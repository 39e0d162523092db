"""Pure: whether the configured model is among those a server lists (GET /models), the nearest
name it does serve and the words for a model it does not; and the base URL a user probably
meant when theirs answers like a web site.

A name missing from a listing of one model proves nothing: llama.cpp serves its one model under
any name. A server that lists several (Ollama, vLLM with several, LM Studio, OpenRouter, OpenAI)
refuses names it does not list, so there a missing name is worth saying before the first request.
"""

from __future__ import annotations

import difflib
from urllib.parse import urlsplit

# Ollama's implicit tag: `ollama run llama3.2` means llama3.2:latest, and its /v1 accepts both.
IMPLICIT_TAG = ":latest"
# difflib's ratio for "did you mean": 0.6 (its default) pairs gpt-4o-mini with gpt-4o and
# qwen2.5-coder with qwen2.5-coder:7b, but not unrelated names that share a few letters.
NEAR_MATCH_CUTOFF = 0.6
SHOWN_MODELS = 12  # a list longer than this (OpenRouter serves hundreds) is cut, with the count
CHAT_PATH = "/chat/completions"  # a base URL pasted with the endpoint's own path


def is_served(model: str, served: list[str]) -> bool:
    """The name is listed, exactly or with Ollama's implicit `:latest` tag."""
    return model in served or (":" not in model and model + IMPLICIT_TAG in served)


def near_match(model: str, served: list[str]) -> str | None:
    """The served name closest to `model` (case ignored), or None when none is close."""
    by_lower = {name.lower(): name for name in served}
    close = difflib.get_close_matches(model.lower(), list(by_lower), n=1, cutoff=NEAR_MATCH_CUTOFF)
    return by_lower[close[0]] if close else None


def unlisted_model(url: str, model: str, served: list[str]) -> str | None:
    """What to tell a user at start whose model a server listing several does not list, else None."""
    if len(served) < 2 or is_served(model, served):
        return None
    return wrong_model_message(url, model, served)


def wrong_model_message(url: str, model: str, served: list[str], said: str = "") -> str:
    """`The server at URL does not serve model 'x' (its words). It serves: a, b. Did you mean 'a'?`
    and how to pick another; without `said` (a refusal) only that it does not list it."""
    shown = ", ".join(served[:SHOWN_MODELS]) + (
        f" and {len(served) - SHOWN_MODELS} more" if len(served) > SHOWN_MODELS else ""
    )
    guess = near_match(model, served)
    parts = [
        f"The server at {url} does not serve model {model!r} ({said})."
        if said
        else f"The server at {url} does not list model {model!r}.",
        f"It serves: {shown}." if served else "It lists no models.",
        f"Did you mean {guess!r}?" if guess else "",
        "Pick one with --model or NANOHERMES_MODEL (in the REPL: /model NAME).",
    ]
    return " ".join(p for p in parts if p)


def base_url_guess(url: str) -> str | None:
    """The base URL the user probably meant: the same address ending in /v1 (where llama.cpp,
    vLLM, Ollama, LM Studio and OpenAI serve the API), without a pasted /chat/completions; None
    when it ends in /v1 already."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith(CHAT_PATH):
        path = path[: -len(CHAT_PATH)]
    if path.endswith("/v1") and path != parts.path.rstrip("/"):
        return parts._replace(path=path).geturl()
    if path.endswith("/v1"):
        return None
    return parts._replace(path=path + "/v1").geturl()


def base_url_question(url: str) -> str:
    """What to ask a user whose base URL answered like a web site, not the API."""
    guess = base_url_guess(url)
    return f"did you mean --base-url {guess}?" if guess else "is --base-url / OPENAI_BASE_URL the API's own address?"
