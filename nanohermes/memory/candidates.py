"""Memory before forgetting: the summary request that drops messages also asks for the lasting
facts, preferences and decisions in them, in a delimited section after the note. This module
words that ask and parses the section back out (it never stays in the summary); secrets are
filtered here, so they never reach the caller. Pure: entry_points.save_candidates stores what
survives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nanohermes.memory.entry import KINDS, MAX_ENTRY_CHARS
from nanohermes.memory.ranking import normalise

MEMORY_MARKER = "[memories]"
MAX_CANDIDATES = 5  # per compaction: a few lasting things, not a second summary
DEFAULT_KIND = "fact"
MEMORY_INSTRUCTION = (  # paid uncached on every summary request: short
    f"After the note, write a line {MEMORY_MARKER}, then up to {MAX_CANDIDATES} lines `- kind: text` (kind: "
    "preference, fact or decision) for what later sessions should know: the user's lasting preferences, facts "
    "about the project, decisions. One short sentence each; nothing about this task's progress; never secrets "
    "(keys, tokens, passwords). `- none` if nothing."
)
# The section's heading as models write it: `[memories]`, `Memories:`, `## Memories`.
_MARKER_LINE = re.compile(r"^[ \t]*(?:#+[ \t]*|\*\*)?\[?memories\]?:?(?:\*\*)?[ \t]*$", re.IGNORECASE | re.MULTILINE)
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*(.+?)\s*$")
_KIND_PREFIX = re.compile(r"^\[?([A-Za-z]+)\]?\s*[:\]]\s*(.+)$")
_NOTHING = {"none", "n a", "nothing", "no memories"}
# What a secret looks like: a word that names one next to a value, a provider key's prefix,
# a private key block, or a long opaque run of letters and digits (a token, a hash, a key).
_SECRET_WORDS = re.compile(
    r"\b(password|passwd|passphrase|secret|credential|api[ _-]?key|access[ _-]?key|private[ _-]?key|"
    r"bearer|auth[ _-]?token|token\s*[:=]|(?:pw|pwd|pin)\b|pass(?:code)?\s*(?:is\b|[:=]))",
    re.IGNORECASE,
)
_KEY_PREFIXES = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_|xox[abprs]-|AKIA[0-9A-Z]{12,}|"
    r"AIza[0-9A-Za-z_-]{10,}|glpat-|-----BEGIN [A-Z ]*PRIVATE KEY)"
)
_OPAQUE = re.compile(r"[A-Za-z0-9+/=_-]{24,}")


@dataclass(frozen=True)
class Candidate:
    kind: str
    text: str


def memory_request(enabled: bool) -> str:
    """The part of a summary instruction that asks for memories ("" when switched off)."""
    return MEMORY_INSTRUCTION if enabled else ""


def looks_secret(text: str) -> bool:
    """Whether the text may hold a secret. Errs on the side of dropping: a memory lost is
    cheap, a key written to memory.json and injected into later prompts is not."""
    if _SECRET_WORDS.search(text) or _KEY_PREFIXES.search(text):
        return True
    return any(re.search(r"[A-Za-z]", run) and re.search(r"\d", run) for run in _OPAQUE.findall(text))


def split_memories(reply: str) -> tuple[str, list[Candidate]]:
    """(the summary without its memories section, the candidates in it that may be kept)."""
    match = _MARKER_LINE.search(reply)
    if match is None:
        return reply, []
    candidates: list[Candidate] = []
    seen: set[str] = set()
    for line in reply[match.end() :].splitlines():
        candidate = _candidate(line)
        if candidate is None or normalise(candidate.text) in seen:
            continue
        seen.add(normalise(candidate.text))
        candidates.append(candidate)
    return reply[: match.start()].rstrip(), candidates[:MAX_CANDIDATES]


def _candidate(line: str) -> Candidate | None:
    item = _ITEM.match(line)
    if item is None:
        return None
    text, kind = item.group(1).strip().strip("`").strip(), DEFAULT_KIND
    prefixed = _KIND_PREFIX.match(text)
    if prefixed and prefixed.group(1).lower() in KINDS:
        kind, text = prefixed.group(1).lower(), prefixed.group(2).strip()
    if not text or normalise(text) in _NOTHING or len(text) > MAX_ENTRY_CHARS or looks_secret(text):
        return None
    return Candidate(kind, text)
