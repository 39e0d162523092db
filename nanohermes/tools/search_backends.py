"""The backends of `web_search`: how each one is configured, asked and answered.

A backend is configured by the `[web_search]` table of config.toml (parsed once, when the
configuration is loaded) and asked over HTTP with httpx2, like web_fetch. Each one turns its
own JSON into the same plain Hits, so the tool renders them one way:

- `searxng`: a self-hosted SearXNG, its JSON API (`GET {url}/search?q=…&format=json`; the
  instance must allow the json format in its settings.yml).
- `brave`: the Brave Search API (`GET …/res/v1/web/search`, key in `X-Subscription-Token`).
- `tavily`: the Tavily search API (`POST …/search`, key as a bearer token).

A key comes from the table or from the environment, is never logged, never put in a URL and
never repeated in an error message.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.config import checked_seconds, checked_table
from nanohermes.errors import ConfigError, ToolError

DEFAULT_MAX_RESULTS = 5  # enough to choose a page to fetch; each result costs ~80 tokens
MAX_RESULTS_LIMIT = 10  # more is a listing to skim, not something a model reads well
DEFAULT_TIMEOUT_S = 15.0  # a search answers in a second or two; past this the service is down
ERROR_EXCERPT_CHARS = 300  # enough of an error body to see what the service said
MAX_ENGINES_NAMED = 5  # why the search failed: a few engines' reasons say it; a list of 70 says no more
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # an engine's reason is the instance's text
MAX_ANSWER_BYTES = 2 * 2**20  # a page of results is tens of KB; more is not a search answer
USER_AGENT = "NanoHermes/0.1 (terminal coding agent; web_search)"

# backend -> (default URL, environment variable holding its key or None when it needs none)
BACKENDS = {
    "searxng": (None, None),
    "brave": ("https://api.search.brave.com/res/v1/web/search", "BRAVE_API_KEY"),
    "tavily": ("https://api.tavily.com/search", "TAVILY_API_KEY"),
}
TABLE_KEYS = frozenset({"backend", "url", "api_key", "api_key_env", "max_results", "timeout"})


@dataclass(frozen=True)
class WebSearchSettings:
    backend: str  # a key of BACKENDS
    url: str
    api_key: str | None = field(default=None, repr=False)  # never printed, logged or sent back to the model
    max_results: int = DEFAULT_MAX_RESULTS
    timeout: float = DEFAULT_TIMEOUT_S
    # Why the tool is not offered, when the backend needs a key the environment lacks: a shell
    # without the variable should lose web_search for the session, not every command.
    unavailable: str = ""

    def secrets(self) -> list[tuple[str, str]]:
        """For redact.py: the key, wherever a result or message might quote it."""
        return [("web_search.api_key", self.api_key)] if self.api_key else []


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


def parse_web_search_table(table, path: Path) -> WebSearchSettings:
    """The `[web_search]` table as settings, or a ConfigError naming what to fix."""
    where = f"{path} [web_search]"
    not_a_table = f'{path}: web_search must be a table ([web_search] with backend = "searxng", …).'
    checked_table(table, TABLE_KEYS, where, not_a_table)
    backend = table.get("backend")
    if backend not in BACKENDS:
        raise ConfigError(f"{where}: backend must be one of {', '.join(BACKENDS)}, got {backend!r}.")
    default_url, key_env = BACKENDS[backend]
    url = table.get("url", default_url)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: url must be an http(s) URL (for searxng, your instance's address), got {url!r}.")
    key, unavailable = _key(table, key_env, where)
    return WebSearchSettings(
        backend,
        url.rstrip("/"),
        key,
        _max_results(table, where),
        checked_seconds(table, "timeout", DEFAULT_TIMEOUT_S, where),
        unavailable,
    )


def _key(table: dict, default_env: str | None, where: str) -> tuple[str | None, str]:
    """(the key, or None; why the tool cannot be offered, or "")."""
    if "api_key" in table:
        if not isinstance(table["api_key"], str) or not table["api_key"]:
            raise ConfigError(f"{where}: api_key must be a non-empty string.")
        return table["api_key"], ""
    env = table.get("api_key_env", default_env)
    if env is None:
        return None, ""
    if not isinstance(env, str) or not env:
        raise ConfigError(f"{where}: api_key_env must be the name of an environment variable.")
    if not os.environ.get(env):
        return (
            None,
            f"web_search is off for this session: {where} needs a key; set api_key in the table, or export {env}.",
        )
    return os.environ[env], ""


def _max_results(table: dict, where: str) -> int:
    value = table.get("max_results", DEFAULT_MAX_RESULTS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RESULTS_LIMIT:
        raise ConfigError(f"{where}: max_results must be a whole number from 1 to {MAX_RESULTS_LIMIT}, got {value!r}.")
    return value


# ---------------------------------------------------------------- asking


def search(settings: WebSearchSettings, query: str) -> list[Hit]:
    """Ask the backend; every failure is a ToolError that names the backend, never the key."""
    from nanohermes.tools.web import _httpx as pick_httpx  # the one place that picks httpx2 or httpx

    httpx = pick_httpx()
    method, url, options = {"searxng": _searxng_request, "brave": _brave_request, "tavily": _tavily_request}[
        settings.backend
    ](settings, query)
    try:
        with httpx.Client(headers={"User-Agent": USER_AGENT}, timeout=settings.timeout) as client:
            body = _json_body(settings, *_answer(client, settings, method, url, options))
    except httpx.TimeoutException:
        raise ToolError(f"web_search ({settings.backend}): no answer within {settings.timeout:g} s") from None
    except httpx.ConnectError:
        raise ToolError(f"web_search ({settings.backend}): could not connect to {_host(settings.url)}") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"web_search ({settings.backend}): {type(exc).__name__}") from None
    parse = {"searxng": _searxng_hits, "brave": _brave_hits, "tavily": _tavily_hits}[settings.backend]
    try:
        hits = parse(body)[: settings.max_results]
    except (AttributeError, KeyError, TypeError):
        raise ToolError(
            f"web_search ({settings.backend}): the answer is not in the {settings.backend} format"
        ) from None
    failed = _failed_engines(body) if settings.backend == "searxng" and not hits else ""
    if failed:  # no results because the engines failed, not because nothing matched: other words won't help
        raise ToolError(f"web_search (searxng): the search backend failed: {failed}; try again later")
    return hits


def _failed_engines(body: dict) -> str:
    """SearXNG's `unresponsive_engines` ([[engine, reason], …]: timeouts, suspensions, CAPTCHAs) in
    one line, "" when none."""
    engines = body.get("unresponsive_engines")
    if not isinstance(engines, list):
        return ""
    named = [" ".join(str(part) for part in e[:2]) if isinstance(e, list) else str(e) for e in engines]
    text = ", ".join(" ".join(_CONTROLS.sub(" ", n).split()) for n in named[:MAX_ENGINES_NAMED] if n.strip())
    more = len(named) - MAX_ENGINES_NAMED
    return text + (f" and {more} more" if more > 0 else "")


def _searxng_request(settings: WebSearchSettings, query: str) -> tuple[str, str, dict]:
    return "GET", f"{settings.url}/search", {"params": {"q": query, "format": "json"}}


def _brave_request(settings: WebSearchSettings, query: str) -> tuple[str, str, dict]:
    headers = {"Accept": "application/json", "X-Subscription-Token": settings.api_key or ""}
    return "GET", settings.url, {"params": {"q": query, "count": settings.max_results}, "headers": headers}


def _tavily_request(settings: WebSearchSettings, query: str) -> tuple[str, str, dict]:
    headers = {"Authorization": f"Bearer {settings.api_key or ''}"}
    return "POST", settings.url, {"json": {"query": query, "max_results": settings.max_results}, "headers": headers}


def _answer(client, settings: WebSearchSettings, method: str, url: str, options: dict) -> tuple[int, str, bytes]:
    """(status, content type, body), read within `timeout` in all (httpx's timeout is per read,
    so a trickle could last forever) and at most MAX_ANSWER_BYTES."""
    deadline = time.monotonic() + settings.timeout
    chunks, size = [], 0
    with client.stream(method, url, **options) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise ToolError(
                    f"web_search ({settings.backend}): the answer is over {MAX_ANSWER_BYTES // 2**20} MB, "
                    "not a page of results (is url the search API?)"
                )
            if time.monotonic() > deadline:
                raise ToolError(f"web_search ({settings.backend}): no answer within {settings.timeout:g} s")
            chunks.append(chunk)
        return response.status_code, response.headers.get("content-type", ""), b"".join(chunks)


def _json_body(settings: WebSearchSettings, status: int, content_type: str, raw: bytes) -> dict:
    name = settings.backend
    if status in (401, 403):
        hint = (
            "the instance does not allow format=json (enable it under search.formats in settings.yml)"
            if name == "searxng"
            else "the key was rejected (check api_key or its environment variable)"
        )
        raise ToolError(f"web_search ({name}): HTTP {status}: {hint}")
    if status == 429:
        raise ToolError(f"web_search ({name}): HTTP 429: rate limited; wait before searching again")
    if status >= 400:
        excerpt = " ".join(raw.decode("utf-8", "replace").split())[:ERROR_EXCERPT_CHARS]
        raise ToolError(f"web_search ({name}): HTTP {status}: {excerpt}".rstrip(": "))
    try:
        body = json.loads(raw)
    except (ValueError, json.JSONDecodeError):
        kind = content_type.split(";")[0] or "no content type"
        raise ToolError(f"web_search ({name}): answered {kind}, not JSON (is url the search API?)") from None
    if not isinstance(body, dict):
        raise ToolError(f"web_search ({name}): the answer is not a JSON object")
    return body


def _host(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0]


def _searxng_hits(body: dict) -> list[Hit]:
    return [
        Hit(str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("content") or ""))
        for r in body.get("results") or []
        if r.get("url")
    ]


def _brave_hits(body: dict) -> list[Hit]:
    results = (body.get("web") or {}).get("results") or []
    return [
        Hit(str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("description") or ""))
        for r in results
        if r.get("url")
    ]


def _tavily_hits(body: dict) -> list[Hit]:
    return [
        Hit(str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("content") or ""))
        for r in body.get("results") or []
        if r.get("url")
    ]
