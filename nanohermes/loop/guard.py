"""The repeat guard: small models get stuck calling the same tool with the same arguments
(A A A) or two calls taking turns (A B A B A). Past REPEAT_LIMIT a call gets a refusal instead
of a result; past REPEAT_STOP the run stops."""

from __future__ import annotations

import json

REPEAT_LIMIT = 3  # the same call this many times in a row gets a refusal instead of a result
REPEAT_STOP = 5  # ...and this many ends the run: the model is stuck
# Calls whose result changes while their arguments do not: waiting on a background task is
# the same task_output call again and again. They are not counted (the step limit bounds them).
POLLING_TOOLS = frozenset({"task_output"})


class RepeatGuard:
    def __init__(self) -> None:
        self._keys: list[str] = []

    def reset(self) -> None:
        """A new user request may follow changes: old repeats don't count."""
        self._keys = []

    def see(self, name: str, arguments: str) -> str | None:
        """Record a call about to run. Returns the refusal text when it repeats a loop too often."""
        if name in POLLING_TOOLS:
            return None
        self._keys = (self._keys + [_call_key(name, arguments)])[-2 * REPEAT_STOP :]
        count = self.repeats()
        if count < REPEAT_LIMIT:
            return None
        return (f"error: this is repeat number {count} of the same {name} call (with the same arguments) "
                "in a loop; the result will not change. Try a different approach (other arguments, another tool, or answer).")

    @property
    def stuck(self) -> bool:
        return self.repeats() >= REPEAT_STOP

    def repeats(self) -> int:
        """How many times the latest call repeats a loop (A A A, or A B A B A)."""
        keys = self._keys
        if not keys:
            return 0
        same = 1
        while same < len(keys) and keys[-1 - same] == keys[-1]:
            same += 1
        turns = 1
        if len(keys) >= 2 and keys[-2] != keys[-1]:
            while len(keys) >= 2 * turns + 1 and keys[-1 - 2 * turns] == keys[-1] and keys[-2 * turns] == keys[-2]:
                turns += 1
        return max(same, turns)


def _call_key(name: str, arguments: str) -> str:
    try:
        return name + json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except (json.JSONDecodeError, TypeError):
        return name + str(arguments)
