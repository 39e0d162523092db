"""Dollars and cache misses in words, for every front end (the REPL, `-p`, ACP). The loop only
counts (events.Usage.cost_usd, provider/prices.py) and signals (events.CacheMiss). Pure."""

from __future__ import annotations

from nanohermes.events import CacheMiss, MissCause, Usage

UNKNOWN = "unknown"  # a model without a price: said so, never a made-up figure
CENT = 0.01


def dollars(amount: float) -> str:
    """$12.35, $0.0123, $0.000345: cents for a dollar or more, four decimals down to a cent, and
    below a cent six (one request of a small model costs hundredths of a cent)."""
    if amount >= 1:
        return f"${amount:,.2f}"
    return f"${amount:.4f}" if amount >= CENT else f"${amount:.6f}"


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
