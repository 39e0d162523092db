"""ContextEngine: the one stateful piece. It decides when to compact (the high-water mark) and
runs the layers, cheapest first, down to the low-water mark; it keeps what they need across
calls (sizes, the anti-thrash history)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from nanohermes.calls import ResultFacts
from nanohermes.context.budget import (
    EXCERPT_MIN_CHARS,
    MAX_IMAGES_PER_REQUEST,
    MIN_USEFUL_SAVING,
    PLACEHOLDER_SLACK_CHARS,
    SUMMARY_REPLY_TOKENS,
    SUMMARY_RESERVE_CHARS,
    SUMMARY_TYPICAL_CHARS,
    THRASH_RECOVERY_MESSAGES,
    TRIM_LAST_RESORT_KEEP_CHARS,
    ContextSettings,
    SizeCache,
)
from nanohermes.context.cut import CutPlan, compact_history, latest_user_index, plan_cut, trim_to_budget
from nanohermes.context.digest import build_digest, file_ledger, without_ledger
from nanohermes.context.excerpt import render_excerpt
from nanohermes.context.images import IMAGES, cap_images, count_images, without_images
from nanohermes.context.placeholders import clear_attachment, clear_old_outputs, points_to_attachment
from nanohermes.context.sanitize import sanitize_tool_pairs
from nanohermes.context.summary import (
    Summarize,
    SummaryRequest,
    digest_message,
    find_summary,
    instruction,
    request_summary,
    summary_message,
    summary_prompt,
    summary_text,
)
from nanohermes.memory.candidates import Candidate, memory_request


@dataclass
class CompactionReport:
    """What one fit() did, for the one-line UI notice and the session record."""

    forced: bool
    layers: list[str] = field(default_factory=list)  # "placeholders", "summary" | "digest", "trim"
    before_chars: int = 0
    after_chars: int = 0
    high_water_chars: int = 0  # the trigger used (lower than the char mark under a token trigger)
    low_water_chars: int = 0  # the target
    token_triggered: bool = False
    messages_before: int = 0
    messages_after: int = 0
    dropped: list[dict] = field(default_factory=list)  # the messages the summary stands in for
    placeholder_ids: list[str] = field(default_factory=list)  # tool call ids whose output was cleared
    images_cleared: int = 0  # old images cleared (over the count cap, or with old outputs)
    trimmed: int = 0  # messages trimmed from the middle
    summary: str | None = None  # the model's summary (with its file ledger), when one was made
    digest: str | None = None  # the deterministic digest, when the summariser failed
    summary_error: str | None = None
    summary_reused_prefix: bool | None = None  # how the summary was asked for (None: no summary)
    memories: list[Candidate] = field(default_factory=list)  # lasting facts the summary found in `dropped`
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
        return self.after_chars > self.high_water_chars

    def one_line(self) -> str:
        """What the user is told, in the words of what they see: e.g. `context compacted automatically:
        131,204 → 38,112 chars (41 messages summarised, 3 old tool outputs cleared)`."""
        if not self.layers:
            return "; ".join(["context not compacted", *self.notices])
        done = []
        if self.placeholder_ids:
            done.append(f"{len(self.placeholder_ids)} old tool outputs cleared")
        if self.images_cleared:
            done.append(f"{self.images_cleared} old image{'s' if self.images_cleared != 1 else ''} cleared")
        if self.dropped:
            how = " without the model (its summary failed: a digest of them)" if "digest" in self.layers else ""
            done.append(f"{len(self.dropped)} messages summarised{how}")
        if self.trimmed:
            done.append(f"{self.trimmed} messages trimmed from the middle")
        kind = "on request" if self.forced else "automatically"
        line = f"context compacted {kind}: {self.before_chars:,} → {self.after_chars:,} chars"
        return "; ".join([line + (f" ({', '.join(done)})" if done else ""), *self.notices])


@dataclass
class _Pass:
    """One compaction's inputs besides the messages, as fit() was given them."""

    summarize: Summarize
    report: CompactionReport
    focus: str | None
    token_estimate: int | None
    facts: Mapping[str, ResultFacts]
    overflow: bool
    fixed_tokens: int = 0  # of token_estimate, what is not the messages (tool schemas, a template)


class ContextEngine:
    """Keeps what is sent under the high-water mark. One per conversation (or call reset()).
    With `ask_for_memories`, a summary request also asks for what the dropped messages hold
    that long-term memory should keep; the report carries it (memory/candidates.py)."""

    def __init__(self, settings: ContextSettings | None = None, **overrides) -> None:
        """`settings` (default: ContextSettings()) with any field overridden by keyword."""
        self.settings = replace(settings or ContextSettings(), **overrides)
        self.ask_for_memories = False
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

    def marks(self, chars: int, token_estimate: int | None, fixed_tokens: int = 0) -> tuple[int, int]:
        """(high, low) water marks in chars for messages of `chars` chars whose prompt is
        estimated at `token_estimate` tokens, `fixed_tokens` of them not the messages' (the tool
        schemas: they stay whatever is cut): what the token marks leave the messages, turned into
        chars at the messages' own chars-per-token, never above the char marks."""
        high = self.settings.high_water_chars
        if token_estimate and self.settings.high_water_tokens:
            room = max(0, self.settings.high_water_tokens - fixed_tokens)
            high = min(high, room * chars // max(1, token_estimate - fixed_tokens))
        return high, int(high * self.settings.low_water)

    def fit(
        self,
        messages: list[dict],
        summarize: Summarize,
        *,
        force: bool = False,
        focus: str | None = None,
        token_estimate: int | None = None,
        facts: Mapping[str, ResultFacts] | None = None,
        overflow: bool = False,
        fixed_tokens: int = 0,
    ) -> tuple[list[dict], CompactionReport | None]:
        """Return the messages to send and what was done (None: nothing, the same list back).

        Call once every tool call has its result and before every request. Below the high-water
        mark (chars, or `token_estimate` tokens against a known window, `fixed_tokens` of them
        what is sent besides the messages: the tool schemas) nothing changes: requests
        only append. Above it, or with `force` (/compact), one compaction brings the messages to
        the low-water mark: old tool outputs are cleared in one batch if that is enough (not when
        forced); else everything before the kept tail is summarised (retried once, then a
        deterministic digest; never raises); a tail still over the high-water mark is trimmed
        from the middle down to the low-water mark. `overflow`: the provider rejected the last
        request as too long, so the summary cannot resend the conversation and anything over
        the low-water mark is trimmed.
        messages[0] is never changed, the input list is never mutated, the latest user message
        stays verbatim, and every tool call in the result has exactly one result right after it.
        More than MAX_IMAGES_PER_REQUEST images: the oldest are cleared first, whatever the size."""
        before = self.size(messages)
        high, low = self.marks(before, token_estimate, fixed_tokens)
        capped, over_cap = cap_images(messages, MAX_IMAGES_PER_REQUEST)
        if not force and before <= high and not over_cap:
            self.sizes.forget_all_but(messages)
            return messages, None
        report = CompactionReport(
            forced=force,
            before_chars=before,
            high_water_chars=high,
            low_water_chars=low,
            messages_before=len(messages),
            token_triggered=high < self.settings.high_water_chars,
            layers=["images"] if over_cap else [],  # the oldest images beyond the cap, cleared whatever the size
            images_cleared=over_cap,
        )
        run = _Pass(summarize, report, focus, token_estimate, facts or {}, overflow, fixed_tokens)
        within = not force and self.size(capped) <= high
        current = capped if within else self._compact(capped, run)
        if self.size(current) > (low if overflow else high):  # a message too big for any layer: cut it deeply, once
            current = self._trim(current, low, report)
        current = sanitize_tool_pairs(current)
        report.after_chars, report.messages_after = self.size(current), len(current)
        if not force and {"summary", "digest"} & set(report.layers):
            self._auto_savings.append(report.saved_fraction)
            self._length_after_auto = len(current)
        self.sizes.forget_all_but(current)
        return current, report

    def _compact(self, messages: list[dict], run: _Pass) -> list[dict]:
        report = run.report
        if not report.forced and self._thrashing(len(messages)):
            report.thrash_skipped = True
            report.notices.append(
                "automatic compaction skipped: the last two freed under 10 % each (something large "
                "that cannot be cut is in the context); /compact forces one"
            )
            return messages
        # The kept tail gets what the low-water mark leaves after the system message and a summary.
        room = report.low_water_chars - SUMMARY_RESERVE_CHARS - self.sizes.size(messages[0])
        keep = 0 if report.forced else max(0, room)
        plan = plan_cut(messages, keep, self.sizes.size)
        if plan is None:
            report.notices.append("nothing to summarise: only the latest messages are left")
            return messages
        if not report.forced:
            cleared = self._placeholders_within(messages, plan, report, run.facts)
            if cleared is not None:  # enough without a model call
                return cleared
        return self._summarise(messages, plan, run)

    def _placeholders_within(
        self, messages: list[dict], plan: CutPlan, report: CompactionReport, facts: Mapping[str, ResultFacts]
    ) -> list[dict] | None:
        """Old outputs cleared in one batch, keeping verbatim as many recent rounds as fit.

        The target is the low-water mark. Where even a summary could not get there (a small
        window: the system message, a summary and the latest round alone are over it), clearing
        may leave up to PLACEHOLDER_SLACK_CHARS more than a summary would: no model request, and
        only the newly cleared outputs are rewritten. None when clearing cannot make it."""
        kept = self.size(messages[plan.start :]) + (
            self.sizes.size(self._kept_user(messages, plan)) if plan.kept_user else 0
        )
        after_summary = self.sizes.size(messages[0]) + SUMMARY_TYPICAL_CHARS + kept
        target = (
            report.low_water_chars
            if after_summary <= report.low_water_chars
            else after_summary + PLACEHOLDER_SLACK_CHARS
        )
        widest = plan_cut(messages, report.low_water_chars, self.sizes.size) or plan  # no summary to make room for
        starts = [i for i in range(widest.start, len(messages)) if messages[i].get("role") != "tool"]
        for start in starts:
            cleared, ids = clear_old_outputs(
                messages, start, self.settings.clear_chars, facts, self.settings.argument_chars
            )
            attachment = plan.kept_user is not None and cleared[plan.kept_user] is not messages[plan.kept_user]
            images = count_images(messages) - count_images(cleared)
            if (ids or attachment or images) and self.size(cleared) <= target:
                report.layers.append("placeholders")
                report.placeholder_ids = ids
                report.images_cleared += images
                return cleared
        return None

    def _thrashing(self, length: int) -> bool:
        """The last two automatic summaries each freed < 10 %, and the conversation has not
        moved on since (fewer than THRASH_RECOVERY_MESSAGES added)."""
        recent = self._auto_savings[-2:]
        moved_on = length - self._length_after_auto >= THRASH_RECOVERY_MESSAGES
        return len(recent) == 2 and all(s < MIN_USEFUL_SAVING for s in recent) and not moved_on

    def _summarise(self, messages: list[dict], plan: CutPlan, run: _Pass) -> list[dict]:
        report = run.report
        report.dropped = plan.dropped(messages)
        previous = summary_text(messages[plan.previous_summary]) if plan.previous_summary else None
        request = self._summary_request(messages, plan, previous, run)
        report.summary_reused_prefix = request.reuses_prefix
        summary, report.summary_error, memories = request_summary(run.summarize, request)
        report.memories = memories if self.ask_for_memories else []
        ledger = file_ledger(report.dropped, previous)  # paths kept mechanically: small models summarise badly
        if summary:
            report.summary = "\n\n".join(part for part in (without_ledger(summary), ledger) if part)
            note = summary_message(report.summary)
            report.layers.append("summary")
        else:
            report.digest = build_digest(report.dropped, previous)
            note = digest_message(report.digest)
            report.layers.append("digest")
            report.notices.append(f"summary failed ({report.summary_error}); kept a digest instead")
        if plan.kept_user is not None:  # the model has acted on the files the request brought
            messages = [*messages[: plan.kept_user], self._kept_user(messages, plan), *messages[plan.kept_user + 1 :]]
        return compact_history(messages, plan, note)

    def _kept_user(self, messages: list[dict], plan: CutPlan) -> dict:
        """The latest user message as a compaction keeps it: its words verbatim, its attached files a
        line each once the model has acted on them (not while a kept read_file result points back to them)."""
        if points_to_attachment(messages[plan.start :]):
            return messages[plan.kept_user]
        kept = clear_attachment(messages[plan.kept_user], self.settings.placeholder_min_chars)
        return without_images(kept) if IMAGES in kept else kept

    def _summary_request(self, messages: list[dict], plan: CutPlan, previous: str | None, run: _Pass) -> SummaryRequest:
        """The conversation up to the cut plus the instruction, when the summary model is the
        conversation's and that fits the window; else a summary prompt and an excerpt."""
        reuse = self.settings.summary_reuses_prefix and not run.overflow
        if reuse and self._prefix_fits(messages, plan, run):
            ask = instruction(run.focus, plan.kept_user is not None, self.ask_for_memories)
            return SummaryRequest([*messages[: plan.start], ask], True)
        room = max(EXCERPT_MIN_CHARS, run.report.high_water_chars // 2)
        excerpt = render_excerpt(run.report.dropped, previous, run.focus, plan.kept_user is not None, room, run.facts)
        excerpt = "\n\n".join(part for part in (excerpt, memory_request(self.ask_for_memories)) if part)
        return SummaryRequest(
            [{"role": "system", "content": summary_prompt()}, {"role": "user", "content": excerpt}], False
        )

    def _prefix_fits(self, messages: list[dict], plan: CutPlan, run: _Pass) -> bool:
        window, token_estimate = self.settings.window, run.token_estimate
        if not window or not token_estimate:
            return True  # an unknown window: the conversation was sent whole before, so it fits
        total, fixed = self.size(messages), min(run.fixed_tokens, token_estimate)
        prefix_tokens = fixed + (token_estimate - fixed) * self.size(messages[: plan.start]) // max(1, total)
        instruction_tokens = len(instruction(None, True, self.ask_for_memories)["content"]) // 3
        return prefix_tokens + instruction_tokens + SUMMARY_REPLY_TOKENS <= window

    def _trim(self, messages: list[dict], target: int, report: CompactionReport) -> list[dict]:
        latest_user = latest_user_index(messages)
        protected = {0, find_summary(messages), latest_user} - {None}
        current, report.trimmed = trim_to_budget(messages, target, protected, self.sizes.size)
        if (
            self.size(current) > target
            and latest_user is not None
            and self.sizes.size(current[latest_user]) > target // 2
        ):
            # the user's own message is what does not fit: cut it once rather than resend it and fail
            protected -= {latest_user}
            current, trimmed = trim_to_budget(current, target, protected, self.sizes.size)
            report.trimmed += trimmed
        if self.size(current) > target:  # dense text: what the usual floor keeps is still too much
            current, trimmed = trim_to_budget(current, target, protected, self.sizes.size, TRIM_LAST_RESORT_KEEP_CHARS)
            report.trimmed += trimmed
        if latest_user is not None and current[latest_user] is not messages[latest_user]:
            report.notices.append("your message was too long for the model's context and was cut in the middle")
        if report.trimmed:
            report.layers.append("trim")
        if self.size(current) > target:
            report.notices.append(f"still over the context limit at {self.size(current):,} chars: nothing left to cut")
        return current
