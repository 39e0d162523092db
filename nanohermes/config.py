"""Configuration: command line > environment > $NANOHERMES_HOME/config.toml > defaults."""

from __future__ import annotations

import math
import os
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path

from nanohermes.errors import ConfigError
from nanohermes.fileio import read_bounded

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (llama.cpp, Ollama, vLLM) ignore the key but the openai client insists on one.
PLACEHOLDER_KEY = "no-key-needed"
MODES = ("plan", "ask", "auto", "accept-edits")  # the order lists show them in (accept-edits came last)


def home_dir() -> Path:
    """Where all state lives; the one place that reads NANOHERMES_HOME."""
    env = os.environ.get("NANOHERMES_HOME")
    return Path(env).expanduser() if env else Path.home() / ".nanohermes"


def claude_home() -> Path:
    """Claude Code's user directory (its CLAUDE_CONFIG_DIR, else ~/.claude): its commands and skills are read too."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def codex_home() -> Path:
    """Codex's user directory (its CODEX_HOME, else ~/.codex): its prompts are read as /prompts:NAME."""
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


@dataclass(frozen=True)
class Config:
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    workspace: Path = field(default_factory=Path.cwd)
    home: Path = field(default_factory=home_dir)
    mode: str = "ask"
    max_steps: int = 50
    # Every request sends max_tokens: some servers otherwise generate until the window is full.
    max_tokens: int = 4096
    temperature: float | None = 0.0
    summary_model: str | None = None
    context_window: int | None = None  # tokens; learned from the server when not set
    system_prompt: str = ""  # the user's persona, appended after the built-in rules
    command_timeout: int = 120
    request_timeout: float = 600.0  # seconds without a byte of the reply (keep-alive comments do not count)
    # Seconds without any reply before the user is told the server has not answered yet (a
    # local model on a CPU can take minutes over a long prompt: it is told, not aborted).
    slow_reply_notice: float = 20.0
    max_retries: int = 4  # 429 / 5xx / dropped connections, with exponential backoff
    allow_outside_workspace: bool = False
    # Mark the stable prefix and the latest message with cache_control, for providers that
    # cache only at explicit breakpoints (Anthropic models through OpenRouter or LiteLLM).
    # None: on for Anthropic-family model ids (provider/caching.py); true or false: always / never.
    cache_breakpoints: bool | None = None
    # Send OpenAI's `prompt_cache_key` (one per session) so requests of a session reach the same
    # cache. None: for OpenAI-family model ids (provider/caching.py); true or false: always / never.
    prompt_cache_key: bool | None = None
    # A helper agent (the `task` tool) stops after this many requests: enough to read twenty
    # files and answer, few enough that a lost helper does not spend a parent's budget.
    task_max_steps: int = 30
    # Helpers in git worktrees of their own (`task` with isolation = "worktree") asked for in one reply
    # run side by side, this many at once: each waits on the model most of its time, and every one
    # more is another stream of requests to pay for and another set of commands on the same cores.
    task_parallel: int = 3
    # Before a compaction forgets messages, the same summary request asks for the lasting
    # preferences, facts and decisions in them, which are saved to memory as automatic entries.
    auto_memory: bool = True
    # Dollars a session may spend (a `-p` run's, with --max-cost USD): a warning at 80 %, then the
    # turn stops before its next request (loop/spending.py). None: no cap.
    max_cost: float | None = None
    # How the REPL tells you a long turn ended or an approval waits (ui/notify.py): "off", "bell"
    # (BEL) or "osc" (a desktop notification through the terminal: OSC 9 and OSC 777).
    notify: str = "off"
    notify_after: float = 30.0  # seconds a turn must have taken for its end to be notified
    theme: str = "auto"  # "auto" (asks the terminal for its background), "dark" or "light" (ui/theme.py)
    # How the loop coaches the model (loop/coach/): "plain" (every model's: broken replies sent back, going
    # round answered), "small" (plain's, and a small model's: a file asked for whole, an unmade change sent
    # back, the user's check answered, resampling) or "auto": by what the model does (loop/coach/choice.py).
    coach: str = "auto"
    # Whether the model takes images (`@shot.png`, read_file of an image: tools/images.py). None: as the
    # server says (llama.cpp's /props, Ollama's capabilities, LM Studio, a gateway's /models); a server
    # that says nothing (OpenAI, vLLM) gets no image until this is true (provider/vision.py).
    vision: bool | None = None
    # Seconds `--local` waits for its server to load the model (a 1.5B model loads in seconds; a slow
    # disk, a first start after a reboot or a bigger --model-file can take minutes).
    local_start_timeout: float = 300.0
    # Tables, each parsed by the part that uses it (configure.py; only when present): [mcp.servers.NAME]
    # (mcp/settings.py), [web_search] (tools/search_backends.py; None: not offered), [sandbox]
    # (sandbox/policy.py: SandboxSettings; None: the defaults), [permissions]
    # (permissions/table.py: PermissionSettings, with the project's rules and --allow/--deny),
    # [prices."MODEL"] (provider/prices.py: {model: Price}, over the genai-prices database), [hooks]
    # (hooks/settings.py: HookSettings, the user's and the workspace's, the latter run once trusted) and
    # [lsp.LANGUAGE] (lsp/settings.py: the servers whose new diagnostics follow an edit; (): pylsp on PATH).
    mcp: tuple = ()
    web_search: object | None = field(default=None, repr=False)  # may hold a key
    sandbox: object | None = None
    permissions: object | None = None
    prices: dict = field(default_factory=dict)
    hooks: object | None = None
    lsp: tuple = ()

    @property
    def effective_base_url(self) -> str:
        return self.base_url or DEFAULT_BASE_URL

    @property
    def effective_summary_model(self) -> str:
        return self.summary_model or self.model

    def resolved_api_key(self) -> str:
        """The key to send, or a ConfigError saying what to set."""
        if self.api_key:
            return self.api_key
        if self.base_url and self.base_url.rstrip("/") != DEFAULT_BASE_URL:
            return PLACEHOLDER_KEY
        raise ConfigError(
            'No API key is set. Export OPENAI_API_KEY=<your key> (or put api_key = "..." in '
            f"{self.home / 'config.toml'}), or point NanoHermes at another OpenAI-compatible server "
            "with --base-url (e.g. --base-url http://127.0.0.1:8080/v1 for a local llama.cpp server). "
            "No key and no server? `nanohermes --local` runs a small coding model on this computer."
        )


_ENV = {"OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "base_url", "NANOHERMES_MODEL": "model"}


MAX_CONFIG_BYTES = 1_048_576  # a hand-written settings file; a bigger one is something else put there


def _read_file_config(home: Path) -> dict:
    path = home / "config.toml"
    try:
        text = read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r}); "
            "TOML files must be UTF-8. Save it as UTF-8, or remove it."
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from exc
    import tomllib  # here: `nanohermes --version` needs only MODES from this module

    from nanohermes.bounded import parse_toml

    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}. Fix or remove it.") from exc
    known = {f.name for f in fields(Config)} - {"home", "workspace"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{path} has unknown setting(s): {', '.join(unknown)}. Known: {', '.join(sorted(known))}.")
    return data


def _field_type(name: str) -> type:
    """str for `str | None`, int for `int`, … (from the dataclass annotations)."""
    hint = typing.get_type_hints(Config)[name]
    return next((a for a in typing.get_args(hint) if a is not type(None)), hint)


# The range each number may take, with the reason for its ends. A value outside is an error
# that names the setting, never clamped or truncated quietly.
RANGES: dict[str, tuple[float, float]] = {
    "max_steps": (1, 100_000),  # a run longer than this is a loop, not a task
    "max_tokens": (1, 1_000_000),  # above any model's output window
    "temperature": (0.0, 2.0),  # what OpenAI-compatible servers accept
    "context_window": (1_024, 100_000_000),  # below 1k tokens not even the system prompt fits
    "command_timeout": (1, 86_400),  # seconds: a day is the longest a command may hold a turn
    "request_timeout": (1.0, 86_400.0),  # seconds without reply bytes before a request fails
    "max_retries": (0, 20),  # more than this only delays the error
    "task_max_steps": (1, 100_000),  # a helper agent's step limit, like max_steps
    "task_parallel": (1, 16),  # 1: one after another; more than 16 at once is a flood of requests, not a plan
    "slow_reply_notice": (0.0, 86_400.0),  # seconds; 0 turns the notice off
    "max_cost": (0.0001, 1_000_000.0),  # dollars: below a hundredth of a cent no request fits; above, no cap
    "notify_after": (0.0, 86_400.0),  # seconds; 0: every turn's end
    "local_start_timeout": (1.0, 86_400.0),  # seconds; a day, as for the other timeouts
}
# Settings that take one of a few words.
CHOICES: dict[str, tuple[str, ...]] = {
    "notify": ("off", "bell", "osc"),
    "theme": ("auto", "dark", "light"),
    "coach": ("auto", "plain", "small"),  # loop/coach/choice.py's COACHES
}


MAX_SECONDS = 86_400.0  # a day, as for command_timeout and request_timeout: a timer any clock and library can hold


def checked_seconds(table: dict, key: str, default: float, where: str) -> float:
    """`table[key]` as seconds for a table other parts own: positive, finite (TOML reads `nan`
    and `inf`, which fail only later, at the first call, in a library's words), at most a day."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_SECONDS:
        raise ConfigError(
            f"{where}: {key} must be a number of seconds above 0 and up to {MAX_SECONDS:g}, got {value!r}."
        )
    return float(value)


def _as_kind(kind: type, value):
    """The value as `kind`, from its TOML type or an environment/flag string; ValueError else."""
    if kind is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if isinstance(value, bool):
            return value
        raise ValueError
    if kind is int:  # ints are ints: 1.5 or 1e300 is not silently truncated
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return int(value)
        raise ValueError
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError
        number = float(value)
        if not math.isfinite(number):  # nan, inf: no request or timer can use them
            raise ValueError
        return number
    if not isinstance(value, kind):
        raise ValueError
    return value


def _checked(name: str, value, home: Path):
    """The value as its field's type, or a ConfigError naming the setting (env values are strings)."""
    kind = _field_type(name)
    try:
        value = _as_kind(kind, value)
    except (TypeError, ValueError):
        article = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}.get(
            kind, kind.__name__
        )
        raise ConfigError(
            f"Setting {name} = {value!r} (from {home / 'config.toml'}, the environment or a flag) must be {article}."
        ) from None
    low, high = RANGES.get(name, (None, None))
    if low is not None and not low <= value <= high:
        raise ConfigError(f"Setting {name} = {value!r} is out of range: it must be between {low:g} and {high:g}.")
    return value


def merge_layers(flags: dict, defaults: dict | None = None) -> tuple[dict, Path, Path]:
    """(the settings as given, the state directory, the workspace): command line > environment >
    config.toml > `defaults` (a front end's own, over Config's); `flags` holds command-line
    values, None meaning 'not given'. Unchecked: the tables other parts own are still in the
    values (configure.py has them parsed)."""
    home = home_dir()
    values: dict = {**(defaults or {}), **_read_file_config(home)}
    for env, name in _ENV.items():
        if os.environ.get(env):
            values[name] = os.environ[env]
    values.update({k: v for k, v in flags.items() if v is not None})
    workspace = Path(values.pop("workspace", None) or Path.cwd()).expanduser()
    if not workspace.is_dir():
        raise ConfigError(f"Workspace {workspace} is not a directory. Pass an existing one with -C DIR.")
    return values, home, workspace.resolve()


def checked_config(values: dict, home: Path, workspace: Path, tables: dict) -> Config:
    """The Config of merged `values`, each checked by type and range; `tables`: the parsed tables."""
    values = {name: _checked(name, value, home) for name, value in values.items()}
    config = Config(home=home, workspace=workspace, **values, **tables)
    if config.mode not in MODES:
        raise ConfigError(f"Unknown mode {config.mode!r}: use one of {', '.join(MODES)}.")
    for name, choices in CHOICES.items():
        if getattr(config, name) not in choices:
            raise ConfigError(f"Setting {name} = {getattr(config, name)!r}: use one of {', '.join(choices)}.")
    return config


def checked_table(table, known: frozenset[str], where: str, not_a_table: str) -> dict:
    """A table of config.toml that other parts own, with known keys only: else a ConfigError,
    `not_a_table` when it is not a table at all, or one naming the unknown keys."""
    if not isinstance(table, dict):
        raise ConfigError(not_a_table)
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}.")
    return table
