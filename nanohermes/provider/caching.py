"""Which prompt cache a request asks for, by the model's family. Pure.

Providers cache a prompt's prefix in three ways, and each needs something different:
- OpenAI models cache on their own, but spread one conversation's requests across machines
  unless a `prompt_cache_key` keeps them together: a key per session is sent.
- Anthropic models (also through OpenRouter or LiteLLM, which speak the OpenAI API) cache only
  up to content parts marked `cache_control`: the breakpoints (Provider._wire) are set.
- DeepSeek, llama.cpp, vLLM, Ollama reuse any byte-identical prefix: nothing is asked, the
  prefix is kept byte-stable (as for every provider).

The family is read from the model id (the name the server is asked for, so a gateway's
`anthropic/claude-…` counts), never from the base URL; config.toml's `cache_breakpoints` and
`prompt_cache_key` (true or false) override it either way.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from nanohermes.config import Config

# `claude-sonnet-4-5`, `anthropic/claude-3.5-sonnet`, `openrouter/anthropic/claude-…`, Bedrock's
# `anthropic.claude-…`: "claude-" at the start of the id or after a `/`, `.` or `:`.
ANTHROPIC_FAMILY = re.compile(r"(?:^|[/.:])claude-", re.IGNORECASE)
# `gpt-4o-mini`, `o3`, `o4-mini`, `chatgpt-4o-latest`, `codex-mini`, and `openai/…` of a gateway; not
# the open-weights `gpt-oss-…`, which local servers run (OpenAI does not serve it).
OPENAI_FAMILY = re.compile(r"^(?:openai/)?(?:gpt-(?!oss)|chatgpt-|codex-|o\d(?:$|-))", re.IGNORECASE)
CACHE_KEY_PREFIX = "nanohermes-"  # a key says whose it is in a provider's logs; the rest is a hash


def is_anthropic_family(model: str) -> bool:
    return bool(ANTHROPIC_FAMILY.search(model))


def is_openai_family(model: str) -> bool:
    return bool(OPENAI_FAMILY.match(model))


def wants_breakpoints(config: Config, model: str) -> bool:
    """Mark cache breakpoints: the setting when given, else for Anthropic-family ids."""
    return is_anthropic_family(model) if config.cache_breakpoints is None else config.cache_breakpoints


def wants_cache_key(config: Config, model: str) -> bool:
    """Send `prompt_cache_key`: the setting when given, else for OpenAI-family ids."""
    return is_openai_family(model) if config.prompt_cache_key is None else config.prompt_cache_key


def session_cache_key(session_path: str) -> str:
    """One key per session, the same after a resume: a hash of the session file's path (the
    session's name and where it lives, which nothing else needs to learn)."""
    return CACHE_KEY_PREFIX + hashlib.sha256(session_path.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def new_cache_key() -> str:
    """A key for a Provider no session named (a helper check, a test): random, so never shared."""
    return CACHE_KEY_PREFIX + secrets.token_hex(12)
