"""ContextEngine: the one stateful piece. It runs the pure layers, cheapest first, and keeps
what they need across calls (sizes, the anti-thrash history, the last summary)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Callable

from nanohermes.context.budget import MIN_USEFUL_SAVING, SUMMARY_MAX_CHARS, SUMMARY_MAX_WORDS, ContextSettings, SizeCache
from nanohermes.calls import ResultFacts
from nanohermes.context.compaction import CutPlan, compact_history, latest_user_index, plan_cut, trim_to_budget
from nanohermes.context.digest import build_digest, file_ledger
from nanohermes.context.placeholders import placeholder_old_tool_outputs
from nanohermes.context.sanitize import sanitize_tool_pairs
from nanohermes.context.summary_input import render_summary_input, summary_prompt
from nanohermes.context.summary_message import digest_message, find_summary, summary_message
from nanohermes.text import head_tail_text

Summarize = Callable[[str, str], str]  # (system prompt, user text) -> summary; may raise
TOKEN_TARGET_SLACK = 0.05  # overshoot of a token-derived target that is tolerated without trimming
SUMMARY_ATTEMPTS = 2  # one retry, then the deterministic digest
# Reasoning models (qwen3, deepseek-r1 on local servers) put their thinking in the content.
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass
class CompactionReport:
    """What one fit() did, for the one-line UI notice and the session record."""

    forced: bool
    layers: list[str] = field(default_factory=list)  # "placeholders", "summary" | "digest", "trim"
    before_chars: int = 0
    after_chars: int = 0
    budget_chars: int = 0  # the target used (lower than the char budget under the token trigger)
    token_triggered: bool = False
    messages_before: int = 0
    messages_after: int = 0
    dropped: list[dict] = field(default_factory=list)  # removed from the working set (summary replaced them)
    placeholder_ids: list[str] = field(default_factory=list)  # tool call ids whose output was cleared
    trimmed: int = 0  # messages trimmed from the middle (layer d)
    summary: str | None = None  # the model's summary, when one was made
    digest: str | None = None  # the deterministic digest, when the summariser failed
    summary_error: str | None = None
    thrash_skipped: bool = False
    notices: list[str] = field(default_factory=list)

    @property
    def layer(self) -> str:
        """The most expensive layer used ("none" if nothing changed)."""
        return self.layers[-1] if self.layers else "none"

    @property
    def saved_fraction(self) -> float:
        return (self.before_chars - self.after_chars) / self.before_chars if self.before_chars else 0.0

    @property
    def over_budget(self) -> bool:
        return self.after_chars > self.budget_chars

    def one_line(self) -> str:
        """e.g. `context compacted (summary): 131,204 → 38,112 chars, 41 messages summarised`."""
        kind = "forced" if self.forced else "auto"
        line = f"context {kind} compaction ({' + '.join(self.layers) or 'nothing to do'}): "
        line += f"{self.before_chars:,} → {self.after_chars:,} chars"
        if self.dropped:
            line += f", {len(self.dropped)} messages summarised"
        if self.placeholder_ids:
            line += f", {len(self.placeholder_ids)} old tool outputs cleared"
        if self.trimmed:
            line += f", {self.trimmed} trimmed"
        return "; ".join([line, *self.notices])


class ContextEngine:
    """Keeps what is sent under budget. Create one per conversation (or call reset())."""

    def __init__(self, settings: ContextSettings | None = None, **overrides) -> None:
        """`settings` (default: ContextSettings()) with any field overridden by keyword."""
        self.settings = replace(settings or ContextSettings(), **overrides)
        self.sizes = SizeCache()
        self._auto_savings: list[float] = []  # saved fraction of each automatic summarising compaction
        self._length_after_auto = 0

    def reset(self) -> None:
        """Forget the anti-thrash history (new conversation)."""
        self._auto_savings.clear()
        self._length_after_auto = 0

    def size(self, messages: list[dict]) -> int:
        """Serialized size of what would be sent, in chars (cached per message)."""
        return self.sizes.total(messages)

    def fit(
        self,
        messages: list[dict],
        summarize: Summarize,
        *,
        force: bool = False,
        focus: str | None = None,
        token_estimate: int | None = None,
        token_limit: int | None = None,
        facts: Mapping[str, ResultFacts] | None = None,
    ) -> tuple[list[dict], CompactionReport | None]:
        """Return the messages to send and what was done (None: nothing, same list back).

        Call once every tool call has its result (after appending tool results) and before
        every request; a call still waiting for its result would get a stub. Over budget (chars, or
        `token_estimate > token_limit` when both are given) or with `force` (/compact), the
        layers run cheapest first: placeholders for old tool outputs (skipped when forced);
        if that leaves more than `compact_to` of the budget, a summary of everything before
        the last `keep_recent` messages via `summarize(system_prompt, user_text)` (retried
        once, then a deterministic digest; never raises); if still over the budget, trimming
        from the middle. messages[0] is never changed, the input list is never mutated, the
        latest user message is kept verbatim, and every tool call in the result has exactly
        one result right after it.

        After a provider context-length error, call with force=True and the prompt's token
        estimate and a lower limit (e.g. 70 % of it, or of the window the error reported):
        the char target shrinks in the same proportion, so even a short history is trimmed."""
        before = self.size(messages)
        target = self._target(before, token_estimate, token_limit)
        if not force and before <= target:
            self.sizes.forget_all_but(messages)
            return messages, None
        report = CompactionReport(forced=force, before_chars=before, budget_chars=target, messages_before=len(messages))
        report.token_triggered = target < self.settings.budget_chars
        current = messages
        if not force:
            current, report.placeholder_ids = placeholder_old_tool_outputs(
                current, self.settings.keep_recent, self.settings.placeholder_min_chars, facts)
            if any(a is not b for a, b in zip(current, messages)):
                report.layers.append("placeholders")
        if force or (self.size(current) > target * self.settings.compact_to and len(current) > self.settings.keep_recent + 1):
            current = self._summarise_if_allowed(current, summarize, focus, report, facts or {})
        # The token-derived target is an estimate: trimming a message for a 1 % overshoot would
        # rewrite the prompt (and lose a local server's prompt cache) for nothing.
        slack = 1.0 if force or not report.token_triggered else 1 + TOKEN_TARGET_SLACK
        if self.size(current) > target * slack:
            current = self._trim(current, target, report)
        current = sanitize_tool_pairs(current)
        report.after_chars, report.messages_after = self.size(current), len(current)
        if not force and report.layer in ("summary", "digest"):
            self._auto_savings.append(report.saved_fraction)
            self._length_after_auto = len(current)
        self.sizes.forget_all_but(current)
        return current, report

    def _target(self, total: int, token_estimate: int | None, token_limit: int | None) -> int:
        """The char budget, lowered in proportion when the token estimate is over its limit."""
        if token_estimate and token_limit and token_estimate > token_limit:
            return min(self.settings.budget_chars, total * token_limit // token_estimate)
        return self.settings.budget_chars

    def _thrashing(self, length: int) -> bool:
        """The last two automatic summaries each freed < 10 %, and the tail they could not
        touch is still there (fewer than keep_recent messages added since)."""
        recent = self._auto_savings[-2:]
        moved_on = length - self._length_after_auto >= self.settings.keep_recent
        return len(recent) == 2 and all(s < MIN_USEFUL_SAVING for s in recent) and not moved_on

    def _summarise_if_allowed(self, messages: list[dict], summarize: Summarize, focus: str | None, report: CompactionReport,
                              facts: Mapping[str, ResultFacts]) -> list[dict]:
        if not report.forced and self._thrashing(len(messages)):
            report.thrash_skipped = True
            report.notices.append(
                "automatic summary skipped: the last two freed under 10 % each (something large is in the "
                "recent messages); /compact forces one"
            )
            return messages
        plan = plan_cut(messages, self.settings.keep_recent)
        if plan is None or not plan.dropped(messages):
            report.notices.append(f"nothing to summarise: only the last {self.settings.keep_recent} messages are left")
            return messages
        return self._summarise(messages, plan, summarize, focus, report, facts)

    def _summarise(self, messages: list[dict], plan: CutPlan, summarize: Summarize, focus: str | None, report: CompactionReport,
                   facts: Mapping[str, ResultFacts]) -> list[dict]:
        dropped = plan.dropped(messages)
        previous = messages[plan.previous_summary_index] if plan.previous_summary_index else None
        history = [previous, *dropped] if previous else dropped  # the renderers read an old summary first
        kept_user = messages[plan.kept_user_index] if plan.kept_user_index is not None else None
        user_text = render_summary_input(history, None, focus, kept_user, max_chars=max(2_000, self.settings.budget_chars // 2), facts=facts)
        summary, report.summary_error = request_summary(summarize, user_text)
        if summary:
            ledger = file_ledger(history)  # paths kept mechanically: small models summarise badly
            report.summary = f"{summary}\n\n{ledger}" if ledger else summary
            note = summary_message(report.summary)
            report.layers.append("summary")
        else:
            report.digest = build_digest(history)
            note = digest_message(report.digest)
            report.layers.append("digest")
            report.notices.append(f"summary failed ({report.summary_error}); kept a digest instead")
        report.dropped = [m for i, m in enumerate(messages[1 : plan.start], 1) if i != plan.kept_user_index]
        return compact_history(messages, plan, note)

    def _trim(self, messages: list[dict], target: int, report: CompactionReport) -> list[dict]:
        protected = {0, find_summary(messages), latest_user_index(messages)} - {None}
        current, report.trimmed = trim_to_budget(messages, target, protected, self.sizes.size)
        if report.trimmed:
            report.layers.append("trim")
        if self.size(current) > target:
            report.notices.append(f"still over budget at {self.size(current):,} chars: what is left is protected")
        return current


def clean_summary(text: str) -> str:
    """The summary without reasoning blocks or surrounding space, cut to SUMMARY_MAX_CHARS."""
    text = _THINKING.sub("", text or "").strip()
    return head_tail_text(text, SUMMARY_MAX_CHARS, "\n…[summary cut]…\n")


def request_summary(summarize: Summarize, user_text: str, max_words: int = SUMMARY_MAX_WORDS) -> tuple[str | None, str | None]:
    """Ask `summarize` up to SUMMARY_ATTEMPTS times. Returns (summary, None) or (None, why it failed)."""
    error = None
    for _ in range(SUMMARY_ATTEMPTS):
        try:
            summary = clean_summary(summarize(summary_prompt(max_words), user_text))
        except Exception as exc:  # the contract: any failure of the callback means "use the digest"
            error = f"{type(exc).__name__}: {exc}"[:200]
            continue
        if summary:
            return summary, None
        error = "the summariser returned nothing"
    return None, error
