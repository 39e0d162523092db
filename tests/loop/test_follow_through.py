"""A fix shown but not made, and a model going round in circles: through the loop and the
scripted server over real HTTP (loop/followthrough.py, loop/guard.py: same_look)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes import events as ev
from nanohermes.loop.coach import small
from nanohermes.loop.coach.plain import ANSWER_NOW
from nanohermes.loop.coach.small import asks_for_a_change, shows_an_unmade_change
from nanohermes.loop.coach.small_texts import CHECK_THE_CHANGE, MAKE_IT_NOW, MAKE_THE_CHANGE, NOTHING_CHANGED
from nanohermes.loop.guard import RepeatGuard
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.scripted_server import call, calls, text

FIX_SHOWN = "The key is missing. Add it:\n\n```python\nVAT_RATES['FOOD'] = 0.0\n```\n"
FILE_TOOLS = [t for t in BUILTIN_TOOLS if t.name in ("read_file", "edit_file", "grep")] + TEST_TOOLS
CODING_TOOLS = FILE_TOOLS + [t for t in BUILTIN_TOOLS if t.name == "run_command"]
ADD_FIXED = {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("The checkout test fails. Run it, find the cause and fix it.", True),
        ("add a --verbose flag to the CLI", True),
        ("Can you rename parse to parse_port?", True),
        ("Use the instructions in INSTRUCTIONS.md to modify isogram.py so that it passes isogram_test.py.", True),
        ("How do I fix this KeyError?", False),
        ("What does the add function do?", False),
        ("Explain how to update the config", False),
        ("Which port does the service listen on?", False),
    ],
)
def test_a_change_is_asked_for_by_a_request_not_by_a_question(request_text, expected):
    assert asks_for_a_change(request_text) is expected


def test_an_unmade_change_needs_code_in_the_reply_and_no_file_changed():
    asked = "fix the failing test"
    assert shows_an_unmade_change(asked, FIX_SHOWN, changed=False)
    assert not shows_an_unmade_change(asked, FIX_SHOWN, changed=True)
    assert not shows_an_unmade_change(asked, "Fixed: the key is there now.", changed=False)
    assert not shows_an_unmade_change("why does it fail?", FIX_SHOWN, changed=False)


def test_a_fix_shown_in_a_code_block_gets_one_nudge_to_make_it(server, workspace):
    (workspace / "pricing.py").write_text("VAT_RATES = {}\n")
    server.add(
        text(FIX_SHOWN),
        call("edit_file", {"path": "pricing.py", "old_text": "{}", "new_text": "{'FOOD': 0.0}"}),
        text("Done: pricing.py has the key."),
    )
    events = []
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS, events=events)
    result = agent.run_turn("The test fails with a KeyError; fix it.")
    assert result.final_text == "Done: pricing.py has the key."
    assert (workspace / "pricing.py").read_text() == "VAT_RATES = {'FOOD': 0.0}\n"
    second = server.chat_requests()[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": FIX_SHOWN}
    assert second[-1] == {"role": "user", "content": MAKE_THE_CHANGE}
    assert any(isinstance(e, ev.Notice) and "without making it" in e.text for e in events)


def test_an_answer_that_changed_nothing_a_request_to_change_a_named_file_asked_for_is_sent_back_once(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.add(text("calc.py adds two numbers."), call("edit_file", ADD_FIXED), text("Fixed."))
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    assert agent.run_turn("modify calc.py so that add adds").final_text == "Fixed."
    second = server.chat_requests()[1]["messages"]
    assert second[-1] == {"role": "user", "content": NOTHING_CHANGED}
    server.add(text("It adds two numbers."))
    assert agent.run_turn("what does calc.py do?").final_text == "It adds two numbers."  # a question: no nudge
    assert len(server.chat_requests()) == 4
    server.add(text("The tests are fine."))
    assert agent.run_turn("fix the tests").final_text == "The tests are fine."  # no file named, no code shown
    assert len(server.chat_requests()) == 5


def test_the_nudge_comes_once_a_turn_and_never_for_a_question_or_without_edit_tools(server, workspace):
    server.add(text(FIX_SHOWN), text(FIX_SHOWN))
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    assert agent.run_turn("fix the KeyError").final_text == FIX_SHOWN  # nudged once; the second reply stands
    assert len(server.chat_requests()) == 2
    server.add(text(FIX_SHOWN))
    assert agent.run_turn("how would I fix the KeyError?").final_text == FIX_SHOWN
    assert len(server.chat_requests()) == 3
    server.add(text(FIX_SHOWN))
    no_edits = make_agent(server, workspace)  # no edit_file on offer (plan mode, or a tool set without it)
    assert no_edits.run_turn("fix the KeyError").final_text == FIX_SHOWN
    assert len(server.chat_requests()) == 4


def test_a_fix_shown_beside_a_rerun_of_the_test_is_nudged_after_the_run(server, workspace):
    server.add(call("echo", {"text": "test fails"}, content=FIX_SHOWN), text("I made the change."))
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    agent.run_turn("fix the failing test")
    second = server.chat_requests()[1]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1]["content"] == MAKE_THE_CHANGE


def test_a_look_that_finds_the_same_as_before_is_said_so_and_the_answer_asked_for_without_tools(server, workspace):
    (workspace / "a.ini").write_text("port = 8443\n")
    (workspace / "b.py").write_text("print('hi')\n")
    read_a, read_b = ("read_file", {"path": "a.ini"}), ("read_file", {"path": "b.py"})
    server.add(calls(read_a), calls(read_b), calls(read_a), text("Port 8443."))
    events = []
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS, events=events)
    result = agent.run_turn("which port?")
    assert any(isinstance(e, ev.Notice) and "going round in circles" in e.text for e in events)
    assert result.final_text == "Port 8443." and result.stop_code is None
    requests = server.chat_requests()
    assert [r.get("tool_choice") for r in requests] == [None, None, None, "none"]
    last = requests[-1]["messages"]
    assert last[-2]["role"] == "tool" and "the same read_file call you made earlier" in last[-2]["content"]
    assert last[-1] == {"role": "user", "content": ANSWER_NOW}
    assert "the same read_file call" not in requests[-1]["messages"][-4]["content"]  # the first read had no note


def test_tools_go_off_once_a_turn_and_a_new_request_starts_afresh(server, workspace):
    server.add(
        *[calls(("echo", {"text": "x"})) for _ in range(3)],
        calls(("echo", {"text": "x"})),
        text("a"),
        calls(("echo", {"text": "y"})),
        calls(("echo", {"text": "y"})),
        calls(("echo", {"text": "y"})),
        text("b"),
    )
    agent = make_agent(server, workspace)
    one = agent.run_turn("one")  # asked for its answer, it repeats again: the run stops, its last request tools off
    agent.run_turn("two")
    choices = [r.get("tool_choice") for r in server.chat_requests()]
    assert one.stop_code == ev.StopCode.REPEATING and one.final_text == ev.PARTIAL_MARK + "a"
    assert choices == [None, None, None, "none", "none", None, None, None, "none"]


def test_a_nudge_to_make_a_change_keeps_the_tools_on(server, workspace):
    """A refused repeat would turn the tools off for the next reply; a fix shown in the same
    reply needs them, so the nudge wins."""
    echo_x = ("echo", {"text": "x"})
    server.add(calls(echo_x), calls(echo_x), call("echo", {"text": "x"}, content=FIX_SHOWN), text("made it"))
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    agent.run_turn("fix it")
    requests = server.chat_requests()
    assert [r.get("tool_choice") for r in requests] == [None, None, None, None]
    assert requests[-1]["messages"][-1] == {"role": "user", "content": MAKE_THE_CHANGE}


def test_a_failed_read_between_two_same_looks_does_not_make_the_second_fresh(server, workspace):
    """Qwen2.5-Coder-1.5B went round reading a.py, b.py and a part of notes.md past its end
    (another offset each time, an error each time); the errors made every round look new."""
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "notes.md").write_text("one line\n")
    read_a = ("read_file", {"path": "a.py"})
    server.add(
        calls(read_a),
        calls(("read_file", {"path": "notes.md", "offset": 30})),
        calls(read_a),
        text("x is 1"),
    )
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    assert agent.run_turn("what is x?").final_text == "x is 1"
    assert [r.get("tool_choice") for r in server.chat_requests()] == [None, None, None, "none"]


def test_going_round_before_a_change_asked_for_is_made_asks_for_the_change_with_the_tools_on(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    read = ("read_file", {"path": "calc.py"})
    server.add(calls(read), calls(read), call("edit_file", ADD_FIXED), text("Fixed add."))
    events = []
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS, events=events)
    assert agent.run_turn("fix add in calc.py").final_text == "Fixed add."
    requests = server.chat_requests()
    assert [r.get("tool_choice") for r in requests] == [None, None, None, None]
    assert requests[2]["messages"][-1] == {"role": "user", "content": MAKE_IT_NOW}
    assert "a + b" in (workspace / "calc.py").read_text()


def test_a_model_asked_for_its_change_that_goes_on_reading_the_same_is_stopped(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "notes.md").write_text("one line\n")
    for i in range(12):
        server.add(
            calls(("read_file", {"path": "calc.py"})), calls(("read_file", {"path": "notes.md", "offset": 9 + i}))
        )
    server.add(text("I could not make the change."))
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    result = agent.run_turn("fix add in calc.py")
    assert result.stop_code == ev.StopCode.REPEATING
    assert len(server.chat_requests()) <= 10  # asked at the second round, stopped three rounds later, one last request


def test_same_look_counts_only_looks_with_the_same_result():
    guard = RepeatGuard()
    assert guard.same_look("read_file", '{"path": "a"}', "1\tx") is None
    assert guard.same_look("read_file", '{"path": "a"}', "1\ty") is None  # the file changed: a new look
    assert guard.same_look("read_file", '{ "path":"a" }', "1\ty")  # same call, same result
    assert guard.same_look("run_command", '{"command": "pytest"}', "ok") is None
    assert guard.same_look("run_command", '{"command": "pytest"}', "ok") is None  # a command may have effects
    guard.reset()
    assert guard.same_look("read_file", '{"path": "a"}', "1\ty") is None


def test_a_read_again_after_a_failed_edit_is_a_fresh_look(server, workspace):
    """ "old_text not found … re-read the file" asks for the same read again: no note, tools stay on."""
    (workspace / "a.py").write_text("x = 1\n")
    read_a = ("read_file", {"path": "a.py"})
    server.add(
        calls(read_a),
        calls(("edit_file", {"path": "a.py", "old_text": "x = 2", "new_text": "x = 3"})),
        calls(read_a),
        calls(("edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 3"})),
        text("done"),
    )
    agent = make_agent(server, workspace, coach="small", tools=FILE_TOOLS)
    assert agent.run_turn("set x to 3").final_text == "done"
    assert (workspace / "a.py").read_text() == "x = 3\n"
    assert all(r.get("tool_choice") is None for r in server.chat_requests())
    assert not any("the same read_file call" in (m["content"] or "") for m in agent.messages if m["role"] == "tool")


def _seen(keys: list[str]) -> RepeatGuard:
    guard = RepeatGuard()
    for key in keys:
        guard.see(key, "{}")
    return guard


def test_loops_of_one_two_and_three_calls_are_counted_by_how_often_the_latest_call_came():
    assert _seen(list("AAA")).repeats() == 3
    assert _seen(list("ABABA")).repeats() == 3
    assert _seen(list("ABAB")).repeats() == 2
    assert _seen(list("ABCABCA")).repeats() == 3  # read, the same no-op edit, the same failing test
    assert _seen(list("ABCABCABCABCA")).stuck
    assert _seen(list("ABCD" * 3)).repeats() == 1  # a round of four is work, not a loop this guard sees
    assert _seen(list("ABCACB")).repeats() == 1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from("ABCD"), max_size=30),
    st.lists(st.sampled_from("ABCD"), min_size=1, max_size=3, unique=True),
    st.integers(1, 4),
)
def test_a_loop_repeated_k_times_counts_at_least_k(prefix, cycle, k):
    guard = _seen(prefix + cycle * k)
    assert guard.repeats() >= k
    assert guard.repeats() <= len(prefix + cycle * k)


def user_notes(server) -> list[str]:
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "user" and "[" in m["content"]]


CALC_TEST = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def test_a_change_answered_without_running_the_tests_the_request_named_is_sent_back_once(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text(CALC_TEST)
    server.add(
        call("edit_file", ADD_FIXED),
        text("Done: the tests pass now."),
        call("run_command", {"command": "echo 1 passed"}),
        text("Fixed, and the test run says 1 passed."),
    )
    events = []
    agent = make_agent(server, workspace, coach="small", tools=CODING_TOOLS, events=events)
    result = agent.run_turn("Fix add in calc.py so that test_calc.py passes")
    assert result.final_text == "Fixed, and the test run says 1 passed."
    third = server.chat_requests()[2]["messages"]
    assert third[-2] == {"role": "assistant", "content": "Done: the tests pass now."}
    assert third[-1] == {"role": "user", "content": CHECK_THE_CHANGE}
    assert any(isinstance(e, ev.Notice) and "without running the tests" in e.text for e in events)


@pytest.mark.parametrize(
    "request_text, script, tools",
    [
        ("Fix add in calc.py", [call("edit_file", ADD_FIXED), text("Done.")], "coding"),  # no tests named
        (  # a command ran after the change
            "Fix add so the tests pass",
            [call("edit_file", ADD_FIXED), call("run_command", {"command": "echo ok"}), text("Done.")],
            "coding",
        ),
        ("Fix add so the tests pass", [call("edit_file", ADD_FIXED), text("Done.")], "files"),  # nothing to run with
        ("Make the tests pass", [text("They already pass.")], "coding"),  # nothing changed
    ],
)
def test_no_check_is_asked_for_without_tests_named_a_change_made_and_unchecked_and_a_way_to_run(
    server, workspace, request_text, script, tools
):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.add(*script)
    agent = make_agent(server, workspace, coach="small", tools=CODING_TOOLS if tools == "coding" else FILE_TOOLS)
    agent.run_turn(request_text)
    assert len(server.chat_requests()) == len(script)
    assert CHECK_THE_CHANGE not in user_notes(server)


def test_tests_named_in_passing_with_none_in_the_workspace_ask_for_no_check(server, workspace):
    # aider's benchmark: "Don't change the names … they may be referenced from … unit tests", and the
    # tests are kept from the model; asked to run them, it has nothing to run (a request wasted per try)
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.add(call("edit_file", ADD_FIXED), text("Done."))
    agent = make_agent(server, workspace, coach="small", tools=CODING_TOOLS)
    agent.run_turn("Fix add in calc.py. Keep its name: unit tests may reference it.")
    assert len(server.chat_requests()) == 2
    assert CHECK_THE_CHANGE not in user_notes(server)


@pytest.mark.parametrize("test_file", ["test_calc.py", "tests/check.py", "calc_test.go", "web/calc.spec.ts"])
def test_a_test_file_by_any_runners_name_is_one_to_run(workspace, test_file):
    assert not small.has_tests(workspace)
    (workspace / test_file).parent.mkdir(parents=True, exist_ok=True)
    (workspace / test_file).write_text("")
    assert small.has_tests(workspace)


def test_the_check_is_asked_for_once_a_turn(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text(CALC_TEST)
    server.add(call("edit_file", ADD_FIXED), text("Done."), text("Still done."))
    agent = make_agent(server, workspace, coach="small", tools=CODING_TOOLS)
    assert agent.run_turn("fix calc.py for the tests").final_text == "Still done."
    assert len(server.chat_requests()) == 3
