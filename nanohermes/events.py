"""What a run tells its renderer. The REPL and `-p` are two renderers of the same events."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from nanohermes.calls import NO_FACTS, ResultFacts


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class StreamRestarted:
    """A retried request streams the reply again from its start (sent only when some of the
    failed attempt was streamed): what was shown of it is not the reply any more. A renderer
    that cannot take printed text back shows only what the retried reply adds (ReplyOnScreen)."""


class ReplyOnScreen:
    """The reply being streamed as a renderer showed it, across retries, for renderers that
    cannot take printed text back: after a StreamRestarted what the retried reply repeats is
    held back, and only what it adds is shown. Linear in the reply: a delta is compared with
    the part of the shown text it would repeat, never the whole text with the whole retry."""

    def __init__(self) -> None:
        self._shown: list[str] = []  # the reply's text as shown, joined when asked for
        self._replayed = ""  # what was shown when the retry began
        self._retried: list[str] | None = None  # the retried reply so far, until it goes past `_replayed`
        self._matched = 0  # chars of `_retried`, all repeating the start of `_replayed`

    @property
    def shown(self) -> str:
        return "".join(self._shown)

    @property
    def replaying(self) -> bool:
        """A retried reply has not yet got past what was shown of the one before (or nothing came)."""
        return self._retried is not None

    def new_reply(self) -> None:
        self._shown, self._retried = [], None

    def restart(self) -> None:
        self._replayed, self._retried, self._matched = self.shown, [], 0

    def add(self, text: str) -> tuple[str, bool]:
        """(the text to show now, whether the retried reply said something else: then it is
        shown whole, and the renderer says so)."""
        if self._retried is None:
            self._shown.append(text)
            return text, False
        self._retried.append(text)
        if self._replayed.startswith(text, self._matched):  # still repeating what is shown
            self._matched += len(text)
            return "", False
        ahead = self._replayed[self._matched :]
        if text.startswith(ahead):  # past the end of what was shown: the rest is new
            added, differs = text[len(ahead) :], False
        else:
            self._shown, added, differs = [], "".join(self._retried), True
        self._retried = None
        self._shown.append(added)
        return added, differs


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolProgress:
    """A running tool's latest output (run_command's last lines), throttled by the tool."""

    call_id: str
    name: str
    text: str


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    summary: str  # one line for the user
    ok: bool  # False: an error, a refusal, or a command that exited non-zero, timed out, was killed or interrupted
    duration_s: float = 0.0  # measured by the loop, approval wait excluded
    facts: ResultFacts = NO_FACTS  # exit code, path, what was found: read these, never parse the summary


@dataclass(frozen=True)
class RequestStarted:
    """A request to the model is on its way (the front ends show that they are waiting)."""


@dataclass(frozen=True)
class SummaryStarted:
    """The summariser is called to compact the context (one extra, non-streaming request)."""


@dataclass(frozen=True)
class SummaryFinished:
    ok: bool = True


# What only a live terminal shows (spinners, a running command's last line): a script's output
# (`-p --output-format stream-json`) leaves these out.
LIVE_PROGRESS = (RequestStarted, ToolProgress, SummaryStarted, SummaryFinished)


@dataclass(frozen=True)
class Usage:
    """Tokens used by this turn only (the increment, not a running total)."""

    prompt_tokens: int
    completion_tokens: int
    requests: int
    reported: bool = True  # False when the server sent no usage
    cached_tokens: int | None = None  # prompt tokens the provider served from its cache, when it says
    sent_chars: int = 0  # what the requests carried (messages and tool schemas)
    uncached_chars: int = 0  # of that, what was not a prefix of the request before
    last_request_tokens: int | None = None  # prompt + reply of the turn's last request: how full the window is now
    estimated: bool = False  # a request was interrupted before the server reported usage: its share is an estimate
    unreported: int = 0  # when others were reported: requests without usage, not in the sums
    cache_write_tokens: int | None = None  # prompt tokens written to the cache (Anthropic charges more), when said
    cost_usd: float | None = None  # dollars of the priced requests (provider/prices.py); None: no price known
    unpriced: int = 0  # requests with usage (or an estimate) but no price for their model (not in cost_usd)


class MissCause(StrEnum):
    """Why a request's cached share fell (CacheMiss.cause): the first part of the prefix that changed."""

    TOOLS = "tools"  # the tool list (plan mode, an MCP server's tools, recall joining)
    SYSTEM = "system"  # the system message
    MODE = "mode"  # a /mode switch (it rewrites the system message's mode line)
    MODEL = "model"  # a /model switch: the new model's cache is cold
    COMPACTION = "compaction"  # earlier messages were compacted (summarised, cleared, cut)
    IDLE = "idle"  # the prefix was the same, but the provider's cache expired after the idle minutes
    UNKNOWN = "unknown"  # the prefix was the same and the wait short: the provider did not reuse it


@dataclass(frozen=True)
class CacheMiss:
    """A request's cached share fell well below the one before's (loop/sender.py). Front ends say
    it in one line (cost.py); `before`/`after`: the mode or model switched, when that is the cause."""

    share: float  # cached / prompt tokens of this request
    previous_share: float
    cause: MissCause
    idle_minutes: int = 0  # since the previous request ended
    before: str = ""
    after: str = ""


@dataclass(frozen=True)
class Notice:
    """A one-line status message: retries, compaction, refusals, limits."""

    text: str
    level: str = "info"  # info | warning


@dataclass(frozen=True)
class AssistantMessageDone:
    """A streamed assistant message ended (text may continue in a later step)."""

    content: str
    has_tool_calls: bool


@dataclass(frozen=True)
class SubagentEvent:
    """An event of a helper agent (the `task` tool), wrapped so renderers can show it nested
    and dimmed under the parent's call: its tool calls, notices and usage."""

    label: str  # the task's description
    event: object
    tag: str = ""  # a helper in a worktree of its own: its name ("task1"), shown as several run at once


class StopCode(StrEnum):
    """Why a turn stopped before the model answered (TurnResult.stop_code); stops.py words them."""

    MAX_STEPS = "max_steps"  # stop_detail: {"steps": n, "max_steps": n}
    REPEATING = "repeating"  # the model kept making the same call
    CUT_CALLS = "cut_tool_calls"  # replies kept hitting max_tokens inside a tool call
    CHECK_FAILING = "check_failing"  # the file asked for whole still failed the PostToolUse check; {"tries": n}
    HOOK_STOPPED = "hook_stopped"  # a hook answered `continue: false`; {"event", "command", "reason"}
    INTERRUPTED = "interrupted"  # Ctrl-C
    MAX_COST = "max_cost"  # the spending cap was reached (loop/spending.py); {"spent": "$0.50", "max_cost": "$0.50"}
    # Not a stop: the model answered, but TurnResult.cannot_ask names actions refused because
    # nothing could ask for approval (-p without --yes); -p reports the run as unfinished.
    NEEDS_APPROVAL = "needs_approval"


# A stopped turn's answer from its last request (tools off) starts so: the best from what was found.
PARTIAL_MARK = "[partial answer: the run stopped early] "


@dataclass
class TurnResult:
    final_text: str  # the answer; for a stopped turn, the last text the model wrote (may be "")
    steps: int
    usage: Usage | None = None
    stopped_reason: str | None = None  # None = the model answered; "limit" or "interrupted"
    stop_code: StopCode | None = None
    stop_detail: dict = field(default_factory=dict)
    cannot_ask: list[str] = field(default_factory=list)  # tools refused: they needed a yes nothing could give
