"""A run the loop stops still ends with an answer: one last request, tools off, asks for the best
answer from what was found; it is marked partial and the exit code still says the run stopped
early. Through the real CLI (`-p`) and the scripted server over real HTTP."""

from __future__ import annotations

import json
from types import SimpleNamespace

from typer.testing import CliRunner

from nanohermes import events as ev
from nanohermes.cli import EXIT_UNFINISHED, app
from nanohermes.loop.coach.plain import FINAL_ANSWER_REQUEST, NO_ANSWER_BUT_CALLS
from nanohermes.stops import TO_MODEL
from tests.support.scripted_server import Error, call, text


def run(server, workspace, *args):
    result = CliRunner().invoke(
        app,
        ["-p", "what is the last line of notes.txt?", "--yes", "--base-url", server.url, "-C", str(workspace), *args],
    )
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def test_a_run_stopped_by_the_loop_guard_still_answers_from_what_it_read(server, workspace):
    (workspace / "notes.txt").write_text("first\nlast line: 42\n")
    server.add(  # the third call is refused, the model asked for its answer; it calls again: the run stops
        *[call("read_file", {"path": "notes.txt", "offset": 3}) for _ in range(4)],
        text("The last line is 'last line: 42'."),
    )
    r = run(server, workspace)
    assert r.returncode == EXIT_UNFINISHED
    assert r.stdout.strip() == ev.PARTIAL_MARK + "The last line is 'last line: 42'."
    assert "kept repeating the same tool call" in r.stderr and "Traceback" not in r.stderr
    final = server.chat_requests()[-1]
    assert final["tool_choice"] == "none" and final["tools"] == server.chat_requests()[0]["tools"]  # the same prefix
    assert final["messages"][-1] == {
        "role": "user",
        "content": FINAL_ANSWER_REQUEST.format(why=TO_MODEL[ev.StopCode.REPEATING]),
    }
    assert [m["role"] for m in final["messages"][-3:]] == ["assistant", "tool", "user"]


def test_a_run_at_its_step_limit_answers_partially_in_json_too(server, workspace):
    (workspace / "notes.txt").write_text("a\nb\n")
    server.add(*[call("read_file", {"path": "notes.txt", "offset": i + 1}) for i in range(2)], text("It ends with b."))
    r = run(server, workspace, "--max-steps", "2", "--output-format", "json")
    assert r.returncode == EXIT_UNFINISHED
    result = json.loads(r.stdout)
    assert result["stop_reason"] == ev.StopCode.MAX_STEPS and result["finished"] is False
    assert result["answer"] == ev.PARTIAL_MARK + "It ends with b."
    assert len(server.chat_requests()) == 3


def test_when_the_last_request_fails_too_the_stop_is_still_reported(server, workspace):
    (workspace / "notes.txt").write_text("a\n")
    server.add(
        *[call("read_file", {"path": "notes.txt", "offset": i + 1}) for i in range(2)],
        Error(400, {"error": {"message": "nope", "type": "invalid_request_error"}}),
    )
    r = run(server, workspace, "--max-steps", "2")
    assert r.returncode == EXIT_UNFINISHED
    assert "--max-steps 2" in r.stderr and "no final answer" in r.stderr and "Traceback" not in r.stderr
    assert ev.PARTIAL_MARK not in r.stdout


def test_a_final_answer_keeps_no_tool_call_the_model_made_anyway(server, workspace):
    (workspace / "notes.txt").write_text("a\n")
    server.add(call("read_file", {"path": "notes.txt"}), call("read_file", {"path": "notes.txt"}, content="It is a."))
    r = run(server, workspace, "--max-steps", "1", "--session", "fa")
    assert r.returncode == EXIT_UNFINISHED and r.stdout.strip() == ev.PARTIAL_MARK + "It is a."
    server.add(text("yes"))
    again = run(server, workspace, "--session", "fa")
    assert again.returncode == 0
    history = server.chat_requests()[-1]["messages"]
    assert history[-2] == {"role": "assistant", "content": ev.PARTIAL_MARK + "It is a."}  # no call without a result


def test_a_model_looping_on_an_edit_that_never_lands_stops_within_a_bound(server, workspace):
    """Read, read, read (the third refused), the same failing edit, and round again: the guard
    never sees five repeats in a row, so this ran to --max-steps (51 requests). Asked once for its
    answer with tools off, the model goes on, and its next refused repeat now ends the run."""
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    read = call("read_file", {"path": "calc.py"})
    edit = call("edit_file", {"path": "calc.py", "old_text": "def add(x, y): return x*y", "new_text": "..."})
    server.add(*[edit if i % 4 == 3 else read for i in range(60)])
    r = run(server, workspace)
    assert r.returncode == EXIT_UNFINISHED and "kept repeating" in r.stderr
    requests = server.chat_requests()
    assert len(requests) <= 12  # four calls, the tools-off request and three more, the final request
    assert requests[-1]["tool_choice"] == "none"
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_a_final_answer_that_is_only_a_call_written_as_text_is_said_in_words(server, workspace):
    """Qwen2.5-Coder-1.5B, stopped for repeating itself and asked for its answer with tools off,
    wrote one more ```json read_file call: the user reads that no answer came, not the JSON."""
    (workspace / "notes.txt").write_text("a\n")
    written = '```json\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n```'
    server.add(*[call("read_file", {"path": "notes.txt", "offset": 2}) for _ in range(4)], text(written))
    r = run(server, workspace, "--output-format", "json")
    assert r.returncode == EXIT_UNFINISHED
    answer = json.loads(r.stdout)["answer"]
    assert answer == ev.PARTIAL_MARK + NO_ANSWER_BUT_CALLS.format(names="read_file")
    assert server.chat_requests()[-1]["tool_choice"] == "none"  # the written call was not run: nothing after it
