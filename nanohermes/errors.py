"""The few exception types NanoHermes raises; the CLI maps each to a user message and exit code."""


class NanoHermesError(Exception):
    """Base class: the message is a complete, user-facing paragraph."""


class ConfigError(NanoHermesError):
    """Bad or missing configuration (no key, bad config.toml, bad option)."""


class ProviderError(NanoHermesError):
    """The model endpoint failed in a way retries could not fix."""


class ContextOverflowError(ProviderError):
    """The provider rejected the request as too long for the model's context window.

    `n_ctx` is the window the provider reported, when it said (llama.cpp does)."""

    def __init__(self, message: str, n_ctx: int | None = None):
        super().__init__(message)
        self.n_ctx = n_ctx


class SessionError(NanoHermesError):
    """A session file is locked by another process, corrupt, or unwritable."""


class ToolError(Exception):
    """A tool could not do what was asked; the message goes to the model as the result."""
