"""Issue 26, item 6: one ACP frame that is valid JSON but no object (`42`, `"s"`, `null`, `[]`, a
batch) ended `nanohermes acp` and every open session. Driven as an editor meets it: raw frames on
the agent's stdin pipe, its answers read off stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
