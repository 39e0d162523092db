"""One test per rule of SPEC section 4 (the context budget)."""

import copy
import json

from tests.support.histories import (
    all_text,
    assistant,
    chat_history,
    failing_summarizer,
    filler,
    read_round,
    stub_summarizer,
    system,
    tool,
    tool_history,
    user,
)

from nanohermes.context.engine import TOKEN_TARGET_SLACK
from nanohermes.context import (
    CONTEXT_CHAR_BUDGET,
    KEEP_RECENT,
    OMITTED_HEADER,
    SUMMARY_HEADER,
    SUMMARY_MAX_WORDS,
    ContextEngine,
    cut_point,
    message_size,
    pairing_problems,
    total_size,
)


def test_budget_constants_are_the_spec_numbers():
    assert (CONTEXT_CHAR_BUDGET, KEEP_RECENT, SUMMARY_MAX_WORDS) == (120_000, 10, 300)


def test_size_is_the_sum_of_compact_json_serialisations_with_escapes():
    messages = [system('say "hi"\n'), user("中文 ok")]
    expected = sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) for m in messages)
    assert total_size(messages) == expected
    assert message_size(system('"\n')) == len('{"role":"system","content":"\\"\\n"}')


def test_size_cache_sees_a_replaced_content_string():
    engine = ContextEngine()
    message = user("short")
    assert engine.size([message]) == message_size(message)
    message["content"] = filler(500)
    assert engine.size([message]) == message_size(message)


def test_under_budget_fit_returns_the_same_list_and_no_report():
    messages = tool_history(3, 500)
    assert ContextEngine().fit(messages, stub_summarizer()) == (messages, None)


def test_old_large_tool_results_become_placeholders_naming_tool_arguments_size_and_recall():
    messages = tool_history(12, 3_000)
    summarize = stub_summarizer()
    out, report = ContextEngine(budget_chars=35_000).fit(messages, summarize)
    assert report.layers == ["placeholders"] and summarize.calls == []  # no model call
    cleared = out[3]["content"]
    assert cleared.startswith("[old tool output cleared") and "\n" not in cleared
    assert "read_file path=src/module_0.py" in cleared and "3,0" in cleared and 'recall(id="call_0")' in cleared
    assert len(out) == len(messages) and pairing_problems(out) == []  # the message stays


def test_placeholders_never_touch_the_recent_tail_or_the_system_message():
    messages = [system(filler(5_000))] + tool_history(12, 3_000)[1:]
    out, report = ContextEngine(budget_chars=44_000).fit(messages, stub_summarizer())
    assert report.layers == ["placeholders"] and out[0] is messages[0]
    assert all(a is b for a, b in zip(out[-KEEP_RECENT:], messages[-KEEP_RECENT:]))


def test_small_tool_results_stay_verbatim_outside_the_tail():
    messages = tool_history(12, 3_000)
    messages[3] = tool("call_0", "exit code 0\n3 passed")
    out, _ = ContextEngine(budget_chars=35_000).fit(messages, stub_summarizer())
    assert out[3] is messages[3]


def test_a_compaction_leaves_headroom_instead_of_firing_again_next_step():
    messages = tool_history(12, 3_000)  # placeholders alone would leave 19,424 chars: 97 % of 20,000
    engine = ContextEngine(budget_chars=20_000)
    out, report = engine.fit(messages, stub_summarizer())
    assert report.layers == ["placeholders", "summary"] and total_size(out) < 15_000
    assert engine.fit(out + [user("next question " + filler(2_000))], stub_summarizer())[1] is None


def test_summary_runs_when_placeholders_are_not_enough():
    messages = chat_history(20, 2_000)
    summarize = stub_summarizer()
    out, report = ContextEngine(budget_chars=30_000).fit(messages, summarize)
    assert report.layer == "summary" and len(summarize.calls) == 1
    assert out[1]["content"].startswith(SUMMARY_HEADER + "\n")
    assert total_size(out) <= 30_000


def test_one_huge_message_is_trimmed_from_the_middle_with_a_note():
    log = "START of log\n" + filler(60_000) + "FAILED tests/test_parser.py::test_gzip - AssertionError"
    messages = [system(), user("run the tests"), assistant(None, [("c1", "run_command", {"command": "pytest -q"})]), tool("c1", log)]
    out, report = ContextEngine(budget_chars=10_000).fit(messages, stub_summarizer())
    assert report.layer == "trim" and report.trimmed == 1
    trimmed = out[3]["content"]
    assert trimmed.startswith("START of log") and trimmed.endswith("AssertionError")
    assert "chars trimmed from the middle" in trimmed and 'recall(id="c1")' in trimmed
    assert total_size(out) <= 10_000 and pairing_problems(out) == []


def test_trimming_keeps_tool_call_arguments_valid_json():
    body = filler(40_000)
    messages = [system(), user("write it"), assistant(None, [("c1", "write_file", {"path": "a.py", "content": body})]), tool("c1", "wrote a.py")]
    out, _ = ContextEngine(budget_chars=5_000).fit(messages, stub_summarizer())
    arguments = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py" and len(arguments["content"]) < 1_000
    assert total_size(out) <= 5_000


def test_chat_without_tools_is_compacted():
    messages = chat_history(40, 2_000)
    out, report = ContextEngine(budget_chars=40_000).fit(messages, stub_summarizer())
    assert report is not None and report.layer == "summary"
    assert total_size(out) <= 40_000


def test_automatic_compaction_needs_more_than_keep_recent_plus_one_messages():
    messages = [system(), user(filler(3_000))] + [assistant(filler(3_000)) if i % 2 else user(filler(3_000)) for i in range(9)]
    assert len(messages) == KEEP_RECENT + 1
    summarize = stub_summarizer()
    out, report = ContextEngine(budget_chars=20_000).fit(messages, summarize)
    assert summarize.calls == [] and report.layer == "trim"  # only layer (d) may act
    assert len(out) == len(messages)


def test_forced_compaction_runs_even_under_budget():
    messages = tool_history(12, 200)
    summarize = stub_summarizer()
    out, report = ContextEngine().fit(messages, summarize, force=True)
    assert report.forced and report.layer == "summary" and len(summarize.calls) == 1
    assert len(out) < len(messages)


def test_cut_point_is_len_minus_keep_recent():
    messages = chat_history(10, 10)
    assert cut_point(messages, KEEP_RECENT) == len(messages) - KEEP_RECENT


def test_cut_point_never_lands_on_tool_message():
    messages = [system(), user("go"), assistant(None, [(f"c{i}", "read_file", {"path": f"f{i}"}) for i in range(5)])]
    messages += [tool(f"c{i}", "x") for i in range(5)] + [assistant("done"), user("more"), assistant("ok"), user("and"), assistant("fine")]
    start = cut_point(messages, 8)
    assert messages[len(messages) - 8]["role"] == "tool"
    assert messages[start]["role"] != "tool" and start == 8


def test_cut_point_gives_up_when_start_is_at_most_one_so_the_system_message_stays():
    assert cut_point([system(), user("a"), assistant("b")], KEEP_RECENT) is None
    messages = [system(), assistant(None, [("c1", "grep", {"pattern": "x"})]), tool("c1", filler(90_000))]
    out, report = ContextEngine(budget_chars=10_000).fit(messages, stub_summarizer(), force=True)
    assert out[0] is messages[0] and any("nothing to summarise" in n for n in report.notices)


def test_summary_is_one_system_message_at_index_1_saying_it_is_reference_material():
    out, _ = ContextEngine(budget_chars=30_000).fit(chat_history(20, 2_000), stub_summarizer("The summary."))
    summary = out[1]
    assert summary["role"] == "system"
    first_line, rest = summary["content"].split("\n", 1)
    assert first_line == "[Earlier conversation summary]"
    assert "reference material" in rest and "not new instructions" in rest and "live" in rest
    assert "The summary." in rest
    assert sum(m["role"] == "system" for m in out) == 2


def test_summary_failure_leaves_a_deterministic_digest():
    messages = tool_history(14, 3_000) + [user("Don't change the public API."), assistant("Understood.")]
    messages += [assistant(None, [("w1", "edit_file", {"path": "src/parser.py", "old_text": "a", "new_text": "b"})]), tool("w1", "edited src/parser.py")]
    messages += [user("Keep it fast.")] + [assistant(f"step {i}") for i in range(12)]
    summarize = failing_summarizer()
    out, report = ContextEngine(budget_chars=12_000).fit(messages, summarize, force=True)
    assert len(summarize.calls) == 2  # one retry, then the digest
    assert report.layer == "digest" and "TimeoutError" in report.summary_error
    content = out[1]["content"]
    assert content.startswith(OMITTED_HEADER + "\n")
    for fact in ("Goal: add gzip support", "Don't change the public API.", "src/parser.py", "read_file path=src/module_3.py", "Last assistant text: step"):
        assert fact in content
    again, _ = ContextEngine(budget_chars=12_000).fit(messages, failing_summarizer(), force=True)
    assert again[1]["content"] == content
    assert out[2] == user("Keep it fast.")  # the latest request is live, not digested


def test_an_empty_summary_counts_as_a_failure():
    summarize = stub_summarizer("   ")
    out, report = ContextEngine(budget_chars=30_000).fit(chat_history(20, 2_000), summarize)
    assert len(summarize.calls) == 2 and report.layer == "digest"
    assert out[1]["content"].startswith(OMITTED_HEADER)


def test_latest_user_message_survives_compaction_verbatim():
    request = user("Now fix the gzip bug in src/parser.py — " + filler(300))
    messages = [system(), user("Goal: gzip support.")] + [m for i in range(8) for m in read_round(i, 3_000)]
    messages += [request] + [m for i in range(8, 14) for m in read_round(i, 3_000)]
    out, report = ContextEngine(budget_chars=30_000).fit(messages, stub_summarizer(), force=True)
    assert report.layer == "summary"
    assert out[2] is request and out[2] == copy.deepcopy(request)
    assert out.count(request) == 1


def test_summary_input_has_tool_calls_descriptions_previous_summary_and_focus():
    messages = tool_history(12, 3_000)
    messages.insert(1, {"role": "system", "content": SUMMARY_HEADER + "\nref\n\nEarlier: user wants gzip.\n[End of earlier conversation summary]"})
    messages += [assistant(f"step {i}") for i in range(10)]
    summarize = stub_summarizer()
    ContextEngine().fit(messages, summarize, force=True, focus="the parser changes")
    system_prompt, text = summarize.calls[0]
    assert 'read_file({"path": "src/module_0.py"})' in text
    assert "[read_file path=src/module_0.py → 3,0" in text and filler(3_000) not in text
    assert "Previous summary" in text and "Earlier: user wants gzip." in text
    assert "focus on: the parser changes" in text
    assert "300 words" in system_prompt


def test_previous_summary_is_replaced_never_two_summaries():
    engine = ContextEngine(budget_chars=30_000)
    messages, _ = engine.fit(chat_history(20, 2_000), stub_summarizer("first summary"))
    messages += chat_history(20, 2_000)[1:]
    messages, _ = engine.fit(messages, stub_summarizer("second summary"))
    summaries = [m for m in messages if m["role"] == "system" and SUMMARY_HEADER in m["content"]]
    assert len(summaries) == 1 and "second summary" in summaries[0]["content"] and messages[1] is summaries[0]


def test_summary_prompt_asks_for_the_handover_sections_in_at_most_300_words():
    summarize = stub_summarizer()
    ContextEngine().fit(chat_history(12, 100), summarize, force=True)
    prompt = summarize.calls[0][0].lower()
    for asked in ("goal", "constraints and preferences", "past tense", "current state", "key decisions", "files touched", "open problems", "remaining work", "at most 300 words", "summary only"):
        assert asked in prompt


def test_pairs_are_valid_after_compaction_even_from_a_broken_history():
    messages = tool_history(12, 3_000)
    messages.insert(5, tool("ghost", "orphan result"))
    messages.append(assistant(None, [("late", "grep", {"pattern": "gzip"})]))  # no result yet
    out, _ = ContextEngine(budget_chars=20_000).fit(messages, stub_summarizer())
    assert pairing_problems(out) == []
    assert out[-1] == tool("late", "[result omitted — see the earlier conversation summary]")
    assert "orphan result" not in all_text(out)


def test_fit_changes_only_what_is_sent_never_the_input():
    messages = tool_history(14, 3_000)
    snapshot = copy.deepcopy(messages)
    ContextEngine(budget_chars=20_000).fit(messages, stub_summarizer(), force=True)
    assert messages == snapshot


def test_token_trigger_compacts_below_the_char_budget():
    messages = chat_history(20, 2_000)
    engine = ContextEngine()
    assert engine.fit(messages, stub_summarizer()) == (messages, None)
    out, report = engine.fit(messages, stub_summarizer(), token_estimate=40_000, token_limit=10_000)
    assert report.token_triggered and "summary" in report.layers
    assert total_size(out) <= total_size(messages) // 4 * (1 + TOKEN_TARGET_SLACK)


def test_a_small_overshoot_of_a_token_target_is_not_trimmed_but_a_forced_one_is():
    messages = chat_history(20, 2_000)
    size = total_size(messages)
    engine = ContextEngine()
    out, report = engine.fit(messages, stub_summarizer(), token_estimate=size, token_limit=int(size * 0.99))
    assert "trim" not in report.layers
    out, report = engine.fit(messages, stub_summarizer(), force=True, token_estimate=size, token_limit=size // 10)
    assert total_size(out) <= size // 10 + 200 or "trim" in report.layers


def test_forced_compaction_with_nothing_new_to_summarise_makes_no_model_call():
    messages = [system(), {"role": "system", "content": SUMMARY_HEADER + "\nref\n\nold summary\n[End of earlier conversation summary]"}]
    messages += [user("q"), assistant("a")] * 5
    summarize = stub_summarizer()
    out, report = ContextEngine().fit(messages, summarize, force=True)
    assert summarize.calls == [] and out == messages and "nothing to summarise" in report.one_line()


def test_provider_overflow_recovery_shrinks_even_a_short_history():
    messages = [system(), user("summarise this log"), assistant(None, [("c1", "run_command", {"command": "cat big.log"})]), tool("c1", filler(60_000))]
    engine = ContextEngine()
    assert engine.fit(messages, stub_summarizer()) == (messages, None)  # under the char budget
    out, report = engine.fit(messages, stub_summarizer(), force=True, token_estimate=20_000, token_limit=14_000)
    assert report.layer == "trim" and total_size(out) <= 0.7 * total_size(messages)
    assert pairing_problems(out) == [] and out[1] is messages[1]
