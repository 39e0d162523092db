"""The few exception types NanoHermes raises; the CLI maps each to a user message and exit code."""


class NanoHermesError(Exception):
    """Base class: the message is a complete, user-facing paragraph."""


class ConfigError(NanoHermesError):
    """Bad or missing configuration (no key, bad config.toml, bad option)."""


class ProviderError(NanoHermesError):
    """The model endpoint failed in a way retries could not fix.

    `kind` is the failure's row in the retry policy (auth, not_found, connection, …) and
    `info` its details (status, detail), for callers that act on the kind (doctor)."""

    def __init__(self, message: str, kind: str = "", info: dict | None = None):
        super().__init__(message)
        self.kind = kind
        self.info = info or {}


class ContextOverflowError(ProviderError):
    """The provider rejected the request as too long for the model's context window.

    `n_ctx` is the window the provider reported and `n_prompt` the prompt's size in its
    tokens, when it said (llama.cpp says both, OpenAI both in words)."""

    def __init__(
        self,
        message: str,
        n_ctx: int | None = None,
        n_prompt: int | None = None,
        kind: str = "overflow",
        info: dict | None = None,
    ):
        super().__init__(message, kind, info)
        self.n_ctx, self.n_prompt = n_ctx, n_prompt


class SandboxUnavailable(NanoHermesError):
    """The configured sandbox level cannot be enforced on this machine, so a command was not
    started (fail closed); the message says what is missing and how to choose level "off"."""


class LocalModelError(NanoHermesError):
    """`--local` could not serve its model: no server program, a model file missing, broken or
    not downloaded, or a server that died or never became ready (its last lines in the message)."""


class SessionError(NanoHermesError):
    """A session file is locked by another process, corrupt, or unwritable."""


class PromptBlocked(NanoHermesError):
    """A UserPromptSubmit hook blocked the user's prompt (exit 2): it was not sent; the message
    holds the hook's reason (hooks/__init__.py)."""


class ImagesRefused(NanoHermesError):
    """A request names an image the model cannot be sent (it takes none, nothing says it does, or
    the file is no image by its bytes): the request was not sent; the message says why."""


class ToolError(Exception):
    """A tool could not do what was asked; the message goes to the model as the result."""


class ToolInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a tool that can still say what it leaves behind (a helper agent names
    its transcript, a command what it printed): `answer` becomes the call's result, and the turn
    stops as on any Ctrl-C. `full`: the whole output kept for recall and the REPL's /show (the
    answer when None); `facts`: a calls.ResultFacts for the tool line (None: none)."""

    def __init__(self, answer: str, full: str | None = None, facts=None):
        super().__init__(answer)
        self.answer = answer
        self.full = answer if full is None else full
        self.facts = facts


SIGNAL_EXIT_BASE = 128  # the shell's convention: a run ended by signal N exits 128 + N


class Terminated(SystemExit):
    """SIGTERM or SIGHUP asked the process to stop (signals.py raises it). A SystemExit, which
    asyncio (the REPL's prompt) and most libraries let through where they would log and swallow
    other BaseExceptions; not a KeyboardInterrupt, which the REPL's prompt and an approval
    question treat as "stop this turn, keep going". Uncaught, it still exits 128 + N."""

    def __init__(self, signum: int):
        super().__init__(SIGNAL_EXIT_BASE + signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return SIGNAL_EXIT_BASE + self.signum

    def __str__(self) -> str:
        import signal

        return signal.Signals(self.signum).name
