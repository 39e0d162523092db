"""Helpers in git worktrees of their own (`task` with isolation = "worktree") through the real runtime,
real git and the scripted server: several run at once (shown by the server, which holds one helper's
reply until the other's request is in), each one's diff is brought into the workspace as it answers —
through the approvals and checkpoints of any edit — a file changed meanwhile is a conflict, said and
held for /tasks, and outside a repository the tool says why it cannot."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest

from nanohermes import events as ev
from nanohermes.configure import load_config
from nanohermes.loop.subagents import HELPER_BRIEF
from nanohermes.runtime import build_runtime
from nanohermes.slash.held import held_command, not_held
from nanohermes.slash.status import tasks_command
from nanohermes.storage.checkpoints import UNDONE
from tests.support.git_repos import make_repo, worktree_list
from tests.support.scripted_server import Error, call, calls, is_summary_request, text
from tests.support.timing import HANG_GUARD_S

A_NEW, B_NEW = "a = 'from helper A'\n", "b = 'from helper B'\n"


class Script:
    """Replies by who asks — the parent, or the helper whose prompt holds its marker — and by how many
    replies it had; `holds[(who, step)]` is waited for before that reply (False: the test fails)."""

    def __init__(self, server, parent: list, helpers: dict[str, list]):
        self.queues = {"parent": list(parent), **{name: list(replies) for name, replies in helpers.items()}}
        self.arrived = {name: threading.Event() for name in helpers}
        self.holds: dict[tuple[str, int], object] = {}
        server.handler = self.answer

    def answer(self, body):
        if is_summary_request(body):
            return text("Goal: summarised.")
        name = who(body)
        step = sum(1 for message in body["messages"] if message["role"] == "assistant")
        if name in self.arrived:
            self.arrived[name].set()
        hold = self.holds.get((name, step))
        if hold is not None and not hold():
            return Error(400, {"error": {"message": f"{name} waited in vain at step {step}", "type": "test"}})
        return self.queues[name].pop(0)

    def together(self, first: str, second: str) -> None:
        """Each one's first reply waits until the other's first request is in: both in flight at once."""
        self.holds[(first, 0)] = lambda: self.arrived[second].wait(HANG_GUARD_S)
        self.holds[(second, 0)] = lambda: self.arrived[first].wait(HANG_GUARD_S)


def who(body: dict) -> str:
    for message in body["messages"]:
        if message["role"] == "user" and HELPER_BRIEF in (message.get("content") or ""):
            return message["content"].split(":", 1)[0]  # "A: change a.py …"
    return "parent"


def until(condition) -> bool:
    """True once `condition()` holds; False past the hang guard."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def in_worktree(marker: str, what: str) -> tuple[str, dict]:
    return ("task", {"description": f"helper {marker}", "prompt": f"{marker}: {what}", "isolation": "worktree"})


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "b.py": "b = 1\n"})


def runtime_for(server, workspace, monkeypatch, events=None, approve=None, **flags):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, **{"mode": "auto", **flags})
    return build_runtime(config, "parent", (events if events is not None else []).append, approve=approve)


def two_held(server, repo, monkeypatch):
    """A turn whose two helpers each changed one file and the user said no to both: their changes held."""
    Script(
        server,
        parent=[calls(in_worktree("A", "change a.py"), in_worktree("B", "change b.py")), text("held")],
        helpers={
            "A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("A done")],
            "B": [call("write_file", {"path": "b.py", "content": B_NEW}), text("B done")],
        },
    )
    runtime = runtime_for(server, repo, monkeypatch, approve=lambda tool, args, preview: "no", mode="ask")
    runtime.agent.run_turn("go")
    return runtime


def results(server) -> list[str]:
    """The parent's tool results, as its last request carries them."""
    last = [r for r in server.chat_requests() if who(r) == "parent"][-1]
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


def test_two_helpers_change_different_files_at_once_and_both_diffs_are_brought_in(server, repo, monkeypatch):
    script = Script(
        server,
        parent=[calls(in_worktree("A", "change a.py"), in_worktree("B", "change b.py")), text("both done")],
        helpers={
            "A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("a.py changed")],
            "B": [call("write_file", {"path": "b.py", "content": B_NEW}), text("b.py changed")],
        },
    )
    script.together("A", "B")
    events = []
    runtime = runtime_for(server, repo, monkeypatch, events)
    assert runtime.agent.run_turn("change both").final_text == "both done"
    assert (repo / "a.py").read_text() == A_NEW and (repo / "b.py").read_text() == B_NEW
    first, second = results(server)
    assert "a.py changed" in first and "brought into the workspace: a.py" in first and "+a = 'from helper A'" in first
    assert "b.py changed" in second and "brought into the workspace: b.py" in second
    assert sorted(c.shown for c in runtime.checkpoints.changes()) == ["a.py", "b.py"]  # /undo covers them
    assert runtime.agent.helpers.held == {}
    assert worktree_list(repo) == [str(repo.resolve())]  # each worktree removed once brought in
    tags = {e.tag for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.ToolStarted)}
    assert tags == {"task1", "task2"}  # whose line is whose, as they run at once
    runtime.close()


def test_a_file_changed_since_the_helper_started_is_a_conflict_said_and_held(server, repo, monkeypatch):
    script = Script(
        server,
        parent=[calls(in_worktree("A", "change a.py"), in_worktree("B", "change a.py too")), text("one conflicted")],
        helpers={
            "A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("done A")],
            "B": [call("write_file", {"path": "a.py", "content": "a = 'B'\n"}), text("done B")],
        },
    )
    script.together("A", "B")
    script.holds[("B", 1)] = lambda: until(lambda: (repo / "a.py").read_text() == A_NEW)  # A is brought in first
    runtime = runtime_for(server, repo, monkeypatch)
    runtime.agent.run_turn("change a.py twice")
    assert (repo / "a.py").read_text() == A_NEW
    first, second = results(server)
    assert "brought into the workspace: a.py" in first
    assert "NOT brought in: a.py (changed in the workspace since the helper started)" in second
    name = re.search(r"held as (task\d)", second).group(1)  # names go as the helpers start: either
    assert f"held as {name}: the user can /tasks apply {name} or /tasks drop {name}" in second
    assert "+a = 'B'" in second  # the diff to merge from
    held = runtime.agent.helpers.held
    assert list(held) == [name] and held[name].worktree.top.is_dir()
    outcome = runtime.agent.helpers.apply_held(name)  # still a conflict: said again, still held
    assert outcome.conflicts == ["a.py"] and list(held) == [name]
    runtime.agent.helpers.drop_held(name)
    assert held == {} and worktree_list(repo) == [str(repo.resolve())]
    runtime.close()


def test_outside_a_git_repository_the_task_says_why_it_cannot(server, workspace, monkeypatch, isolated_home):
    Script(server, parent=[call(*in_worktree("A", "anything")), text("ok")], helpers={"A": []})
    runtime = runtime_for(server, workspace, monkeypatch)
    runtime.agent.run_turn("go")
    runtime.close()
    (result,) = results(server)
    assert result.startswith("error: helper 'helper A' cannot work in a worktree: ")
    assert "is not in a git repository" in result and "call task without isolation" in result
    assert not list((isolated_home / "sessions").glob("parent.task*"))  # no helper was started


def test_in_ask_mode_the_helper_edits_its_worktree_unasked_and_bringing_it_in_asks_with_its_diff(
    server, repo, monkeypatch
):
    Script(
        server,
        parent=[call(*in_worktree("A", "change a.py and b.py")), text("asked")],
        helpers={
            "A": [
                calls(
                    ("write_file", {"path": "a.py", "content": A_NEW}),
                    ("write_file", {"path": "b.py", "content": B_NEW}),
                ),
                text("changed both"),
            ]
        },
    )
    asked = []

    def approve(tool, args, preview):
        asked.append((tool.name, args["path"], preview))
        return "yes" if args["path"] == "a.py" else "no"

    runtime = runtime_for(server, repo, monkeypatch, approve=approve, mode="ask")
    runtime.agent.run_turn("go")
    assert [(name, path) for name, path, _ in asked] == [("write_file", "a.py"), ("write_file", "b.py")]
    assert (
        asked[0][2].startswith("from helper 'helper A' (task1):\n--- a/a.py") and "+a = 'from helper A'" in asked[0][2]
    )
    assert (repo / "a.py").read_text() == A_NEW and (repo / "b.py").read_text() == "b = 1\n"
    (result,) = results(server)
    assert "brought into the workspace: a.py; NOT brought in: b.py (" in result
    assert list(runtime.agent.helpers.held) == ["task1"]
    outcome = runtime.agent.helpers.apply_held("task1")  # the user's /tasks apply: nothing asked
    assert outcome.applied == ["b.py"] and len(asked) == 2 and (repo / "b.py").read_text() == B_NEW
    assert runtime.agent.helpers.held == {}
    assert runtime.checkpoints.undo_last().status == UNDONE  # /undo takes the last one back
    assert (repo / "b.py").read_text() == "b = 1\n"
    runtime.close()


def test_a_run_that_cannot_ask_holds_the_changes_and_says_how_to_allow_them(server, repo, monkeypatch):
    Script(
        server,
        parent=[call(*in_worktree("A", "change a.py")), text("refused")],
        helpers={"A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("done")]},
    )
    runtime = runtime_for(server, repo, monkeypatch, mode="ask")  # approve=None: a -p run
    result = runtime.agent.run_turn("go")
    assert (repo / "a.py").read_text() == "a = 1\n"
    assert "NOT brought in: a.py (" in results(server)[0] and list(runtime.agent.helpers.held) == ["task1"]
    assert result.cannot_ask == ["write_file"]
    top = runtime.agent.helpers.held["task1"].worktree.top
    runtime.close()  # the session's end removes what was held, worktree and all
    assert not top.exists() and worktree_list(repo) == [str(repo.resolve())]


def test_the_helper_starts_from_the_uncommitted_workspace_and_its_brief_says_where_it_works(server, repo, monkeypatch):
    (repo / "a.py").write_text("a = 'uncommitted'\n")
    Script(server, parent=[call(*in_worktree("A", "read a.py")), text("seen")], helpers={"A": [call("read_file", {"path": "a.py"}), text("it says uncommitted")]})  # fmt: skip
    runtime = runtime_for(server, repo, monkeypatch)
    runtime.agent.run_turn("go")
    runtime.close()
    helper = [r for r in server.chat_requests() if who(r) == "A"]
    assert "a = 'uncommitted'" in helper[1]["messages"][-1]["content"]
    brief = helper[0]["messages"][1]["content"]
    assert "git worktree made for you" in brief and str(repo.resolve()) in brief
    assert results(server)[0].endswith("[it changed no files]")


def test_task_parallel_1_runs_worktree_helpers_one_after_another(server, repo, monkeypatch):
    script = Script(
        server,
        parent=[calls(in_worktree("A", "a"), in_worktree("B", "b")), text("done")],
        helpers={"A": [call("read_file", {"path": "a.py"}), text("A answered")], "B": [text("B answered")]},
    )
    script.holds[("B", 0)] = lambda: not script.queues["A"]  # A had every reply before B's first request
    runtime = runtime_for(server, repo, monkeypatch, task_parallel=1)
    runtime.agent.run_turn("go")
    runtime.close()
    assert ["A answered" in results(server)[0], "B answered" in results(server)[1]] == [True, True]


def test_ctrl_c_while_helpers_run_side_by_side_answers_every_call_and_holds_their_changes(server, repo, monkeypatch):
    script = Script(
        server,
        parent=[calls(in_worktree("A", "change a.py"), in_worktree("B", "change b.py")), text("never")],
        helpers={
            "A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("A done")],
            "B": [call("write_file", {"path": "b.py", "content": B_NEW}), text("B done")],
        },
    )
    at_answer = {name: threading.Event() for name in "AB"}
    stopped = threading.Event()

    def answer_after_ctrl_c(name):
        at_answer[name].set()
        return stopped.wait(HANG_GUARD_S)

    script.holds[("A", 1)] = lambda: answer_after_ctrl_c("A")
    script.holds[("B", 1)] = lambda: answer_after_ctrl_c("B")

    def press_ctrl_c():
        if all(event.wait(HANG_GUARD_S) for event in at_answer.values()):  # both helpers wait on their answer
            os.kill(os.getpid(), signal.SIGINT)

    events = []
    runtime = runtime_for(server, repo, monkeypatch, events)
    threading.Thread(target=press_ctrl_c, daemon=True).start()
    result = runtime.agent.run_turn("change both")
    stopped.set()
    assert result.stopped_reason == "interrupted"
    answered = [m["tool_call_id"] for m in runtime.agent.messages if m["role"] == "tool"]
    assert len(answered) == 2  # every call of the reply has its result
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert len(finished) == 2 and all(e.facts.interrupted for e in finished)
    assert until(lambda: len(runtime.agent.helpers.held) == 2)  # each helper stopped, its change held
    assert (repo / "a.py").read_text() == "a = 1\n" and (repo / "b.py").read_text() == "b = 1\n"
    runtime.close()
    assert worktree_list(repo) == [str(repo.resolve())]


def test_tasks_lists_held_changes_and_applies_or_drops_them_telling_the_model(server, repo, monkeypatch):
    runtime = two_held(server, repo, monkeypatch)
    agent = runtime.agent
    rows = tasks_command(agent.tasks, "", agent.helpers).splitlines()
    held = {row.split()[0]: row for row in rows if " held: " in row}
    assert set(held) == {"task1", "task2"} and all("1 file not brought in" in row for row in held.values())
    by_file = {agent.helpers.held[name].changes[0].path: name for name in held}
    said, note = held_command(agent.helpers, "apply", by_file["a.py"])
    assert said == f"{by_file['a.py']}: applied a.py" and "brought in" in note
    said, note = held_command(agent.helpers, "drop", by_file["b.py"])
    assert said == f"{by_file['b.py']}: dropped, its worktree removed"
    assert (repo / "a.py").read_text() == A_NEW and (repo / "b.py").read_text() == "b = 1\n"
    assert (
        agent.helpers.held == {}
        and not_held(agent.helpers, "task1") == "no helper's changes are held as 'task1' (held: none)"
    )
    runtime.close()
