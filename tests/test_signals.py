"""held() and deferred(): a signal that lands in the block waits for its end, then reaches its
own handler (the CLI's Terminated, ACP's stop-the-turn); deferred() drops a second Ctrl-C."""

import os
import signal

import pytest

from nanohermes.errors import Terminated
from nanohermes.signals import deferred, held, install


@pytest.fixture
def handlers():
    """Put SIGINT, SIGTERM and SIGHUP back as they were."""
    saved = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_a_ctrl_c_inside_held_lands_after_the_block(handlers):
    steps = []
    with pytest.raises(KeyboardInterrupt), held():
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("the block ran to its end")
    assert steps == ["the block ran to its end"]


def test_a_held_signal_reaches_the_handler_that_was_installed(handlers):
    seen = []
    signal.signal(signal.SIGHUP, lambda signum, frame: seen.append(signum))
    with held():
        os.kill(os.getpid(), signal.SIGHUP)
        assert seen == []
    assert seen == [signal.SIGHUP]


def test_deferred_drops_a_ctrl_c_but_delivers_a_sigterm_as_terminated(handlers):
    install()
    with deferred():
        os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(Terminated) as stop, deferred():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
    assert stop.value.code == 128 + signal.SIGTERM


def test_the_handlers_are_restored_after_the_block(handlers):
    before = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with held():
        pass
    with pytest.raises(ValueError), held():
        raise ValueError("the block's own error goes on up")
    assert {n: signal.getsignal(n) for n in before} == before


def test_a_signal_landing_while_held_sets_up_leaves_every_handler_as_it_was(handlers, monkeypatch):
    """A Ctrl-C can be handled between two of held()'s own steps; what it swapped must go back."""
    before = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    real_signal, calls = signal.signal, []

    def lands_on_the_second_swap(signum, handler):
        calls.append(signum)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as if its handler ran here
        return real_signal(signum, handler)

    monkeypatch.setattr(signal, "signal", lands_on_the_second_swap)
    with pytest.raises(KeyboardInterrupt), held():
        pass
    monkeypatch.setattr(signal, "signal", real_signal)
    assert {n: signal.getsignal(n) for n in before} == before
