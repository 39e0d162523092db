"""The one call describer and the facts a result carries."""

from nanohermes.calls import (
    ResultFacts,
    ToolCall,
    describe_call,
    describe_result,
    files_read,
    files_touched,
    parse_tool_call,
)
from tests.support.histories import assistant, filler


def test_describe_result_names_command_size_exit_code_and_last_line():
    call = parse_tool_call({"id": "c", "function": {"name": "run_command", "arguments": '{"command": "pytest -q"}'}})
    text = "$ pytest -q\nexit code 1\n" + filler(5_000) + "\nFAILED tests/test_x.py::test_y - AssertionError\n"
    line = describe_result(call, text, ResultFacts(exit_code=1))
    assert line.startswith("[run_command command=pytest -q → ") and "exit code 1" in line
    assert "last line: FAILED tests/test_x.py::test_y" in line and "\n" not in line


def test_without_facts_nothing_is_guessed_from_the_text():
    call = ToolCall.of("run_command", '{"command": "pytest"}')
    assert "exit code" not in describe_result(call, "$ pytest\nexit code 1\n" + filler(2_000))


def test_malformed_arguments_are_described_not_crashed_on():
    call = parse_tool_call({"id": "c", "function": {"name": "grep", "arguments": "{not json"}})
    assert call.arguments == {} and "{not json" in describe_result(call, "x" * 2_000)


def test_one_describer_for_every_caller_cut_to_a_line_when_asked():
    call = ToolCall.of("read_file", '{"path": "src/x.py", "offset": 10}')
    assert describe_call(call) == "read_file path=src/x.py offset=10"
    assert describe_call(ToolCall.of("run_command", '{"command": "' + "x" * 300 + '"}'), 100).endswith("…")


def test_files_touched_and_read_list_paths_once_in_order():
    messages = [
        assistant(None, [("1", "edit_file", {"path": "b.py"}), ("2", "read_file", {"path": "c.py"})]),
        assistant(None, [("3", "write_file", {"path": "a.py"}), ("4", "edit_file", {"path": "b.py"})]),
    ]
    assert files_touched(messages) == ["b.py", "a.py"] and files_read(messages) == ["c.py"]


def test_facts_round_trip_through_json_and_ignore_unknown_fields():
    facts = ResultFacts(path="a.py", changed=True, exit_code=0)
    assert ResultFacts.from_dict(facts.to_dict()) == facts
    assert facts.to_dict() == {"path": "a.py", "changed": True, "exit_code": 0}
    assert ResultFacts.from_dict({"exit_code": 2, "later_field": 1}) == ResultFacts(exit_code=2)
