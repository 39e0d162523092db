"""Dollars on the screen of the real REPL (a pty): the line after each turn and /cost, for a
priced model through the scripted server reporting cached tokens."""

import pytest

from tests.support.scripted_server import text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

FIRST = {"prompt_tokens": 12_000, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 0}}
SECOND = {"prompt_tokens": 12_500, "completion_tokens": 200, "prompt_tokens_details": {"cached_tokens": 11_904}}
LOW = {"prompt_tokens": 12_900, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 0}}


def test_the_turn_line_cost_and_a_cache_miss_on_screen(server, workspace, keep_screen):
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output a million (test_cost.py checks them
    # against the database): 0.00198 + 0.0011022 + 0.001947
    server.add(text("One.", usage=FIRST), text("Two.", usage=SECOND), text("Three.", usage=LOW))
    term = Terminal(server, workspace, "--model", "gpt-4o-mini", "--session", "dollars", rows=24, cols=160)
    for task in ("first", "second", "third"):
        term.send(f"{task}\r")
        term.expect("session ")
        term.ready()
    term.send("/cost\r")
    term.wait_screen("per million tokens")
    term.settle()
    keep_screen("dollars per turn and per session, a cache miss, /cost", term)
    screen = "\n".join(term.display())
    assert "12,000 in · 300 out · 1 request · context 1% full · 0% cached · $0.00198 · " in screen
    assert "95% cached · $0.001102 · " in screen and "session 24,500 in / 500 out / $0.003082\n" in screen
    assert "· cache miss: 0% cached (was 95%): the prefix was unchanged; the provider did not reuse its cache" in screen
    assert "0% cached · $0.001947 · " in screen and "session 37,400 in / 520 out / $0.005029\n" in screen
    assert "\nthis session: 3 requests · 37,400 in (32% cached) · 520 out · $0.005029\n" in screen
    assert "\nlast request (gpt-4o-mini): 12,900 in (0% cached) · 20 out · $0.001947\n" in screen
    assert "\ngpt-4o-mini: $0.15 input · $0.075 cached input · $0.6 output per million tokens (genai-prices" in screen
    assert term.exit() == 0
