"""TurnRunner in this process: a turn is stopped by exactly one KeyboardInterrupt, however many
stop signals arrive together (a cancel and a SIGTERM when the editor goes away)."""

import contextlib
import signal
import threading

import pytest

from nanohermes.acp.runner import TurnRunner
from nanohermes.signals import deferred


@pytest.fixture
def runner():
    saved = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    runner = TurnRunner()
    signal.signal(signal.SIGTERM, runner.on_terminate)  # as `nanohermes acp` does
    yield runner
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def both_stops_pending(runner, key: str) -> None:
    """A cancel (SIGINT) and a SIGTERM, delivered to this thread at the same moment."""
    main = threading.main_thread().ident
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        assert runner.interrupt(key)
        signal.pthread_kill(main, signal.SIGTERM)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


@pytest.mark.parametrize("shield", [deferred, contextlib.nullcontext], ids=["shielded", "unshielded"])
def test_a_cancel_and_a_sigterm_together_stop_the_turn_once_and_its_clean_up_runs(runner, shield):
    """Unshielded, nothing in the job checks for signals again: the runner must run the SIGTERM
    handler waiting behind the cancel itself, or the process would wait for a next prompt."""
    steps = []

    def turn():
        try:
            both_stops_pending(runner, "s1")
            for _ in range(100_000):  # the turn's work: the pending handlers run in here
                pass
            steps.append("the turn ran on")
        except KeyboardInterrupt:
            steps.append("stopped")
            for _ in range(100_000):  # where a second KeyboardInterrupt would land: before the shield
                pass
            with shield():  # the loop's clean-up: answer every open call, save
                steps.append("cleaned up")
        return "answer"

    job = runner.submit("s1", turn)
    hung = []
    watchdog = threading.Timer(5, lambda: (hung.append(True), runner.stop()))  # as the editor's stdin closing
    watchdog.start()
    runner.serve_forever()  # SIGTERM ends it once the job is done
    watchdog.cancel()
    assert not hung, "the SIGTERM did not end the runner"
    assert steps == ["stopped", "cleaned up"]
    assert job.result() == "answer" and runner.stopped_by == signal.SIGTERM


def test_a_second_cancel_of_the_same_turn_is_not_sent(runner):
    seen = []

    def turn():
        try:
            assert runner.interrupt("s1")
            for _ in range(100_000):
                pass
        except KeyboardInterrupt:
            seen.append(runner.interrupt("s1"))
        runner.stop()
        return "done"

    job = runner.submit("s1", turn)
    runner.serve_forever()
    assert seen == [False] and job.result() == "done"
