"""The pure pieces on their own: pair sanitising, placeholders, descriptions, digest, report."""

import json

from tests.support.histories import assistant, filler, stub_summarizer, system, tool, tool_history, user

from nanohermes.context import (
    MISSING_RESULT_STUB,
    ContextEngine,
    build_digest,
    pairing_problems,
    placeholder_old_tool_outputs,
    sanitize_tool_pairs,
    size_by_kind,
    summary_message,
    total_size,
)
from nanohermes.calls import ResultFacts, describe_result, files_touched, parse_tool_call
from nanohermes.context.digest import DIGEST_MAX_CHARS


def test_sanitize_drops_orphan_results_and_stubs_missing_ones():
    messages = [
        system(),
        tool("orphan", "x"),
        assistant(None, [("a", "grep", {}), ("b", "glob", {})]),
        tool("b", "B"),
        tool("b", "duplicate"),
        user("next"),
    ]
    out = sanitize_tool_pairs(messages)
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["b", "a"]
    assert out[3] == tool("a", MISSING_RESULT_STUB)
    assert pairing_problems(out) == [] and len(pairing_problems(messages)) == 3


def test_sanitize_returns_a_valid_history_unchanged():
    messages = tool_history(3, 100)
    out = sanitize_tool_pairs(messages)
    assert out == messages and all(a is b for a, b in zip(out, messages))


def test_a_result_separated_from_its_call_by_a_user_message_is_an_orphan():
    messages = [system(), assistant(None, [("a", "grep", {})]), user("wait"), tool("a", "late")]
    assert sanitize_tool_pairs(messages) == [system(), assistant(None, [("a", "grep", {})]), tool("a", MISSING_RESULT_STUB), user("wait")]


def test_old_write_file_bodies_shrink_but_stay_valid_json():
    body = filler(5_000)
    messages = [system(), user("go"), assistant(None, [("w", "write_file", {"path": "a.py", "content": body})]), tool("w", "wrote a.py")]
    messages += [user(f"u{i}") for i in range(10)]
    out, replaced = placeholder_old_tool_outputs(messages, keep_recent=10)
    arguments = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py" and "more chars cleared to save context" in arguments["content"]
    assert replaced == [] and out[3] is messages[3]


def test_describe_result_names_command_size_exit_code_and_last_line():
    call = parse_tool_call({"id": "c", "function": {"name": "run_command", "arguments": '{"command": "pytest -q"}'}})
    text = "$ pytest -q\nexit code 1\n" + filler(5_000) + "\nFAILED tests/test_x.py::test_y - AssertionError\n"
    line = describe_result(call, text, ResultFacts(exit_code=1))
    assert line.startswith("[run_command command=pytest -q → ") and "exit code 1" in line
    assert "last line: FAILED tests/test_x.py::test_y" in line and "\n" not in line


def test_malformed_arguments_are_described_not_crashed_on():
    call = parse_tool_call({"id": "c", "function": {"name": "grep", "arguments": "{not json"}})
    assert call.arguments == {} and "{not json" in describe_result(call, "x" * 2_000)


def test_files_touched_lists_written_and_edited_paths_once_in_order():
    messages = [
        assistant(None, [("1", "edit_file", {"path": "b.py"}), ("2", "read_file", {"path": "c.py"})]),
        assistant(None, [("3", "write_file", {"path": "a.py"}), ("4", "edit_file", {"path": "b.py"})]),
    ]
    assert files_touched(messages) == ["b.py", "a.py"]


def test_digest_is_bounded_even_for_a_huge_history():
    messages = [user(filler(10_000)) for _ in range(50)]
    messages += [assistant(None, [(f"c{i}", "run_command", {"command": filler(5_000)})]) for i in range(200)]
    digest = build_digest(messages, previous_summary=filler(20_000))
    assert len(digest) <= DIGEST_MAX_CHARS
    assert digest == build_digest(messages, previous_summary=filler(20_000))


def test_digest_keeps_the_previous_summary_so_a_failure_loses_nothing_older():
    digest = build_digest([summary_message("Goal: gzip. Edited src/a.py."), user("more")])
    assert "Goal: gzip. Edited src/a.py." in digest and "- more" in digest


def test_report_one_line_says_what_happened():
    out, report = ContextEngine(budget_chars=30_000).fit(tool_history(20, 3_000), stub_summarizer())
    line = report.one_line()
    assert line.startswith("context auto compaction (placeholders")
    assert f"{report.before_chars:,} → {report.after_chars:,} chars" in line
    assert report.after_chars == total_size(out) and report.messages_after == len(out)


def test_size_by_kind_accounts_for_every_char():
    messages = tool_history(3, 500)
    messages.insert(1, summary_message("s"))
    kinds = size_by_kind(messages)
    assert sum(kinds.values()) == total_size(messages)
    assert kinds["summary"] > 0 and kinds["tool"] > kinds["tool_calls"] > 0


def test_trim_note_survives_braces_in_a_tool_call_id():
    messages = [system(), user("go"), assistant(None, [("id{0}", "run_command", {"command": "make"})]), tool("id{0}", filler(30_000))]
    out, _ = ContextEngine(budget_chars=5_000).fit(messages, stub_summarizer())
    assert 'recall(id="id{0}")' in out[3]["content"] and total_size(out) <= 5_000
