"""Policies shared by the benchmarks: the deterministic stand-in summariser, and the seed's
compaction algorithm (120,000 chars, keep the last 10 messages, one system summary)."""

from __future__ import annotations

import re

from nanohermes.context.budget import CONTEXT_CHAR_BUDGET, SUMMARY_MAX_WORDS, total_size

SEED_KEEP_RECENT = 10
SEED_SUMMARY_PROMPT = (
    "You are a conversation summarizer for a coding agent. Write a concise summary of the excerpt below, "
    "preserving: the user's goal, key decisions, file paths changed, and current task state. Use at most "
    "300 words. Reply with the summary only."
)

# The stand-in summariser: extracts sentences, most useful first, up to 300 words.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")
_GOALISH = re.compile(r"\b(goal|don't|do not|must|never|keep)\b", re.IGNORECASE)
_CHANGE = re.compile(r"\b(edit_file|write_file|edited|changed|wrote)\b")
_PATH = re.compile(r"[\w./-]+\.(?:py|md|toml|gz)\b")
SENTENCE_MAX_WORDS = 30


def stand_in_summary(system_prompt: str, text: str) -> str:
    """Goal and constraint sentences first, then changes to files, then other path mentions;
    each at most 30 words, in their original order, 300 words in all. Deterministic."""
    sentences = list(dict.fromkeys(s.strip() for s in _SENTENCE.split(text) if s.strip()))

    def rank(s: str) -> int:
        if _GOALISH.search(s):
            return 0
        if _CHANGE.search(s) and _PATH.search(s):
            return 1
        return 2 if _PATH.search(s) else 3

    chosen, words = set(), 0
    for index in sorted(range(len(sentences)), key=lambda i: (rank(sentences[i]), i)):
        if rank(sentences[index]) == 3:
            break
        n = min(SENTENCE_MAX_WORDS, len(sentences[index].split()))
        if words + n > SUMMARY_MAX_WORDS:
            continue
        chosen.add(index)
        words += n
    return "\n".join(" ".join(sentences[i].split()[:SENTENCE_MAX_WORDS]) for i in sorted(chosen))


def seed_compact(messages: list[dict], summarize) -> list[dict] | None:
    """The seed design's compact_with(force=False), line for line."""
    if total_size(messages) <= CONTEXT_CHAR_BUDGET or len(messages) <= SEED_KEEP_RECENT + 1:
        return None
    start = len(messages) - SEED_KEEP_RECENT
    while start < len(messages) and messages[start]["role"] == "tool":
        start += 1
    if start <= 1:
        return None
    dropped = messages[1:start]
    excerpt = "".join(f"{m['role']}: {m['content'].strip()}\n" for m in dropped if (m.get("content") or "").strip())
    summary = summarize(SEED_SUMMARY_PROMPT, excerpt) if excerpt.strip() else ""
    note = (
        f"[Earlier conversation summary]\n{summary}"
        if summary
        else "[Earlier conversation was omitted to keep the context small]"
    )
    return [messages[0], {"role": "system", "content": note}, *messages[start:]]
