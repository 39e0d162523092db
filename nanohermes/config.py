"""Configuration: command line > environment > $NANOHERMES_HOME/config.toml > defaults."""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path

from nanohermes.errors import ConfigError

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (llama.cpp, Ollama, vLLM) ignore the key but the openai client insists on one.
PLACEHOLDER_KEY = "no-key-needed"
MODES = ("plan", "ask", "auto")


def home_dir() -> Path:
    """Where all state lives; the one place that reads NANOHERMES_HOME."""
    env = os.environ.get("NANOHERMES_HOME")
    return Path(env).expanduser() if env else Path.home() / ".nanohermes"


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
    request_timeout: float = 600.0
    max_retries: int = 4  # 429 / 5xx / timeouts / dropped connections, with exponential backoff
    allow_outside_workspace: bool = False
    # Mark the stable prefix and the latest message with cache_control, for providers that
    # cache only at explicit breakpoints (Anthropic models through OpenRouter or LiteLLM).
    cache_breakpoints: bool = False
    # A helper agent (the `task` tool) stops after this many requests: enough to read twenty
    # files and answer, few enough that a lost helper does not spend a parent's budget.
    task_max_steps: int = 30
    # Before a compaction forgets messages, the same summary request asks for the lasting
    # preferences, facts and decisions in them, which are saved to memory as automatic entries.
    auto_memory: bool = True
    # Tables, each parsed by the module that uses it (only when present): [mcp.servers.NAME]
    # (nanohermes/mcp/settings.py) and [web_search] (tools/search_backends.py; None: not offered).
    mcp: tuple = ()
    web_search: object | None = field(default=None, repr=False)  # may hold a key

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
            "No API key is set. Export OPENAI_API_KEY=<your key> (or put api_key = \"...\" in "
            f"{self.home / 'config.toml'}), or point NanoHermes at another OpenAI-compatible server "
            "with --base-url (e.g. --base-url http://127.0.0.1:8080/v1 for a local llama.cpp server)."
        )


_ENV = {"OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "base_url", "NANOHERMES_MODEL": "model"}


def _read_file_config(home: Path) -> dict:
    path = home / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from exc
    import tomllib  # here: `nanohermes --version` needs only MODES from this module

    try:
        data = tomllib.loads(text)
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


_POSITIVE = {"max_steps", "max_tokens", "context_window", "command_timeout", "request_timeout", "task_max_steps"}


def _checked(name: str, value, home: Path):
    """The value as its field's type, or a ConfigError naming the setting (env values are strings)."""
    kind = _field_type(name)
    try:
        if kind is bool and isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            value = value.lower() in ("true", "1")
        elif kind in (int, float) and not isinstance(value, bool):
            value = kind(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"Setting {name} = {value!r} (from {home / 'config.toml'}, the environment or a flag) "
                          f"must be a{'n' if kind is int else ''} {kind.__name__}.") from None
    if name in _POSITIVE and value <= 0 or name == "max_retries" and value < 0:
        raise ConfigError(f"Setting {name} must be positive, got {value}.")
    return value


def _parsed_tables(values: dict, home: Path) -> dict:
    """Take the [mcp] and [web_search] tables out of `values`, parsed and checked by their modules."""
    tables = {}
    if "mcp" in values:
        from nanohermes.mcp.settings import parse_mcp_table

        tables["mcp"] = parse_mcp_table(values.pop("mcp"), home / "config.toml")
    if "web_search" in values:
        from nanohermes.tools.search_backends import parse_web_search_table

        tables["web_search"] = parse_web_search_table(values.pop("web_search"), home / "config.toml")
    return tables


def load_config(**flags) -> Config:
    """Merge the layers; `flags` holds command-line values, None meaning 'not given'."""
    home = home_dir()
    values: dict = _read_file_config(home)
    for env, name in _ENV.items():
        if os.environ.get(env):
            values[name] = os.environ[env]
    values.update({k: v for k, v in flags.items() if v is not None})
    workspace = Path(values.pop("workspace", None) or Path.cwd()).expanduser()
    if not workspace.is_dir():
        raise ConfigError(f"Workspace {workspace} is not a directory. Pass an existing one with -C DIR.")
    tables = _parsed_tables(values, home)
    values = {name: _checked(name, value, home) for name, value in values.items()}
    config = Config(home=home, workspace=workspace.resolve(), **values, **tables)
    if config.mode not in MODES:
        raise ConfigError(f"Unknown mode {config.mode!r}: use one of {', '.join(MODES)}.")
    return config
