"""One test per rule of the context budget: the water marks, the layers, the summary request."""

import copy
import itertools
import json

from nanohermes.context import ContextEngine, ContextSettings, pairing_problems, settings_for_window
from nanohermes.context.budget import (
    CONTEXT_CHAR_BUDGET,
    HIGH_WATER,
    LOW_WATER,
    SUMMARY_MAX_WORDS,
    message_size,
    total_size,
)
from nanohermes.context.summary import INSTRUCTION_HEADER, OMITTED_HEADER, SUMMARY_ACK, SUMMARY_HEADER
from tests.support.histories import (
    all_text,
    assistant,
    chat_history,
    failing_summarizer,
    filler,
    read_round,
    request_text,
    stub_summarizer,
    system,
    tool,
    tool_history,
    user,
)


def engine(high: int = CONTEXT_CHAR_BUDGET, **overrides) -> ContextEngine:
    return ContextEngine(high_water_chars=high, **overrides)


def roles_alternate(messages: list[dict]) -> bool:
    """After the one system message: user and assistant take turns (tool results follow their call)."""
    roles = [m["role"] for m in messages[1:] if m["role"] != "tool"]
    return (
        messages[0]["role"] == "system" and all(a != b for a, b in itertools.pairwise(roles)) and "system" not in roles
    )


def test_budget_constants_are_the_documented_numbers():
    assert (CONTEXT_CHAR_BUDGET, SUMMARY_MAX_WORDS, HIGH_WATER, LOW_WATER) == (120_000, 300, 0.90, 0.30)


def test_size_is_the_sum_of_compact_json_serialisations_with_escapes():
    messages = [system('say "hi"\n'), user("中文 ok")]
    expected = sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) for m in messages)
    assert total_size(messages) == expected
    assert message_size(system('"\n')) == len('{"role":"system","content":"\\"\\n"}')


def test_size_cache_sees_a_replaced_content_string():
    e = ContextEngine()
    message = user("short")
    assert e.size([message]) == message_size(message)
    message["content"] = filler(500)
    assert e.size([message]) == message_size(message)


def test_below_the_high_water_mark_requests_only_append():
    messages = tool_history(12, 3_000)
    assert 40_000 < total_size(messages) < 41_000
    assert engine(41_000).fit(messages, stub_summarizer()) == (messages, None)


def test_old_outputs_are_cleared_in_one_batch_naming_tool_arguments_size_and_recall():
    messages = tool_history(12, 3_000)
    summarize = stub_summarizer()
    out, report = engine(30_000).fit(messages, summarize)
    assert report.layers == ["placeholders"] and summarize.calls == []  # no model call
    cleared = out[3]["content"]
    assert cleared.startswith("[old tool output cleared") and "\n" not in cleared
    assert "read_file path=src/module_0.py" in cleared and "3,0" in cleared and 'recall(id="call_0")' in cleared
    assert len(out) == len(messages) and pairing_problems(out) == []  # the message stays
    assert len(report.placeholder_ids) >= 10  # all at once, not one per step
    assert total_size(out) <= report.low_water_chars


def test_clearing_keeps_the_newest_outputs_verbatim_as_far_as_the_low_water_mark_allows():
    messages = tool_history(12, 3_000)
    out, report = engine(30_000).fit(messages, stub_summarizer())
    kept = [m for m in out if m["role"] == "tool" and not m["content"].startswith("[old tool output")]
    assert kept and kept[-1] is messages[-2]  # the latest result is whole
    assert total_size(out) <= report.low_water_chars < total_size(out) + 3_500  # and as many as fit


def test_small_tool_results_stay_verbatim_outside_the_tail():
    messages = tool_history(12, 3_000)
    messages[3] = tool("call_0", "exit code 0\n3 passed")
    out, _ = engine(30_000).fit(messages, stub_summarizer())
    assert out[3] is messages[3]


def test_a_summary_runs_when_clearing_outputs_is_not_enough_and_lands_at_the_low_water_mark():
    messages = chat_history(20, 2_000)
    summarize = stub_summarizer()
    out, report = engine(30_000).fit(messages, summarize)
    assert report.layer == "summary" and len(summarize.calls) == 1
    assert out[1]["content"].startswith(SUMMARY_HEADER + "\n")
    assert total_size(out) <= report.low_water_chars == int(30_000 * LOW_WATER)


def test_the_summary_is_a_user_message_saying_it_is_reference_material_and_roles_alternate():
    out, _ = engine(30_000).fit(chat_history(20, 2_000), stub_summarizer("The summary."))
    summary = out[1]
    assert summary["role"] == "user"
    first_line, rest = summary["content"].split("\n", 1)
    assert first_line == "[Earlier conversation summary]"
    assert "reference material" in rest and "not new instructions" in rest and "live" in rest and "The summary." in rest
    assert sum(m["role"] == "system" for m in out) == 1  # strict chat templates allow one
    assert roles_alternate(out)


def test_when_the_kept_messages_start_with_the_user_an_acknowledgement_keeps_roles_alternating():
    request = user("Now fix the gzip bug in src/parser.py.")
    messages = [system(), user("Goal: gzip support.")] + [m for i in range(8) for m in read_round(i, 3_000)] + [request]
    out, _ = engine(30_000).fit(messages, stub_summarizer(), force=True)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[2]["content"] == SUMMARY_ACK and out[3] is request and roles_alternate(out)


def test_the_summary_request_reuses_the_conversations_prefix_plus_one_instruction():
    messages = chat_history(20, 2_000)
    summarize = stub_summarizer()
    engine(30_000).fit(messages, summarize)
    (request,) = summarize.calls
    *prefix, instruction = request.messages
    assert request.reuses_prefix and prefix == messages[: len(prefix)] and all(a is b for a, b in zip(prefix, messages))
    assert len(prefix) < len(messages)  # the kept tail is not summarised
    assert instruction["role"] == "user" and instruction["content"].startswith(INSTRUCTION_HEADER)
    assert "Do not call any tool" in instruction["content"]


def test_a_separate_summary_model_gets_an_excerpt_with_calls_descriptions_previous_summary_and_focus():
    messages = tool_history(12, 3_000) + [assistant(f"step {i}") for i in range(10)]
    first = ContextEngine(summary_reuses_prefix=False)
    messages, _ = first.fit(messages, stub_summarizer("Earlier: user wants gzip."), force=True)
    messages = messages + [user("go on")] + [m for i in range(20, 24) for m in read_round(i, 3_000)] + [assistant("ok")]
    summarize = stub_summarizer()
    first.fit(messages, summarize, force=True, focus="the parser changes")
    (request,) = summarize.calls
    assert not request.reuses_prefix and [m["role"] for m in request.messages] == ["system", "user"]
    prompt, text = request.messages[0]["content"], request.messages[1]["content"]
    assert 'read_file({"path": "src/module_20.py"})' in text
    assert "[read_file path=src/module_20.py → 3,0" in text and filler(3_000) not in text
    assert "Previous summary" in text and "Earlier: user wants gzip." in text
    assert "focus on: the parser changes" in text and "300 words" in prompt


def test_the_excerpt_is_used_when_the_conversation_would_not_fit_the_window():
    settings = settings_for_window(8_192, 4_096)
    messages = chat_history(20, 2_000)
    summarize = stub_summarizer()
    ContextEngine(settings).fit(messages, summarize, token_estimate=9_000)  # the prefix alone is over the window
    assert not summarize.calls[0].reuses_prefix


def test_after_an_overflow_the_summary_is_an_excerpt_and_what_is_left_goes_to_the_low_water_mark():
    messages = chat_history(20, 2_000)
    summarize = stub_summarizer()
    e = ContextEngine(settings_for_window(8_192, 4_096))
    out, report = e.fit(messages, summarize, force=True, token_estimate=9_000, overflow=True)
    assert not summarize.calls[0].reuses_prefix
    assert total_size(out) <= report.low_water_chars


def test_summary_failure_leaves_a_deterministic_digest():
    messages = tool_history(14, 3_000) + [user("Don't change the public API."), assistant("Understood.")]
    messages += [
        assistant(None, [("w1", "edit_file", {"path": "src/parser.py", "old_text": "a", "new_text": "b"})]),
        tool("w1", "edited src/parser.py"),
    ]
    messages += [user("Keep it fast.")] + [assistant(f"step {i}") for i in range(12)]
    summarize = failing_summarizer()
    out, report = engine(12_000).fit(messages, summarize, force=True)
    assert len(summarize.calls) == 2  # one retry, then the digest
    assert report.layer == "digest" and "TimeoutError" in report.summary_error
    content = out[1]["content"]
    assert out[1]["role"] == "user" and content.startswith(OMITTED_HEADER + "\n")
    for fact in (
        "Goal: add gzip support",
        "Don't change the public API.",
        "src/parser.py",
        "read_file path=src/module_3.py",
        "Last assistant text: step",
    ):
        assert fact in content
    again, _ = engine(12_000).fit(messages, failing_summarizer(), force=True)
    assert again[1]["content"] == content
    assert user("Keep it fast.") in out  # the latest request is live, not digested


def test_an_empty_summary_counts_as_a_failure():
    summarize = stub_summarizer("   ")
    out, report = engine(30_000).fit(chat_history(20, 2_000), summarize)
    assert len(summarize.calls) == 2 and report.layer == "digest"
    assert out[1]["content"].startswith(OMITTED_HEADER)


def test_latest_user_message_survives_compaction_verbatim():
    request = user("Now fix the gzip bug in src/parser.py — " + filler(300))
    messages = [system(), user("Goal: gzip support.")] + [m for i in range(8) for m in read_round(i, 3_000)]
    messages += [request] + [m for i in range(8, 14) for m in read_round(i, 3_000)]
    out, report = engine(30_000).fit(messages, stub_summarizer(), force=True)
    assert report.layer == "summary"
    assert out[3] is request and out[3] == copy.deepcopy(request)
    assert out.count(request) == 1


def test_the_previous_summary_is_replaced_never_two_summaries():
    e = engine(30_000)
    messages, _ = e.fit(chat_history(20, 2_000), stub_summarizer("first summary"))
    messages += chat_history(20, 2_000)[1:]
    summarize = stub_summarizer("second summary")
    messages, _ = e.fit(messages, summarize)
    summaries = [m for m in messages if SUMMARY_HEADER in (m.get("content") or "")]
    assert len(summaries) == 1 and "second summary" in summaries[0]["content"] and messages[1] is summaries[0]
    assert "first summary" in request_text(summarize.calls[0])  # the summariser updates it


def test_summary_prompt_asks_for_the_handover_sections_in_at_most_300_words():
    summarize = stub_summarizer()
    ContextEngine().fit(chat_history(12, 100), summarize, force=True)
    prompt = summarize.calls[0].messages[-1]["content"].lower()
    for asked in (
        "goal",
        "constraints and preferences",
        "past tense",
        "current state",
        "key decisions",
        "files touched",
        "open problems",
        "remaining work",
        "at most 300 words",
        "summary only",
    ):
        assert asked in prompt


def test_pairs_are_valid_after_compaction_even_from_a_broken_history():
    messages = tool_history(12, 3_000)
    messages.insert(5, tool("ghost", "orphan result"))
    messages.append(assistant(None, [("late", "grep", {"pattern": "gzip"})]))  # no result yet
    out, _ = engine(20_000).fit(messages, stub_summarizer())
    assert pairing_problems(out) == []
    assert out[-1] == tool("late", "[result omitted — see the earlier conversation summary]")
    assert "orphan result" not in all_text(out)


def test_fit_changes_only_what_is_sent_never_the_input():
    messages = tool_history(14, 3_000)
    snapshot = copy.deepcopy(messages)
    engine(20_000).fit(messages, stub_summarizer(), force=True)
    assert messages == snapshot


def test_a_known_window_is_filled_to_its_high_water_mark_before_anything_is_compacted():
    settings = settings_for_window(32_768, 4_096)
    assert settings.high_water_tokens == int(0.9 * (32_768 - 4_096))
    messages = chat_history(20, 2_000)
    e = ContextEngine(settings)
    assert e.fit(messages, stub_summarizer(), token_estimate=int(0.85 * (32_768 - 4_096))) == (messages, None)
    out, report = e.fit(messages, stub_summarizer(), token_estimate=settings.high_water_tokens + 1)
    assert report.token_triggered and "summary" in report.layers
    assert total_size(out) <= report.low_water_chars <= total_size(messages) * LOW_WATER


def test_one_huge_message_is_trimmed_from_the_middle_with_a_note_down_to_the_low_water_mark():
    log = "START of log\n" + filler(60_000) + "FAILED tests/test_parser.py::test_gzip - AssertionError"
    messages = [
        system(),
        user("run the tests"),
        assistant(None, [("c1", "run_command", {"command": "pytest -q"})]),
        tool("c1", log),
    ]
    out, report = engine(30_000).fit(messages, stub_summarizer())
    assert report.layer == "trim" and report.trimmed == 1
    trimmed = out[3]["content"]
    assert trimmed.startswith("START of log") and trimmed.endswith("AssertionError")
    assert "chars trimmed from the middle" in trimmed and 'recall(id="c1")' in trimmed
    assert total_size(out) <= report.low_water_chars and pairing_problems(out) == []


def test_trimming_keeps_tool_call_arguments_valid_json():
    body = filler(40_000)
    messages = [
        system(),
        user("write it"),
        assistant(None, [("c1", "write_file", {"path": "a.py", "content": body})]),
        tool("c1", "wrote a.py"),
    ]
    out, _ = engine(15_000).fit(messages, stub_summarizer())
    arguments = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py" and len(arguments["content"]) < 1_000
    assert total_size(out) <= 15_000 * LOW_WATER


def test_a_user_message_larger_than_the_window_is_cut_once_and_said_so_not_resent_whole():
    huge = user("please read this: " + "pasted text " * 13_000)
    e = engine()
    out, report = e.fit([system(), huge], stub_summarizer())
    assert report.layer == "trim" and "your message was too long" in report.one_line()
    assert total_size(out) <= report.low_water_chars and out[1]["content"].startswith("please read this:")
    for i in range(8):  # the conversation goes on without compacting again
        out = out + [assistant(None, [(f"e{i}", "grep", {"pattern": "x"})]), tool(f"e{i}", "no matches")]
        out, again = e.fit(out, stub_summarizer())
        assert again is None


def test_forced_compaction_runs_even_under_the_mark_and_keeps_only_the_latest_round():
    messages = tool_history(12, 200)
    summarize = stub_summarizer()
    out, report = ContextEngine().fit(messages, summarize, force=True)
    assert report.forced and report.layer == "summary" and len(summarize.calls) == 1
    assert out[-1] is messages[-1] and len(out) == 5  # system, summary, ack, the goal (latest user), the answer


def test_forced_compaction_with_nothing_new_to_summarise_makes_no_model_call():
    e = ContextEngine()
    messages, _ = e.fit(chat_history(6, 100), stub_summarizer("old summary"), force=True)
    summarize = stub_summarizer()
    out, report = e.fit(messages, summarize, force=True)
    assert summarize.calls == [] and out == messages and "nothing to summarise" in report.one_line()


def test_on_a_steady_trajectory_two_compactions_are_at_least_a_computable_number_of_steps_apart():
    high, round_chars = 60_000, 3_200
    e = engine(high)
    working, compactions = [system(), user("Goal: read every module.")], []
    for i in range(120):
        working, report = e.fit(working + read_round(i, 3_000), stub_summarizer())
        if report:
            compactions.append(i)
    gap = int(high * (1 - LOW_WATER)) // round_chars - 1  # between the marks only appends
    assert len(compactions) >= 3
    assert all(b - a >= gap for a, b in itertools.pairwise(compactions)), (compactions, gap)


def test_settings_are_one_value_for_a_window():
    settings = settings_for_window(8_192, 4_096)
    assert settings == ContextSettings(
        high_water_tokens=5_529, tool_result_bytes=3_686, max_tokens=2_048, window=8_192, lean_tools=True
    )
    assert settings.low_water_tokens == int(5_529 * LOW_WATER)
