"""The OpenAI-compatible adapter: streaming with tool-call deltas, retries by a policy table.

The HTTP itself is client.py's (httpx2, imported on the first request, never at start-up).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import quote

from nanohermes.config import Config
from nanohermes.context.images import IMAGES, on_the_wire
from nanohermes.errors import ContextOverflowError, NanoHermesError, ProviderError
from nanohermes.provider.caching import new_cache_key, wants_breakpoints, wants_cache_key
from nanohermes.provider.client import APIError, Client
from nanohermes.provider.retry import RETRY_POLICY, backoff_delay, classify, retry_limit
from nanohermes.provider.served import base_url_guess, base_url_question, is_served, wrong_model_message
from nanohermes.provider.sse import EventStream, NotTheAPI, describe_body, is_web_page
from nanohermes.provider.stream import AssistantTurn, StreamCut, assemble_stream, text_of
from nanohermes.provider.vision import (
    LearnedVision,
    vision_from_listing,
    vision_from_lmstudio,
    vision_from_ollama,
    vision_from_props,
)
from nanohermes.provider.watch import ReplyWatch
from nanohermes.provider.window import (
    LearnedWindow,
    api_root,
    is_ollama,
    lmstudio_window,
    ollama_loaded_context,
    ollama_window,
    window_from_listing,
)
from nanohermes.redact import Redactor, StreamGuard
from nanohermes.synthetic import untagged

__all__ = ["RETRY_POLICY", "AssistantTurn", "NotTheAPI", "Provider", "StreamCut", "assemble_stream", "classify"]

# Opening a connection takes milliseconds when the server is up; a host that swallows packets
# would otherwise hold the first request for the whole request_timeout (600 s).
CONNECT_TIMEOUT_S = 10.0
# GET /models needs no inference: a server that takes longer is not going to tell the window,
# and the first turn must not wait request_timeout (600 s) for it.
MODELS_TIMEOUT_S = 10.0
# Ollama loads a model not running yet to say what context it runs with; the first request would
# wait for the load anyway. A load slower than this leaves the window assumed (provider/window.py).
OLLAMA_LOAD_TIMEOUT_S = 120.0
# What a refused request that carried an image adds: the image stays in the history, so every
# later request would be refused too until it goes.
IMAGE_REFUSED = (
    "The request carried an image: if the model takes none, set vision = false in config.toml, and /rewind "
    "(or -p --rewind) to before the request that sent it."
)


class CallerFailed(Exception):
    """Raised from the caller's own callback (on_text: a renderer, a closed stdout): not the
    provider's failure, so never classified or retried; the original goes up unchanged."""


def _guarded(on_text: Callable[[str], None]) -> Callable[[str], None]:
    def call(text: str) -> None:
        try:
            on_text(text)
        except Exception as exc:
            raise CallerFailed() from exc

    return call


def _shown(guard: StreamGuard, show: Callable[[str], None]) -> Callable[[str], None]:
    """A reply's pieces as they may be shown: never one that completes a secret."""

    def call(text: str) -> None:
        if shown := guard.feed(text):
            show(shown)

    return call


class Provider:
    """One OpenAI-compatible endpoint. `on_retry(text)` reports each retry to the user.

    The edge to the model and back: every message sent is redacted (the system message's
    guidance and file names, memory blocks, summaries: whatever assembled it), and so is the
    reply's text, as it streams and whole (redact.py)."""

    def __init__(
        self,
        config: Config,
        on_retry: Callable[[str], None] | None = None,
        sleep=time.sleep,
        on_wait: Callable[[str], None] | None = None,
        redactor: Redactor | None = None,
        cache_key: str | None = None,
        images=None,
    ):
        """`on_wait(text)`: the server has not answered yet (said from the watch's thread);
        `redactor`: the session's secrets (None: the config's and the environment's);
        `cache_key`: the session's `prompt_cache_key` (None: one for this Provider's life);
        `images`: where the conversation's images are kept (storage/images.py's ImageStore), read
        as a request is sent (None: a message's image is sent as a line saying it is gone)."""
        self.config, self.images = config, images
        self._vision: dict[str, LearnedVision | None] = {}  # per model: what the server said, asked once
        self.cache_key = cache_key or new_cache_key()
        self.redactor = Redactor.for_config(config) if redactor is None else redactor
        self.on_retry = on_retry or (lambda text: None)
        self.on_wait = on_wait or self.on_retry
        self._sleep = sleep
        self._client = None

    @property
    def client(self) -> Client:
        if self._client is None:
            timeout = self.config.request_timeout
            self._client = Client(
                self.config.effective_base_url,
                self.config.resolved_api_key(),
                timeout,
                connect=min(CONNECT_TIMEOUT_S, timeout),
            )
        return self._client

    def _with_retries(
        self, request: Callable[[], object], retries: int | None = None, on_restart=None, model: str | None = None
    ):
        """Run `request`, retrying as RETRY_POLICY says for the kind of failure (at most
        `retries`, or the configured max_retries). `model`: the chat request's model, which a
        final error names with the served ones when the server says it does not know it."""
        configured = self.config.max_retries if retries is None else min(retries, self.config.max_retries)
        attempt = 0
        while True:
            if attempt and on_restart is not None:
                on_restart()
            try:
                return request()
            except Exception as exc:
                if isinstance(exc, CallerFailed):
                    raise exc.__cause__ from None
                if isinstance(exc, (NanoHermesError, TypeError, AttributeError, UnicodeError)):  # ours, or a bug
                    raise
                kind, info = classify(exc, self.redactor.text)  # the server may echo the key back
                rule = RETRY_POLICY[kind]
                limit = retry_limit(rule, configured)
                if attempt >= limit:
                    raise self._error(kind, info, model) from None
                delay = backoff_delay(attempt, info["retry_after"], rule)
                why = info["status"] or info["detail"][:60]
                said = rule.said or kind.replace("_", " ")
                self.on_retry(f"{said} ({why}); retry {attempt + 1}/{limit} in {delay:.1f}s")
                self._sleep(delay)
                attempt += 1

    def _error(self, kind: str, info: dict, model: str | None = None) -> ProviderError:
        url = self.config.effective_base_url
        if model is not None and (unknown := self._unknown_model(kind, info, model)) is not None:
            return ProviderError(unknown, kind=kind, info=info)
        if kind == "not_found" and (moved := self.api_with_v1()) is not None:
            info["api_at"] = moved  # the address is what is wrong, not the model (doctor, the REPL's check)
            said = f" ({info['detail']})" if info["detail"] else ""
            return ProviderError(
                f"The server at {url} answered HTTP 404{said}, but its API is at {moved}: add /v1 "
                f"(--base-url {moved}, or OPENAI_BASE_URL).",
                kind=kind,
                info=info,
            )
        advice = RETRY_POLICY[kind].advice
        text = advice.format(url=url, model=self.config.model, ask=base_url_question(url), **info)
        if "{detail}" not in advice and info["detail"] and kind != "timeout":
            text += f" The server said: {info['detail']}"  # its own words, whatever the kind
        text = self.redactor.text(text)  # a base URL may carry a password too
        if kind == "overflow":
            return ContextOverflowError(text, n_ctx=info["n_ctx"], n_prompt=info["n_prompt"], kind=kind, info=info)
        return ProviderError(text, kind=kind, info=info)

    def _unknown_model(self, kind: str, info: dict, model: str) -> str | None:
        """For a chat request refused as not found (404), or as bad with the model's name in the
        server's words (OpenRouter, LM Studio: 400): the served models, when the server lists
        them and `model` is not among them; else None (the address may be wrong instead)."""
        if kind != "not_found" and not (kind == "bad_request" and model in info["detail"]):
            return None
        served = self.served_models()
        if served is None or is_served(model, served):
            return None
        said = f"HTTP {info['status']}: {info['detail']}" if info["detail"] else f"HTTP {info['status']}"
        info["served"] = served  # the error is about the model (doctor, the REPL's check)
        return wrong_model_message(self.config.effective_base_url, model, served, said)

    def api_with_v1(self) -> str | None:
        """The base URL ending in /v1 whose GET /models lists models, when this one lacks /v1 (a
        vLLM or FastAPI server answers a JSON 404 without it: `{"detail": "Not Found"}`); else None."""
        guess = base_url_guess(self.config.effective_base_url)
        if guess is None:
            return None
        try:
            body = self._client_for(guess, self.config.resolved_api_key()).json("GET", "models")
        except (APIError, ValueError):
            return None
        return guess if isinstance(body, dict) and isinstance(body.get("data"), list) else None

    def models_public(self) -> bool:
        """Whether GET /models answers without a key (OpenRouter's listing is public): then its
        answer proves nothing about the key."""
        try:
            self._client_for(self.config.effective_base_url, "").request("GET", "models")
        except (APIError, ValueError):
            return False
        return True

    def _client_for(self, base_url: str, api_key: str) -> Client:
        """A client for one GET /models elsewhere, bounded as the listing is."""
        timeout = min(MODELS_TIMEOUT_S, self.config.request_timeout)
        return Client(base_url, api_key, timeout, connect=min(CONNECT_TIMEOUT_S, timeout))

    def served_models(self) -> list[str] | None:
        """The ids GET /models lists, or None when it lists nothing usable (fails, or is empty)."""
        try:
            served = [str(m["id"]) for m in self.list_models() if m.get("id")]
        except (ProviderError, ValueError):
            return None
        return served or None

    def stream_chat(
        self,
        messages: list[dict],
        tools: list[dict],
        on_text: Callable[[str], None],
        *,
        max_tokens: int,
        on_restart: Callable[[], None] | None = None,
        temperature: float | None = None,
        retries: int | None = None,
        model: str | None = None,
        tool_choice: str | None = None,
    ) -> AssistantTurn:
        """Send one streaming request; assemble text and tool calls; return the whole turn.
        `on_restart` is called before a retry streams the reply again from the start.
        `temperature` and `model` None mean the configured ones; `tool_choice` "none" offers
        the tools (the prompt stays the conversation's) but asks for text."""

        chosen_model = model or self.config.model

        def request():
            body = dict(
                model=chosen_model,
                messages=self._wire(messages, chosen_model),
                stream=True,
                stream_options={"include_usage": True},
                max_tokens=max_tokens,
            )
            if tools:
                body["tools"] = tools
                if tool_choice:
                    body["tool_choice"] = tool_choice
            chosen = self.config.temperature if temperature is None else temperature
            if chosen is not None:
                body["temperature"] = chosen
            if wants_cache_key(self.config, chosen_model):  # provider/caching.py: OpenAI's cache routing
                body["prompt_cache_key"] = self.cache_key
            guard, show = StreamGuard(self.redactor), _guarded(on_text)  # each attempt streams from the start
            watch = ReplyWatch(self.config.request_timeout, self.config.slow_reply_notice, self.on_wait)
            with watch, self.client.stream("chat/completions", body) as response:
                turn = assemble_stream(EventStream(response), _shown(guard, show), watch)
            if rest := guard.flush():
                show(rest)
            return replace(turn, content=self.redactor.text(turn.content))

        try:
            return self._with_retries(request, retries, on_restart=on_restart, model=chosen_model)
        except ProviderError as exc:
            if exc.kind == "bad_request" and any(IMAGES in m for m in messages):  # the server refused the image
                raise ProviderError(f"{exc} {IMAGE_REFUSED}", kind=exc.kind, info=exc.info) from None
            raise

    def _wire(self, messages: list[dict], model: str) -> list[dict]:
        """The messages as the API takes them. With cache breakpoints (Anthropic models, also through
        OpenRouter or LiteLLM, which cache only at marked content parts; provider/caching.py): the
        system message and the latest message become content parts marked `cache_control`, so the
        stable prefix and everything up to the newest message are cached. The working set itself
        is never changed."""
        messages = [self.redactor.message(untagged(m)) for m in messages]  # the loop's tags are not the API's
        messages = on_the_wire(messages, self._data_url)  # images as content parts (context/images.py)
        if not wants_breakpoints(self.config, model) or not messages:
            return messages
        marked = list(messages)
        for i in dict.fromkeys((0, len(messages) - 1)):
            message, mark = messages[i], {"cache_control": {"type": "ephemeral"}}
            content = message.get("content")
            if isinstance(content, list) and content:  # text and images: the last part marked
                marked[i] = {**message, "content": [*content[:-1], {**content[-1], **mark}]}
            elif text := text_of(content):
                marked[i] = {**message, "content": [{"type": "text", "text": text, **mark}]}
        return marked

    def _data_url(self, ref: str, mime: str) -> str | None:
        return self.images.data_url(ref, mime) if self.images is not None else None

    def list_models(self) -> list[dict]:
        """GET /models, once, without retries: the entries as the server sent them (extra
        fields such as llama.cpp's `meta` kept). ProviderError with the failure's kind."""

        def request():
            response = self.client.request("GET", "models", timeout=MODELS_TIMEOUT_S)
            try:
                body = response.json()
            except ValueError:  # a web page or plain text where the API should be
                content_type, head = response.headers.get("content-type", ""), response.content[:2048]
                raise NotTheAPI(describe_body(content_type, head), is_web_page(content_type, head)) from None
            data = body.get("data") if isinstance(body, dict) else None
            return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

        return self._with_retries(request, retries=0)

    def advertised_context_window(self) -> int | None:
        """The window the server says it will use, in tokens (learn_window), or None."""
        learned = self.learn_window()
        return learned.tokens if learned else None

    def learn_window(self) -> LearnedWindow | None:
        """The window the server will use and where that came from (provider/window.py): GET
        /models (llama.cpp, vLLM); else Ollama's own API, found by GET /api/version answering;
        else LM Studio's GET /api/v0/models/{model}. None when no answer says it."""
        try:
            data = self.list_models()
        except (ProviderError, ValueError):  # no usable listing: the server is not answering
            return None
        learned = window_from_listing(data, self.config.model)
        if learned is not None:
            return learned
        root, model = api_root(self.config.effective_base_url), self.config.model
        if is_ollama(self._native_api("GET", f"{root}/api/version")):
            show = self._native_api("POST", f"{root}/api/show", {"model": model})
            return ollama_window(show, self._ollama_loaded_context(root, model))
        return lmstudio_window(self._native_api("GET", f"{root}/api/v0/models/{quote(model, safe='/:@')}"))

    def learn_vision(self) -> LearnedVision | None:
        """Whether the configured model takes images, as the server says (provider/vision.py), asked
        once per model: GET /models (a gateway's input_modalities), llama.cpp's GET /props (a
        projector loaded), Ollama's POST /api/show (capabilities), LM Studio's model type. None
        when no answer says it."""
        model = self.config.model
        if model not in self._vision:
            self._vision[model] = self._ask_vision(model)
        return self._vision[model]

    def _ask_vision(self, model: str) -> LearnedVision | None:
        try:
            listing = self.list_models()
        except (ProviderError, ValueError):
            listing = []
        root = api_root(self.config.effective_base_url)
        learned = vision_from_listing(listing, model) or vision_from_props(self._native_api("GET", f"{root}/props"))
        if learned is not None:
            return learned
        if is_ollama(self._native_api("GET", f"{root}/api/version")):
            return vision_from_ollama(self._native_api("POST", f"{root}/api/show", {"model": model}))
        return vision_from_lmstudio(self._native_api("GET", f"{root}/api/v0/models/{quote(model, safe='/:@')}"))

    def _ollama_loaded_context(self, root: str, model: str) -> int | None:
        """The context the model runs with; a model not running yet is loaded first, as the first
        request would load it (an empty /api/generate loads with the options /v1 requests use)."""
        loaded = ollama_loaded_context(self._native_api("GET", f"{root}/api/ps"), model)
        if loaded is None:
            body = {"model": model, "stream": False}
            if self._native_api("POST", f"{root}/api/generate", body, OLLAMA_LOAD_TIMEOUT_S) is not None:
                loaded = ollama_loaded_context(self._native_api("GET", f"{root}/api/ps"), model)
        return loaded

    def _native_api(self, method: str, url: str, body: dict | None = None, timeout: float = MODELS_TIMEOUT_S):
        """One request to the server's own API, once: its JSON, or None for any failure."""
        try:
            return self.client.json(method, url, body, timeout)
        except (APIError, ValueError):  # not this server's API, or not answering: it says nothing
            return None
