"""A helper agent and background tasks in the REPL, in a real pseudo-terminal: the helper's
tool calls nested and dimmed, Ctrl-C stopping it, /tasks, and tasks stopped on the way out."""

import json
import re

import pexpect
import pytest

from nanohermes.loop.subagents import HELPER_BRIEF
from tests.support.scripted_server import Reply, call, prose, text
from tests.tools.test_shell import dies_soon
from tests.ui.test_repl import ready, spawn

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

DIM_NESTED = re.compile(r"\x1b\[2m\s*┆ → read_file path=notes\.txt")


def by_caller(server, parent: list, helper: list):
    queues = {True: list(helper), False: list(parent)}

    def handler(body):
        asked_by_helper = any(HELPER_BRIEF in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
        return queues[asked_by_helper].pop(0)

    server.handler = handler


def test_the_helpers_calls_show_nested_and_dimmed_and_ctrl_c_stops_it(server, workspace, isolated_home):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    by_caller(
        server,
        parent=[call("task", {"description": "read notes", "prompt": "what do the notes say?"}), text("fine")],
        helper=[
            call("read_file", {"path": "notes.txt"}),
            Reply(content=prose(3_600, "thinking"), delay=0.05, chunk_size=5),
        ],
    )
    child = spawn(server, workspace, "--mode", "auto", "--session", "p")
    child.send("ask a helper\r")
    child.expect(DIM_NESTED)
    child.expect("read_file notes.txt lines 1–1 of 1")
    while len(server.chat_requests()) < 3:  # the helper's second request is streaming
        child.expect([pexpect.TIMEOUT], timeout=0.1)
    child.sendintr()
    child.expect("interrupted")
    ready(child)
    child.send("again\r")
    child.expect("fine")
    ready(child)
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    parent = [json.loads(line) for line in (isolated_home / "sessions" / "p.jsonl").read_text().splitlines()]
    results = [e["message"]["content"] for e in parent if e["type"] == "message" and e["message"]["role"] == "tool"]
    assert results == [
        "[interrupted by user: helper 'read notes' was stopped after 1 step; its transcript: session p.task1]"
    ]


def test_tasks_lists_background_tasks_and_leaving_stops_them(server, workspace):
    server.add(call("run_command", {"command": "sleep 60", "background": True}), text("started"))
    child = spawn(server, workspace, "--mode", "auto")
    child.send("start a server\r")
    child.expect("started")
    ready(child)
    child.send("/tasks\r")
    child.expect(r"bg1\s+running for [\d.]+ s \(pid (\d+)\)")
    pid = int(child.match.group(1))
    ready(child)
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    assert dies_soon(pid)
