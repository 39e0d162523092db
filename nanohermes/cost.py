"""Dollars and cache misses in words, for every front end (the REPL, `-p`, ACP). The loop only
counts (events.Usage.cost_usd, provider/prices.py) and signals (events.CacheMiss). Pure."""

from __future__ import annotations

import math

from nanohermes.events import CacheMiss, MissCause, Usage

UNKNOWN = "unknown"  # a model without a price: said so, never a made-up figure
SIGNIFICANT = 4  # digits of a sum below a dollar: enough to check against a bill


def dollars(amount: float) -> str:
    """$12.35, $0.01755, $0.000345: cents for a dollar or more, below it four significant digits
    (one request of a small model costs hundredths of a cent), trailing zeros dropped."""
    if amount >= 1 or amount <= 0:
        return f"${amount:,.2f}"
    decimals = SIGNIFICANT - 1 - math.floor(math.log10(amount))
    shown = f"{amount:.{decimals}f}".rstrip("0")
    return "$" + (shown if len(shown.partition(".")[2]) >= 2 else f"{amount:.2f}")


def cost_text(usage: Usage | None) -> str:
    """`$0.000345`, `unknown`, or `$0.000345 + 2 requests unpriced` (a model without a price among them)."""
    if usage is None or usage.cost_usd is None:
        return UNKNOWN
    text = dollars(usage.cost_usd)
    if usage.unpriced:
        text += f" + {usage.unpriced} request{'s' if usage.unpriced != 1 else ''} unpriced"
    return text


_CAUSES = {
    MissCause.TOOLS: "the tool list changed",
    MissCause.SYSTEM: "the system message changed",
    MissCause.MODE: "the mode switched ({before} → {after}), which rewrites the system message",
    MissCause.MODEL: "the model switched ({before} → {after}); the new model's cache starts cold",
    MissCause.COMPACTION: "earlier messages were compacted",
    MissCause.IDLE: "the prefix was unchanged; the provider's cache likely expired after {idle} minutes idle",
    MissCause.UNKNOWN: "the prefix was unchanged; the provider did not reuse its cache",
}


def miss_line(miss: CacheMiss) -> str:
    """`cache miss: 12% cached (was 91%): the tool list changed`."""
    why = _CAUSES[miss.cause].format(before=miss.before, after=miss.after, idle=miss.idle_minutes)
    return f"cache miss: {100 * miss.share:.0f}% cached (was {100 * miss.previous_share:.0f}%): {why}"
