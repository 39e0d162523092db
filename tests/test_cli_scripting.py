"""`-p` for scripts: the output formats (parsed, as a script would), streaming to stdout, and
the exit codes that tell a finished task from an unfinished or failed one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from nanohermes.cli import EXIT_FAILURE, EXIT_OK, EXIT_UNFINISHED, EXIT_USAGE, cannot_ask_hint
from tests.support.raw_servers import closed_port_url
from tests.support.scripted_server import Reply, call, prose, text
from tests.test_cli_sessions import ask

pytestmark = pytest.mark.subprocess

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def lines_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_is_one_object_with_answer_session_usage_steps_and_tool_calls(server, workspace):
    (workspace / "notes.txt").write_text("the secret is 42\n")
    server.add(
        call(
            "read_file",
            {"path": "notes.txt"},
            content="Let me look.",
            usage={"prompt_tokens": 120, "completion_tokens": 8},
        ),
        text("The secret is 42.", usage={"prompt_tokens": 150, "completion_tokens": 6}),
    )
    r = ask(server, workspace, "what is the secret?", "--output-format", "json", "--session", "js")
    assert r.returncode == EXIT_OK, r.stderr
    [result] = lines_of(r.stdout)
    assert result["type"] == "result" and result["answer"] == "The secret is 42."
    assert (result["finished"], result["stop_reason"], result["exit_code"], result["session"]) == (True, None, 0, "js")
    assert result["steps"] == 2 and result["refused"] == []
    usage = result["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["requests"]) == (270, 14, 2)
    assert "cached_tokens" in usage  # null until the server reports cached prompt tokens
    [tool] = result["tool_calls"]
    assert tool["name"] == "read_file" and json.loads(tool["arguments"]) == {"path": "notes.txt"} and tool["ok"] is True
    assert "read_file notes.txt" in tool["summary"]
    assert "read_file" in r.stderr  # progress stays on stderr for a person watching


def test_stream_json_is_one_event_per_line_from_session_to_result(server, workspace):
    (workspace / "notes.txt").write_text("hello\n")
    server.add(call("read_file", {"path": "notes.txt"}), text("It says hello."))
    r = ask(server, workspace, "read it", "--output-format", "stream-json")
    assert r.returncode == EXIT_OK, r.stderr
    events = lines_of(r.stdout)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session" and kinds[-2:] == ["usage", "result"]
    for kind in ("assistant_message_done", "tool_started", "tool_finished", "text_delta"):
        assert kind in kinds, kind
    assert kinds.index("tool_started") < kinds.index("tool_finished") < kinds.index("text_delta")
    started = events[kinds.index("tool_started")]
    assert started["name"] == "read_file" and json.loads(started["arguments"]) == {"path": "notes.txt"}
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "It says hello."
    assert events[-1]["answer"] == "It says hello." and events[-1]["session"] == events[0]["name"]
    assert r.stderr == ""  # the events say everything


def test_stream_json_carries_compaction_notices(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("context_window = 4096\n")
    (workspace / "big.txt").write_text("line of text\n" * 300)
    server.add(*[call("read_file", {"path": "big.txt", "offset": i + 1}) for i in range(8)], text("read it all"))
    server.handler = lambda body: text("Goal: read big.txt")  # the summariser, if it is asked
    r = ask(server, workspace, "read big.txt piece by piece", "--output-format", "stream-json")
    assert r.returncode == EXIT_OK, r.stderr
    notices = [e["text"] for e in lines_of(r.stdout) if e["type"] == "notice"]
    assert any("compact" in n or "placeholder" in n or "cleared" in n for n in notices), notices


def test_text_streams_the_answer_to_stdout_before_the_run_ends(server, workspace):
    answer = prose(1_500)  # past the hold-back, so it streams
    server.add(Reply(content=answer, delay=0.01, chunk_size=5))  # ~3 s of streaming
    proc = subprocess.Popen(
        [BIN, "-p", "talk", "--base-url", server.url], cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    first = os.read(proc.stdout.fileno(), 64)
    first_at = time.monotonic()
    rest, _ = proc.communicate(timeout=30)
    ended_at = time.monotonic()
    assert first.startswith(b"word0 word1")
    assert ended_at - first_at > 1.0  # the first words arrived while the answer was still streaming
    assert (first + rest).decode() == answer + "\n" and proc.returncode == 0


def test_an_action_refused_because_nothing_could_ask_exits_3_with_the_whole_hint(server, workspace):
    server.add(call("write_file", {"path": "out.txt", "content": "x"}), text("I could not write out.txt."))
    r = ask(server, workspace, "write out.txt", "--mode", "ask")
    assert r.returncode == EXIT_UNFINISHED
    assert r.stdout == "I could not write out.txt.\n" and not (workspace / "out.txt").exists()
    hint = cannot_ask_hint(["write_file:out.txt"])  # names the --allow that would have allowed it
    assert "write_file needed the user's approval" in r.stderr and hint in r.stderr
    server.add(call("write_file", {"path": "out.txt", "content": "x"}), text("no"))
    [result] = lines_of(ask(server, workspace, "again", "--mode", "ask", "--output-format", "json").stdout)
    assert (result["finished"], result["stop_reason"], result["refused"], result["exit_code"]) == (
        False,
        "needs_approval",
        ["write_file"],
        3,
    )
    assert hint in result["message"]


def test_a_loop_stopped_by_the_step_limit_is_unfinished_in_json(server, workspace):
    server.add(*[call("read_file", {"path": f"f{i}"}) for i in range(3)])
    r = ask(server, workspace, "loop", "--max-steps", "2", "--output-format", "json")
    [result] = lines_of(r.stdout)
    assert r.returncode == EXIT_UNFINISHED and result["stop_reason"] == "max_steps" and result["finished"] is False
    assert "--max-steps 2" in result["message"]


def test_a_failure_in_json_formats_is_an_error_object_and_exit_1(workspace):
    for fmt in ("json", "stream-json"):
        r = subprocess.run(
            [BIN, "-p", "hi", "--base-url", closed_port_url(), "--output-format", fmt],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=30,
        )
        error = lines_of(r.stdout)[-1]
        assert r.returncode == EXIT_FAILURE and error["type"] == "error" and error["exit_code"] == 1
        assert "Cannot reach" in error["message"] and error["session"]


def test_a_missing_key_in_json_format_is_an_error_object(workspace):
    r = subprocess.run(
        [BIN, "-p", "hi", "--output-format", "json"], cwd=workspace, capture_output=True, text=True, timeout=30
    )
    [error] = lines_of(r.stdout)
    assert r.returncode == EXIT_FAILURE and "OPENAI_API_KEY" in error["message"] and error["session"] is None


def test_output_format_needs_p(workspace):
    r = subprocess.run([BIN, "--output-format", "json"], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_USAGE and "applies to -p" in r.stderr


def test_a_reader_that_leaves_early_ends_the_run_without_a_traceback(server, workspace):
    server.add(Reply(content=prose(10_000, "line"), delay=0.002, chunk_size=50))
    proc = subprocess.Popen(
        [BIN, "-p", "talk", "--base-url", server.url], cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    os.read(proc.stdout.fileno(), 16)
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == EXIT_FAILURE  # click ends a run whose stdout closed (EPIPE) with 1
    assert "Traceback" not in err and "retry" not in err  # a closed stdout is not the provider's failure
