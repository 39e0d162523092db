"""Child processes (tools/processes.py): how a command starts and how its process group ends,
with real processes."""

from __future__ import annotations

import os
import time

from nanohermes.tools.processes import KILL_GRACE, SHELL, end_child, end_group, group_alive, start_child
from tests.support.processes import alive
from tests.support.timing import HANG_GUARD_S, NEVER_S
from tests.tools.test_shell import dies_soon


def test_a_child_leads_its_own_process_group_in_the_directory_without_the_provider_key(workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("OTHER_SETTING", "visible")
    proc = start_child([*SHELL, 'echo "key=$OPENAI_API_KEY other=$OTHER_SETTING"; pwd; ps -o pgid= -p $$'], workspace)
    out, err = proc.communicate(timeout=HANG_GUARD_S)
    key_line, cwd, pgid = out.decode().splitlines()
    assert key_line == "key= other=visible" and err == b""
    assert os.path.realpath(cwd) == os.path.realpath(workspace)
    assert int(pgid) == proc.pid != os.getpgid(0)


def test_ending_a_group_kills_a_member_that_ignores_term_after_the_grace(workspace):
    proc = start_child([*SHELL, f"(trap '' TERM; echo $BASHPID; exec sleep {NEVER_S:g}) &"], workspace)
    member = int(proc.stdout.readline())  # printed once TERM is ignored
    proc.wait(timeout=HANG_GUARD_S)  # the leader is gone; the member holds the group
    assert group_alive(proc.pid)
    began = time.monotonic()
    end_group(proc.pid)
    assert dies_soon(member) and not group_alive(proc.pid)
    assert KILL_GRACE <= time.monotonic() - began < KILL_GRACE + HANG_GUARD_S  # TERM was ignored: KILL after the grace
    proc.stdout.close()
    proc.stderr.close()


def test_ending_a_child_that_still_runs_leaves_nothing_of_it(workspace):
    proc = start_child([*SHELL, "sleep 30 & echo $!; exec sleep 30"], workspace)
    background = int(proc.stdout.readline())
    end_child(proc)
    assert proc.returncode is not None and proc.stdout.closed and proc.stderr.closed
    assert dies_soon(background) and not alive(proc.pid)
