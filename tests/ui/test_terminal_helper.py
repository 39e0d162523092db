"""The pty helper itself: a wait on the screen must not eat what a later `expect` waits for."""

from __future__ import annotations

import pyte

from tests.support.terminal import Child, Terminal, _Feed


def printing(command: str) -> Terminal:
    """A Terminal round any command (not NanoHermes): the helper's reads, alone."""
    term = Terminal.__new__(Terminal)
    term.rows, term.cols = 5, 40
    term.screen = pyte.HistoryScreen(40, 5, history=100, ratio=0.5)
    term.child = Child("sh", ["-c", command], encoding="utf-8", dimensions=(5, 40))
    term.child.logfile_read = _Feed(pyte.Stream(term.screen))
    return term


def test_what_the_last_read_of_a_wait_brought_past_the_line_waited_for_is_still_expected():
    """One write, one read: the line waited for and the next come together (a loaded machine's turn end).
    Without the read put back, the expect would wait for bytes already read, and time out."""
    term = printing("printf 'step 3\\nsession over\\n'; sleep 600")
    try:
        term.wait_screen("step 3")
        term.child.expect("session over")  # already read: no wait at all (should printf write twice, the hang guard)
        assert any("session over" in line for line in term.display())
    finally:
        term.child.terminate(force=True)
