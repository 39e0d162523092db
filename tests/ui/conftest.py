"""`keep_screen`: a screen worth showing a reader (a note, an issue's closing comment), kept only
when asked. scripts/dump_screens.py sets KEEP_SCREENS_TO to a file and runs the tests that keep
one; every other run keeps nothing and prints nothing."""

import os

import pytest

KEEP_SCREENS_TO = "KEEP_SCREENS_TO"  # a file: each kept screen is appended to it as a Markdown section


@pytest.fixture
def keep_screen():
    def keep(title: str, term) -> None:
        target = os.environ.get(KEEP_SCREENS_TO)
        if target:
            with open(target, "a", encoding="utf-8") as out:
                out.write(f"## {title}\n\n```text\n{term.capture()}\n```\n\n")

    return keep
