"""The spending cap (loop/spending.py): a warning once at 80 %, the stop before the next request
at the cap, and one warning per model whose requests cannot be counted."""

import pytest

from nanohermes.events import Notice, StopCode
from nanohermes.loop.spending import SpendingCap, dollars
from nanohermes.loop.turn import StopTurn


def test_the_cap_warns_once_at_four_fifths_and_stops_at_the_cap():
    said = []
    cap = SpendingCap(1.0, said.append)
    cap.add(0.5, "m")
    cap.check()
    assert said == []
    cap.add(0.3, "m")
    cap.add(0.1, "m")
    (warning,) = said
    assert isinstance(warning, Notice) and warning.level == "warning"
    assert warning.text.startswith("spent $0.80 of max_cost $1.00 (80%)")
    cap.check()  # 0.90: under the cap, the turn goes on
    cap.add(0.1, "m")
    with pytest.raises(StopTurn) as stop:
        cap.check()
    assert stop.value.code is StopCode.MAX_COST and stop.value.detail == {"spent": "$1.00", "max_cost": "$1.00"}


def test_an_unpriced_model_is_said_once_and_never_stops_the_run():
    said = []
    cap = SpendingCap(0.01, said.append)
    for _ in range(3):
        cap.add(None, "local-model")
    cap.check()
    (warning,) = said
    assert (
        "max_cost $0.01 cannot be enforced for local-model" in warning.text and '[prices."local-model"]' in warning.text
    )


def test_no_cap_counts_and_says_nothing():
    said = []
    cap = SpendingCap(None, said.append)
    cap.add(1000.0, "m")
    cap.add(None, "m")
    cap.check()
    assert said == []


def test_dollars_are_cents_or_the_first_figures_below_a_cent():
    assert [dollars(x) for x in (0, 0.004213, 0.42, 1234.5)] == ["$0.00", "$0.0042", "$0.42", "$1,234.50"]
