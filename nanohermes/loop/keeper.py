"""Keeping the context within the model's window: the loop's side of the context engine.

The keeper holds the settings for the window as one value (the engine's), the token tracker
that knows how full the window really is, and what it said last; `fit` asks the engine to
bring a message list within the budget, and returns the new list with the report once the
compaction is recorded, its memories saved and the user told. It holds no conversation: the
Agent owns its messages and passes them in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.config import Config
from nanohermes.context import ContextEngine, PromptTokenTracker, SummaryRequest, settings_for_window
from nanohermes.context.budget import ContextSettings
from nanohermes.context.engine import CompactionReport
from nanohermes.context.tokens import count_tokens
from nanohermes.errors import ContextOverflowError
from nanohermes.hooks import Hooks
from nanohermes.memory.entry_points import SAVE, SaveResult, save_candidates
from nanohermes.synthetic import synthetic_message

EXTRA_PASSES = 2  # compactions after the first while our count is still over the token mark


@dataclass(frozen=True)
class ContextStatus:
    """How full the context is, for a front end's status line."""

    chars: int  # the messages of the next request
    high_water_chars: int  # where a compaction starts
    window: int | None  # the model's window in tokens, once known
    last_usage: dict  # the latest request's tokens, cached tokens, cost and chars (loop/sender.py)
    spent: ev.Usage | None = None  # the session's requests so far: tokens and dollars (loop/sender.py)


class ContextKeeper:
    def __init__(
        self,
        max_tokens: int,
        summary_reuses_prefix: bool,
        window: int | None,
        record: Callable[[list[dict], list[dict], dict], None],
        emit: Callable[[object], None],
        memory=None,
        memory_verdict: Callable[[dict], str] = lambda args: SAVE,
    ):
        """`max_tokens`: the configured reply limit (a small window lowers it); `window`: the
        model's window in tokens when already known; `record(before, after, what)` keeps a
        compaction (the session does); `memory`: where what a compaction forgets is kept first
        (None: auto memory is off), each memory only as `memory_verdict` says (the approval
        `remember` needs: loop/approvals.py for_memory)."""
        self.max_tokens, self.record, self.emit, self.memory = max_tokens, record, emit, memory
        self.memory_verdict = memory_verdict
        self.engine = ContextEngine(settings_for_window(window, max_tokens, summary_reuses_prefix))
        self.engine.ask_for_memories = memory is not None
        self.tokens = PromptTokenTracker()
        self.hooks = Hooks()  # PreCompact before a summary request, PostCompact's note after (the Agent sets them)
        self._last_notice = ""
        self._tools_text, self._tools_count = "", 0

    @classmethod
    def for_config(
        cls, config: Config, record, emit: Callable[[object], None], memory=None, memory_verdict=lambda args: SAVE
    ) -> ContextKeeper:
        """A keeper for `config`'s model and window; `memory` is used only with auto_memory on."""
        same_model = config.effective_summary_model == config.model
        memory = memory if config.auto_memory else None
        return cls(config.max_tokens, same_model, config.context_window, record, emit, memory, memory_verdict)

    @property
    def settings(self) -> ContextSettings:
        return self.engine.settings

    def learn_window(self, n_ctx: int) -> None:
        """Scale the marks, the tool-result cap and max_tokens to a model's window (tokens)."""
        self.engine.settings = settings_for_window(n_ctx, self.max_tokens, self.settings.summary_reuses_prefix)

    def reuse_prefix(self, same_model: bool) -> None:
        """A model switch: a summary reuses the conversation's prefix only when the same model makes it."""
        self.engine.settings = replace(self.settings, summary_reuses_prefix=same_model)

    def status(self, messages: list[dict], last_usage: dict, spent: ev.Usage | None = None) -> ContextStatus:
        return ContextStatus(
            self.engine.size(messages), self.settings.high_water_chars, self.settings.window, last_usage, spent
        )

    def overflowed(self, exc: ContextOverflowError) -> int:
        """The provider rejected the prompt as too long: learn the window it names; the prompt
        size to compact from (0: unknown)."""
        if exc.n_ctx and exc.n_ctx != self.settings.window:
            self.learn_window(exc.n_ctx)
        self.emit(ev.Notice("the provider says the context is too long; compacting and retrying", "warning"))
        return exc.n_prompt or self.settings.window or 0

    def observe(self, usage: dict | None, sent: list[dict], tools: list[dict] = ()) -> None:
        """A request's reported prompt tokens say what the server counts beyond our own count of the
        messages and `tools` sent (only a known window has a token trigger, and counting loads a
        ~0.3 s encoding)."""
        if self.settings.window and usage and usage.get("prompt_tokens"):
            self.tokens.record_usage(usage["prompt_tokens"], sent, self._tools_tokens(tools))

    def fit(
        self,
        messages: list[dict],
        summarize: Callable[[SummaryRequest], str],
        facts: Mapping[str, ResultFacts],
        *,
        tools: list[dict] = (),
        force: bool = False,
        focus: str | None = None,
        overflow_tokens: int | None = None,
    ) -> tuple[list[dict], CompactionReport | None]:
        """The messages to send and what was done (None: nothing). `tools`: the schemas sent with
        them, counted in every estimate. `overflow_tokens`: the provider rejected the prompt as that
        long (or just too long, 0): compaction goes deep and cannot resend the conversation."""
        counted = self.settings.window or overflow_tokens is not None
        tools_tokens = self._tools_tokens(tools) if counted else 0
        estimate = self.tokens.estimate(messages, tools_tokens) if counted else None
        if overflow_tokens:
            estimate = max(estimate or 0, overflow_tokens)
        overflow = overflow_tokens is not None
        trigger = "manual" if force and not overflow else "auto"
        summarize = compacting(self.hooks, summarize, trigger, focus)
        how = dict(facts=facts, overflow=overflow, fixed_tokens=self.tokens.fixed(tools_tokens))
        new, report = self.engine.fit(messages, summarize, force=force, focus=focus, token_estimate=estimate, **how)
        if report is None:
            return messages, None
        new = self._within_tokens(new, report, summarize, tools_tokens, how)
        if report.summary or report.digest:  # the conversation was replaced: what PostCompact hooks say follows it
            new = with_note(new, self.hooks.compacted(trigger, report.summary or report.digest))
        saved = remember(self.memory, report.memories, self.memory_verdict) if report.layers else SaveResult()
        if report.layers:  # something changed (an over-limit check that could do nothing did not)
            self.record(messages[1:], new[1:], compaction_record(report, force, saved.added))
        self._tell(report, saved)
        return (new if report.layers else messages), report

    def _within_tokens(self, messages, report: CompactionReport, summarize, tools_tokens: int, how: dict) -> list[dict]:
        """The compacted messages, again while our count of them is still over the token mark: the
        engine cuts by chars at the conversation's chars-per-token, and what it kept (or the summary
        it wrote) may be denser (CJK, code, emoji) than what went. Up to EXTRA_PASSES more passes:
        clearing outputs can leave a summary to do, and a summary denser than what it replaced
        leaves a trim, which cuts what nothing else can."""
        limit = self.settings.high_water_tokens
        for _ in range(EXTRA_PASSES):
            if not limit or not report.layers or (estimate := self.tokens.estimate(messages, tools_tokens)) <= limit:
                break
            messages, more = self.engine.fit(messages, summarize, token_estimate=estimate, **how)
            if more is None or not more.layers:
                break
            report.layers += [layer for layer in more.layers if layer not in report.layers]
            report.trimmed += more.trimmed
            report.notices += more.notices
            report.after_chars, report.messages_after = more.after_chars, more.messages_after
            report.memories += more.memories
            if more.summary or more.digest:  # what stands in for the conversation now
                report.summary, report.digest = more.summary, more.digest
        return messages

    def _tools_tokens(self, tools: list[dict]) -> int:
        """The schemas' tokens (counted once per distinct list: a mode switch or recall changes it), as
        JSON with spaces: chat templates render them so, ~30 % more tokens than the compact JSON sent."""
        text = json.dumps(list(tools), ensure_ascii=False) if tools else ""
        if text != self._tools_text:
            self._tools_text, self._tools_count = text, count_tokens(text) if text else 0
        return self._tools_count

    def _tell(self, report: CompactionReport, saved: SaveResult) -> None:
        """What the user is told of a compaction: once, not at every step it could do nothing; then
        what became of its memories (saved, held for a yes, or the store's refusal)."""
        line = report.one_line()
        if (report.layers or report.notices) and line != self._last_notice:
            self._last_notice = line
            self.emit(ev.Notice(line, "warning" if report.over_budget or report.thrash_skipped else "info"))
        for notice in memory_notices(saved):
            self.emit(notice)

    def reset(self) -> None:
        self.engine.reset()


def compacting(hooks, summarize: Callable[[SummaryRequest], str], trigger: str, focus: str | None):
    """`summarize` with the PreCompact hooks run before the summary request."""

    def summarize_after_hooks(request: SummaryRequest) -> str:
        hooks.compacting(trigger, focus)
        return summarize(request)

    return summarize_after_hooks


def with_note(messages: list[dict], note: str) -> list[dict]:
    """`messages` and a PostCompact hook's note after them, in the user role, tagged as the loop's
    (an empty assistant message first where it would follow a user message: strict templates)."""
    if not note:
        return messages
    between = [{"role": "assistant", "content": ""}] if messages[-1]["role"] == "user" else []
    return [*messages, *between, synthetic_message("hook_post_compact", note)]


def compaction_record(report: CompactionReport, force: bool, remembered: list) -> dict:
    """What the session keeps of a compaction beside the new working set."""
    return {
        "layers": report.layers,
        "forced": force,
        "before_chars": report.before_chars,
        "after_chars": report.after_chars,
        "replaced_messages": len(report.dropped),
        "cleared_outputs": report.placeholder_ids,
        "summary_reused_prefix": report.summary_reused_prefix,
        **({"memories": [e.id for e in remembered]} if remembered else {}),
    }


def remember(memory, candidates, verdict: Callable[[dict], str]) -> SaveResult:
    """What the summary found worth keeping, saved to memory (or held for a yes) as `verdict` allows."""
    return save_candidates(memory, candidates, verdict) if memory is not None else SaveResult()


def memory_notices(saved: SaveResult) -> list:
    """The lines a compaction's memories get, after the compaction's own line."""
    notices = []
    if saved.added:
        listed = "; ".join(f"[{e.kind}] {e.text}" for e in saved.added)
        notices.append(ev.Notice(f"remembered from the compacted messages (/memory list auto): {listed}"))
    if saved.held:
        listed = "; ".join(f"{e.id} [{e.kind}] {e.text}" for e in saved.held)
        notices.append(ev.Notice(f"{HELD_NOTICE}: {listed}"))
    if saved.error:
        notices.append(ev.Notice(saved.error, "warning"))
    return notices


# Said when a compaction's memories need the approval `remember` needs and it was not given.
HELD_NOTICE = (
    "not saved to memory without your yes (as `remember` would ask); keep them with /memory confirm ID|all, "
    "see them with /memory pending"
)
