"""Issue 26, item 6: one ACP frame that is valid JSON but no object (`42`, `"s"`, `null`, `[]`, a
batch) ended `nanohermes acp` and every open session. Driven as an editor meets it: raw frames on
the agent's stdin pipe, its answers read off stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scripted_server import text

pytestmark = pytest.mark.subprocess

REPO = Path(__file__).resolve().parents[2]
ANSWER_TIMEOUT_S = 30.0  # the agent's start-up on a loaded machine
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


@pytest.mark.parametrize(
    "frame, says",
    [
        ("42", "not a number"),
        ('"s"', "not a string"),
        ("null", "not null"),
        ("[]", "not an array"),
        (json.dumps([INITIALIZE]), "not an array (a batch)"),
        ("true", "not a boolean"),
    ],
    ids=["number", "string", "null", "empty-array", "batch", "boolean"],
)
def test_a_frame_that_is_no_json_object_is_refused_and_the_agent_goes_on(tmp_path, isolated_home, frame, says):
    agent = subprocess.Popen(
        [sys.executable, "-m", "nanohermes", "acp"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "NANOHERMES_HOME": str(isolated_home), "PYTHONPATH": str(REPO)},
    )
    try:
        agent.stdin.write(f"{frame}\n{json.dumps(INITIALIZE)}\n".encode())
        agent.stdin.flush()
        refusal = json.loads(agent.stdout.readline())
        answer = json.loads(agent.stdout.readline())
        agent.stdin.close()
        assert agent.wait(ANSWER_TIMEOUT_S) == 0
    finally:
        agent.kill()
        agent.wait()
    assert refusal["id"] is None and refusal["error"]["code"] == -32600 and says in refusal["error"]["message"]
    assert answer["id"] == 1 and answer["result"]["agentInfo"]["name"] == "nanohermes"
    log = agent.stderr.read().decode()
    assert "a frame was refused" in log and "Traceback" not in log and "connection ended" not in log


# Issue 44, item 6: one deeply nested frame left the agent alive but answering nothing, and a 60 MB
# frame ended it and every session in it. Each is answered with JSON-RPC's error naming its id, and
# the session opened before them is served after them.

SESSION_TIMEOUT_S = 120.0  # a session's runtime is built in a process forked for it, on a loaded machine
DEEP = 100_000
HUGE_BYTES = 60 * 2**20


class RawEditor:
    """`nanohermes acp` on pipes, spoken to in raw frames as a misbehaving editor would."""

    def __init__(self, cwd, env: dict):
        self.agent = subprocess.Popen(
            [sys.executable, "-m", "nanohermes", "acp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
        )

    def send(self, frame: bytes | str) -> None:
        self.agent.stdin.write(frame.encode() if isinstance(frame, str) else frame)
        self.agent.stdin.write(b"\n")
        self.agent.stdin.flush()

    def request(self, id_: int, method: str, params: dict) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))

    def answer(self, id_) -> dict:
        """The next message that answers `id_` (session updates before it are passed over)."""
        while line := self.agent.stdout.readline():
            message = json.loads(line)
            if message.get("id") == id_ and "method" not in message:
                return message
        raise AssertionError(f"the agent ended before answering {id_}: {self.agent.stderr.read().decode()[-2000:]}")

    def close(self) -> tuple[int, str]:
        self.agent.stdin.close()
        try:
            code = self.agent.wait(SESSION_TIMEOUT_S)
        finally:
            self.agent.kill()
            self.agent.wait()
        return code, self.agent.stderr.read().decode()


def test_an_over_deep_and_an_oversized_frame_are_refused_and_an_open_session_is_still_served(
    tmp_path, isolated_home, server
):
    project = tmp_path / "project"
    project.mkdir()
    editor = RawEditor(
        tmp_path,
        {
            "NANOHERMES_HOME": str(isolated_home),
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": server.url,
            "NANOHERMES_MODEL": "test-model",
        },
    )
    try:
        editor.request(1, "initialize", {"protocolVersion": 1})
        assert editor.answer(1)["result"]["agentInfo"]["name"] == "nanohermes"
        editor.request(2, "session/new", {"cwd": str(project), "mcpServers": []})
        session = editor.answer(2)["result"]["sessionId"]
        deep = (
            '{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"x": ' + "[" * DEEP + "]" * DEEP + "}}"
        )
        editor.send(deep)
        too_deep = editor.answer(3)["error"]
        huge = b'{"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {"x": "' + b"a" * HUGE_BYTES + b'"}}'
        editor.send(huge)
        too_big = editor.answer(4)["error"]
        server.add(text("still here"))
        editor.request(5, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
        assert editor.answer(5)["result"]["stopReason"] == "end_turn"
        code, log = editor.close()
    finally:
        editor.agent.kill()
    assert too_deep["code"] == -32600 and "nests deeper than 64 levels" in too_deep["message"]
    assert too_big["code"] == -32600 and "the message is 60 MB, over the 50 MB" in too_big["message"]
    assert code == 0 and "Traceback" not in log and "connection ended" not in log
    assert server.chat_requests()[0]["messages"][-1]["content"] == "hi"


@pytest.mark.parametrize("depth", [65, 5_000])
def test_a_frame_nested_past_the_bound_is_refused_whichever_parser_meets_it(tmp_path, isolated_home, depth):
    editor = RawEditor(tmp_path, {"NANOHERMES_HOME": str(isolated_home)})
    try:
        editor.send(
            '{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"_meta": '
            + "[" * depth
            + "]" * depth
            + "}}"
        )
        refusal = editor.answer(9)["error"]
        editor.send(json.dumps(INITIALIZE))
        assert editor.answer(1)["result"]["agentInfo"]["name"] == "nanohermes"
        code, log = editor.close()
    finally:
        editor.agent.kill()
    assert refusal["code"] == -32600 and "nests deeper" in refusal["message"] and code == 0 and "Traceback" not in log
