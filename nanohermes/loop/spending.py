"""The spending cap (`max_cost`): the dollars of every request of a session — or of a `-p` run,
or an editor's session — its compaction summaries and its helper agents' requests included.

At WARN_SHARE of the cap the user is warned, once; at the cap the turn stops before its next
request (StopCode.MAX_COST), and with no final request (that would spend more). A request whose
model has no price cannot be counted: the cap says so once, and cannot be enforced for it.
"""

from __future__ import annotations

from collections.abc import Callable

from nanohermes import events as ev
from nanohermes.loop.turn import StopTurn

# The warning leaves a fifth of the budget: time to stop a run by hand, or to let it finish.
WARN_SHARE = 0.8


def dollars(amount: float) -> str:
    """`$0.42`, `$0.0031`: cents, or the first figures of an amount below a cent."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.2g}"


class SpendingCap:
    def __init__(self, limit: float | None, emit: Callable[[object], None]):
        self.limit, self.emit = limit, emit
        self.spent = 0.0
        self._warned = False
        self._unpriced: set[str] = set()  # models said to be uncounted

    def add(self, cost: float | None, model: str) -> None:
        """One request's dollars (None: no price is known for `model`, or no usage came back)."""
        if self.limit is None:
            return
        if cost is None:
            if model not in self._unpriced:
                self._unpriced.add(model)
                self.emit(ev.Notice(unenforceable(self.limit, model), "warning"))
            return
        self.spent += cost
        if not self._warned and self.spent >= WARN_SHARE * self.limit:
            self._warned = True
            share = min(self.spent / self.limit, 9.99)
            self.emit(
                ev.Notice(
                    f"spent {dollars(self.spent)} of max_cost {dollars(self.limit)} ({share:.0%}): "
                    "the run stops at the cap, before its next request",
                    "warning",
                )
            )

    def check(self) -> None:
        """Before a request: StopTurn(MAX_COST) once the cap is reached."""
        if self.limit is not None and self.spent >= self.limit:
            raise StopTurn(ev.StopCode.MAX_COST, spent=dollars(self.spent), max_cost=dollars(self.limit))


def unenforceable(limit: float, model: str) -> str:
    return (
        f"max_cost {dollars(limit)} cannot be enforced for {model}: no price is known for it, so its requests "
        f'are not counted (set [prices."{model}"] in config.toml)'
    )
