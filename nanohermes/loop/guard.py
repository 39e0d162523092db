"""The repeat guard: small models get stuck calling the same tool with the same arguments
(A A A), two calls taking turns (A B A B A), or three (A B C A B C A: Qwen2.5-Coder-1.5B read
a file, made the same no-op edit, ran the same failing test, eleven steps running). Past
REPEAT_LIMIT a call gets a refusal instead of a result; past REPEAT_STOP the run stops.

Longer loops are told, not refused: asked which port a service uses, Qwen2.5-Coder-1.5B read
each of four files and grepped it for the port it had guessed, then began the round again,
until the step limit. A look (read, grep, glob) that repeats an earlier one of the same request
and gets the very same result has a note added saying so; the result still comes (a compaction
may have taken the earlier one out of the context). A failed call or a change in between makes
a look again a fresh one: "old_text not found, re-read the file" asks for exactly that."""

from __future__ import annotations

import json

REPEAT_LIMIT = 3  # the same call this many times in a row gets a refusal instead of a result
REPEAT_STOP = 5  # ...and this many ends the run: the model is stuck
MAX_PERIOD = 3  # loops of up to this many calls count: read, the same no-op edit, the same failing test
# Calls whose result changes while their arguments do not: waiting on a background task is
# the same task_output call again and again. They are not counted (the step limit bounds them).
POLLING_TOOLS = frozenset({"task_output"})
LOOK_TOOLS = frozenset({"read_file", "grep", "glob"})  # a repeat with the same result has learned nothing
SAME_LOOK = (
    "NanoHermes: this is the same {name} call you made earlier for this request, and the result has not "
    "changed: it has told you what it can."
)


class RepeatGuard:
    def __init__(self) -> None:
        self._keys: list[str] = []
        self._looks: set[tuple[str, int]] = set()

    def reset(self) -> None:
        """A new user request may follow changes: old repeats don't count."""
        self._keys = []
        self._looks = set()

    def forget_looks(self) -> None:
        """After a failed call or a change: a look again is what a failed edit asks for."""
        self._looks = set()

    def same_look(self, name: str, arguments: str, result: str) -> str | None:
        """The note for a look that repeats an earlier one of this request, result and all."""
        if name not in LOOK_TOOLS:
            return None
        look = (_call_key(name, arguments), hash(result))
        if look in self._looks:
            return SAME_LOOK.format(name=name)
        self._looks.add(look)
        return None

    def see(self, name: str, arguments: str) -> str | None:
        """Record a call about to run. Returns the refusal text when it repeats a loop too often."""
        if name in POLLING_TOOLS:
            return None
        self._keys = (self._keys + [_call_key(name, arguments)])[-MAX_PERIOD * REPEAT_STOP :]
        count = self.repeats()
        if count < REPEAT_LIMIT:
            return None
        return (
            f"error: this is repeat number {count} of the same {name} call (with the same arguments) "
            "in a loop; the result will not change. "
            "Try a different approach (other arguments, another tool, or answer)."
        )

    @property
    def stuck(self) -> bool:
        return self.repeats() >= REPEAT_STOP

    def repeats(self) -> int:
        """How many times the latest call repeats a loop of one, two or three calls (A A A,
        A B A B A, A B C A B C A): the most times it occurs in a run of the same calls taken
        in the same order."""
        keys = self._keys
        if not keys:
            return 0
        best = 1
        for period in range(1, MAX_PERIOD + 1):
            matched = 0  # how many of the latest calls are the call `period` before them
            while matched < len(keys) - period and keys[-1 - matched] == keys[-1 - matched - period]:
                matched += 1
            best = max(best, 1 + (matched + period - 1) // period)
        return best


def _call_key(name: str, arguments: str) -> str:
    try:
        return name + json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except (json.JSONDecodeError, TypeError):
        return name + str(arguments)
