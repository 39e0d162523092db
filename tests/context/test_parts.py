"""The pure pieces on their own: pair sanitising, placeholders, digest, ledger, report."""

import json

from nanohermes.calls import ResultFacts
from nanohermes.context import ContextEngine, pairing_problems, sanitize_tool_pairs, size_by_kind
from nanohermes.context.budget import total_size
from nanohermes.context.digest import DIGEST_MAX_CHARS, LEDGER_LINE_CHARS, build_digest, file_ledger
from nanohermes.context.placeholders import clear_old_outputs
from nanohermes.context.sanitize import MISSING_RESULT_STUB
from nanohermes.context.summary import summary_message, summary_text
from tests.support.histories import assistant, filler, stub_summarizer, system, tool, tool_history, user


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
    assert sanitize_tool_pairs(messages) == [
        system(),
        assistant(None, [("a", "grep", {})]),
        tool("a", MISSING_RESULT_STUB),
        user("wait"),
    ]


def test_old_write_file_bodies_shrink_but_stay_valid_json():
    body = filler(5_000)
    messages = [
        system(),
        user("go"),
        assistant(None, [("w", "write_file", {"path": "a.py", "content": body})]),
        tool("w", "wrote a.py"),
    ]
    messages += [user(f"u{i}") for i in range(10)]
    out, replaced = clear_old_outputs(messages, len(messages) - 10, min_chars=1_000)
    arguments = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py" and "more chars cleared to save context" in arguments["content"]
    assert replaced == [] and out[3] is messages[3]


def test_a_cleared_run_command_output_keeps_its_exit_code_from_the_facts():
    messages = [
        system(),
        user("test"),
        assistant(None, [("r", "run_command", {"command": "pytest -q"})]),
        tool("r", filler(5_000)),
    ]
    out, _ = clear_old_outputs(messages + [user("next")], 4, 1_000, {"r": ResultFacts(exit_code=1)})
    assert "run_command command=pytest -q — 5,000 chars, exit code 1" in out[3]["content"]


def test_digest_is_bounded_even_for_a_huge_history():
    messages = [user(filler(10_000)) for _ in range(50)]
    messages += [assistant(None, [(f"c{i}", "run_command", {"command": filler(5_000)})]) for i in range(200)]
    digest = build_digest(messages, previous_summary=filler(20_000))
    assert len(digest) <= DIGEST_MAX_CHARS
    assert digest == build_digest(messages, previous_summary=filler(20_000))


def test_digest_keeps_the_previous_summary_so_a_failure_loses_nothing_older():
    previous = summary_text(summary_message("Goal: gzip. Edited src/a.py.\n\nFiles changed: src/a.py"))
    digest = build_digest([user("more")], previous_summary=previous)
    assert "Goal: gzip. Edited src/a.py." in digest and "- more" in digest
    assert digest.startswith("Files changed: src/a.py")  # the ledger carried over, once
    assert digest.count("Files changed") == 1


def test_a_ledger_line_keeps_the_latest_paths_within_its_cap():
    history = [
        assistant(None, [(f"c{i}", "read_file", {"path": f"src/package/module_{i:03d}.py"})]) for i in range(200)
    ]
    ledger = file_ledger(history)
    assert len(ledger) <= LEDGER_LINE_CHARS and ledger.endswith("src/package/module_199.py")


def test_report_one_line_says_what_happened():
    out, report = ContextEngine(high_water_chars=30_000).fit(tool_history(20, 3_000), stub_summarizer())
    line = report.one_line()
    assert line.startswith("context compacted automatically:") and "old tool outputs cleared" in line
    assert "placeholders" not in line and "budget" not in line
    assert f"{report.before_chars:,} → {report.after_chars:,} chars" in line
    assert report.after_chars == total_size(out) and report.messages_after == len(out)


def test_size_by_kind_accounts_for_every_char():
    messages = tool_history(3, 500)
    messages.insert(1, summary_message("s"))
    kinds = size_by_kind(messages)
    assert sum(kinds.values()) == total_size(messages)
    assert kinds["summary"] > 0 and kinds["tool"] > kinds["tool_calls"] > 0


def test_trim_note_survives_braces_in_a_tool_call_id():
    messages = [
        system(),
        user("go"),
        assistant(None, [("id{0}", "run_command", {"command": "make"})]),
        tool("id{0}", filler(30_000)),
    ]
    out, _ = ContextEngine(high_water_chars=5_000).fit(messages, stub_summarizer())
    assert 'recall(id="id{0}")' in out[3]["content"] and total_size(out) <= 5_000


def test_clearing_an_attachment_keeps_the_words_each_files_first_line_and_the_memory_block():
    from nanohermes.context.placeholders import ATTACHMENT_CLEARED, clear_attachment
    from nanohermes.memory.block import attach_block
    from nanohermes.text import FILES_HEADER, with_attachment

    page = "read_file a.py lines 1–3 of 90\n1\tx = 1\n2\t\n3\t" + "y" * 2_000
    listing = "directory src/: 2 files (…)\nsrc/b.py\nsrc/c.py"
    block = "<nanohermes-memory>\nMemories…:\n- [fact] tabs\n</nanohermes-memory>"
    words = "[The user ran /undo.]\n\nfix a.py and @src/"
    message = user(attach_block(with_attachment(words, f"{FILES_HEADER}\n\n{page}\n\n{listing}"), block))
    cleared = clear_attachment(message, 1_000)
    lines = ["read_file a.py lines 1–3 of 90", "directory src/: 2 files (…)"]
    assert cleared["content"] == "\n\n".join([words, "\n".join([ATTACHMENT_CLEARED, *lines]), block])
    assert clear_attachment(cleared, 1_000) is cleared  # nothing attached is left to clear
    assert clear_attachment(message, 5_000) is message  # a small attachment stays verbatim
    assert clear_attachment(user(words), 0)["content"] == words


def test_an_attachment_a_kept_read_points_back_to_stays_verbatim():
    from nanohermes.prompt.mentions import already_attached
    from nanohermes.text import FILES_HEADER, with_attachment

    page = "read_file a.py lines 1–2 of 2\n1\t" + "x" * 3_000 + "\n2\ty"
    request = user(with_attachment("what does a.py do?", f"{FILES_HEADER}\n\n{page}"))
    old = [assistant(None, [("g", "grep", {"pattern": "x"})]), tool("g", filler(5_000))]
    pointer = [assistant(None, [("r", "read_file", {"path": "a.py"})]), tool("r", already_attached(page))]
    out, _ = clear_old_outputs([system(), request, *old, *pointer], 4, 1_000)
    assert out[1] is request and out[3]["content"].startswith("[old tool output cleared")
    out, _ = clear_old_outputs([system(), request, *old, *pointer], 6, 1_000)  # the pointer is cleared too: old
    assert "[the files attached here were cleared" in out[1]["content"]


def test_a_small_window_clears_smaller_old_results_and_cuts_old_edit_text():
    from nanohermes.context import settings_for_window

    small, large = settings_for_window(8_192), settings_for_window(32_768)
    assert (small.clear_chars, small.argument_chars) == (500, 300)
    assert large.clear_chars == large.argument_chars == 1_000
    edit = assistant(None, [("e", "edit_file", {"path": "a.py", "old_text": "o" * 800, "new_text": "n" * 800})])
    messages = [system(), user("fix a.py"), edit, tool("e", "edited a.py " + "d" * 700), user("next")]
    out, ids = clear_old_outputs(messages, 4, small.clear_chars, None, small.argument_chars)
    arguments = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
    assert ids == ["e"] and arguments["path"] == "a.py" and "more chars cleared" in arguments["new_text"]
    out, ids = clear_old_outputs(messages, 4, large.clear_chars, None, large.argument_chars)
    assert ids == [] and out[2] is edit
