"""The context window a server says it will use, read from what it answers. Pure: answers in,
a LearnedWindow out (provider/__init__.py asks the questions).

- llama.cpp's GET /v1/models has data[].meta.n_ctx, vLLM's data[].max_model_len.
- Ollama says nothing in /v1/models, and cuts a longer prompt silently at the context it loaded
  the model with. That context is the running model's `context_length` in GET /api/ps (Ollama
  0.9.7 and later); else a Modelfile's `num_ctx` (POST /api/show `parameters`); else the
  server's default (OLLAMA_CONTEXT_LENGTH, else 2,048 before 0.6.7, 4,096 since, and by VRAM
  from 0.15.5: 4K under 24 GiB, 32K, 256K).
  /api/show's model_info["<arch>.context_length"] is what the model was trained for: the most
  Ollama will ever use. Its OpenAI-compatible /v1/chat/completions cannot ask for more: the
  request has no field for it (openai/openai.go ChatCompletionRequest; unknown fields such as
  `options` or `num_ctx` are dropped) and its docs say so ("The OpenAI API does not have a way
  of setting the context size for a model", docs/api/openai-compatibility.mdx). Only the server
  side can: OLLAMA_CONTEXT_LENGTH, or PARAMETER num_ctx in a Modelfile.
- LM Studio's GET /api/v0/models/{model} has `loaded_context_length` once loaded and
  `max_context_length` (the model's own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Ollama did not say what it loads the model with: assume its smallest default since 0.6.7
# (4,096 on machines under 24 GiB of VRAM). A larger guess would let it cut prompts silently.
OLLAMA_ASSUMED_CONTEXT = 4_096
# What the fix suggests when the model can take more: enough for an agent's working set, and a
# KV cache most machines that run a local model can hold. The model's own limit when smaller.
SUGGESTED_CONTEXT = 32_768

_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class LearnedWindow:
    tokens: int  # what the server will really use
    source: str  # where that came from, as `doctor` says it
    server: str = ""  # "Ollama" or "LM Studio" when their own API said it
    trained: int | None = None  # the model's own maximum, when the server says it
    fix: str = ""  # how to give the model more, when it could take more than it gets


def api_root(base_url: str) -> str:
    """The server's root for its own API: the OpenAI-compatible base without its /v1."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def window_from_listing(models: list[dict], model: str) -> LearnedWindow | None:
    """llama.cpp's data[].meta.n_ctx or vLLM's data[].max_model_len, the configured model's
    entry first; most other servers say nothing here."""
    for entry in sorted(models, key=lambda m: m.get("id") != model):
        for value in ((entry.get("meta") or {}).get("n_ctx"), entry.get("max_model_len")):
            if _positive(value):
                return LearnedWindow(value, "advertised by the server")
    return None


def is_ollama(version) -> bool:
    """GET /api/version answers {"version": "0.12.6"} on Ollama."""
    return isinstance(version, dict) and isinstance(version.get("version"), str)


def ollama_loaded_context(ps, model: str) -> int | None:
    """The context the running model was loaded with (GET /api/ps), if it is running and the
    server is recent enough to say."""
    entries = ps.get("models") if isinstance(ps, dict) else None
    names = {model, model if ":" in model else f"{model}:latest"}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and names & {entry.get("name"), entry.get("model")}:
            value = entry.get("context_length")
            return value if _positive(value) else None
    return None


def ollama_window(show, loaded: int | None) -> LearnedWindow:
    """What Ollama will use for the model: the loaded context, else the Modelfile's num_ctx,
    else its smallest default; never more than the model was trained for."""
    trained = _trained_context(show)
    configured = _modelfile_num_ctx(show)
    if loaded:
        tokens, source = loaded, "Ollama's loaded model, GET /api/ps"
    elif configured:
        tokens, source = configured, "num_ctx in the model's Modelfile, POST /api/show"
    else:
        tokens, source = OLLAMA_ASSUMED_CONTEXT, "assumed: Ollama's smallest default; it did not say what it loads with"
    if trained and trained < tokens:
        tokens, source = trained, "the model's own limit, POST /api/show"
    fix = ""
    if trained and tokens < trained:
        more = min(trained, SUGGESTED_CONTEXT)
        fix = (
            "Ollama cuts longer prompts silently, and its OpenAI-compatible API cannot ask for a larger "
            f"context: start it with OLLAMA_CONTEXT_LENGTH={more} ollama serve, or create the model with "
            f"PARAMETER num_ctx {more} in its Modelfile (ollama create); then set context_window = {more}"
        )
    return LearnedWindow(tokens, source, "Ollama", trained, fix)


def lmstudio_window(info) -> LearnedWindow | None:
    """LM Studio's loaded context, else the model's maximum (it is loaded on the first request)."""
    if not isinstance(info, dict):
        return None
    trained = info.get("max_context_length")
    trained = trained if _positive(trained) else None
    loaded = info.get("loaded_context_length")
    if _positive(loaded):
        tokens, source = loaded, "LM Studio's loaded model, GET /api/v0/models"
    elif trained:
        tokens, source = trained, "the model's maximum, GET /api/v0/models; not loaded yet"
    else:
        return None
    fix = ""
    if trained and tokens < trained:
        more = min(trained, SUGGESTED_CONTEXT)
        fix = f"load the model with a larger context in LM Studio (lms load <model> --context-length {more})"
    return LearnedWindow(tokens, source, "LM Studio", trained, fix)


def _trained_context(show) -> int | None:
    info = show.get("model_info") if isinstance(show, dict) else None
    if not isinstance(info, dict):
        return None
    value = info.get(f"{info.get('general.architecture')}.context_length")
    if not _positive(value):  # an architecture key spelled otherwise: the one context length there is
        lengths = [v for k, v in info.items() if k.endswith(".context_length") and _positive(v)]
        value = lengths[0] if len(lengths) == 1 else None
    return value


def _modelfile_num_ctx(show) -> int | None:
    parameters = show.get("parameters") if isinstance(show, dict) else None
    found = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    return int(found.group(1)) if found and int(found.group(1)) > 0 else None


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
