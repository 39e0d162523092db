"""The pure parts of ui/theme.py (the background from COLORFGBG or a terminal's OSC 11 answer) and
ui/notify.py (what a bell or a desktop notification writes)."""

from nanohermes.ui.notify import Notifier, sequence
from nanohermes.ui.theme import background_of_colorfgbg, background_of_reply, chosen


def test_colorfgbg_names_the_background_in_its_last_field():
    assert background_of_colorfgbg("15;0") == "dark" and background_of_colorfgbg("0;15") == "light"
    assert background_of_colorfgbg("0;default;7") == "light" and background_of_colorfgbg("default") is None
    assert background_of_colorfgbg(None) is None


def test_an_osc_11_answer_is_light_or_dark_by_its_luminance_in_any_digit_count():
    assert background_of_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;c") == "light"
    assert background_of_reply(b"\x1b]11;rgb:1e/1e/2e\x07") == "dark"
    assert background_of_reply(b"\x1b]11;rgb:fdf6/f6e3/e3e3\x1b\\") == "light"  # solarized light
    assert background_of_reply(b"\x1b[?62;c") is None  # a terminal that ignores OSC 11 answers DA1 only


def test_a_set_theme_or_no_color_asks_nothing():
    def never():
        raise AssertionError("asked the terminal")

    assert chosen("light", {}, never) == "light" and chosen("dark", {}, never) == "dark"
    assert chosen("auto", {"NO_COLOR": "1"}, never) == "dark"
    assert chosen("auto", {"COLORFGBG": "0;15"}, never) == "light"
    assert chosen("auto", {}, lambda: b"") == "dark"  # no answer: dark, rich's own colours


def test_a_bell_is_bel_and_osc_is_both_sequences_with_no_control_characters_in_the_text():
    assert sequence("bell", "x") == "\a" and sequence("off", "x") == ""
    osc = sequence("osc", "approval needed;\x1b[31m rm")
    assert osc == "\x1b]9;NanoHermes: approval needed  [31m rm\a\x1b]777;notify;NanoHermes;approval needed  [31m rm\a"


class Tty:
    def __init__(self):
        self.written = ""

    def isatty(self):
        return True

    def write(self, text):
        self.written += text

    def flush(self):
        pass


def test_the_notifier_waits_notify_after_seconds_since_the_user_last_acted():
    now = [0.0]
    out = Tty()
    notifier = Notifier("bell", 30, out, clock=lambda: now[0])
    now[0] = 29.0
    notifier.waiting("the turn is done")
    assert out.written == ""
    now[0] = 31.0
    notifier.waiting("the turn is done")
    assert out.written == "\a"
    notifier.seen()
    notifier.waiting("approval needed")
    assert out.written == "\a"
