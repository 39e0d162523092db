"""Seven ways a context quietly breaks, the checks that show a compaction did not break it,
and the complaints peers' users file (compactions that free nothing, summaries that see the
model's reasoning, summaries cut inside it)."""

import json

from nanohermes.context import ContextEngine, is_summary_message, pairing_problems
from nanohermes.context.budget import LOW_WATER, SUMMARY_MAX_CHARS, total_size
from nanohermes.context.excerpt import render_excerpt
from nanohermes.context.summary import SUMMARY_HEADER
from tests.support.histories import (
    all_text,
    assistant,
    chat_history,
    filler,
    read_round,
    stub_summarizer,
    system,
    tool,
    tool_history,
    user,
)


def engine(high: int = 120_000) -> ContextEngine:
    return ContextEngine(high_water_chars=high)


def excerpt(messages: list[dict]) -> str:
    return render_excerpt(messages, None, None, False, 60_000)


# Trap 1: 只截断，不留痕 — every cut leaves a note the model can see.
def test_every_cut_leaves_a_visible_note():
    placeholders, _ = engine(35_000).fit(tool_history(12, 3_000), stub_summarizer())
    assert 'recall(id="call_0") returns it' in all_text(placeholders)
    huge = [
        system(),
        user("build"),
        assistant(None, [("big", "run_command", {"command": "make"})]),
        tool("big", filler(50_000)),
    ]
    trimmed, _ = engine(20_000).fit(huge, stub_summarizer())
    assert "chars trimmed from the middle" in trimmed[3]["content"]
    summarised, _ = engine().fit(chat_history(12, 10), stub_summarizer(), force=True)
    assert summarised[1]["content"].startswith(SUMMARY_HEADER)


# Trap 2: 在 UTF-8 中间截断 — trimming CJK and emoji never yields a broken character.
def test_trimming_never_splits_a_character():
    messages = [system(), user("总结日志"), assistant(None, [("c1", "run_command", {"command": "cat 日志.txt"})])]
    messages.append(tool("c1", "开始" + "错误信息😀🇨🇳é\u0301" * 6_000 + "结束"))
    out, _ = engine(6_000).fit(messages, stub_summarizer())
    content = out[3]["content"]
    content.encode("utf-8")  # strict: no lone surrogates
    assert content.startswith("开始") and content.endswith("结束")
    assert json.loads(json.dumps(out, ensure_ascii=False)) == out


# Trap 3: keeping "the last N turns" — a turn with a fan-out of calls can be most of the
# context. The kept tail is measured in chars: whole rounds while they fit the low-water mark.
def test_the_kept_tail_is_measured_in_chars_not_turns():
    messages = [system(), user("go")]
    for turn in range(10):
        ids = [f"t{turn}c{i}" for i in range(5)]
        messages.append(assistant("next batch " + filler(2_000), [(cid, "grep", {"pattern": cid}) for cid in ids]))
        messages += [tool(cid, filler(500)) for cid in ids]
    out, report = engine(30_000).fit(messages, stub_summarizer())
    assert report.layer == "summary" and total_size(out) <= 30_000 * LOW_WATER
    assert out[-6:] == messages[-6:] and len(out) < 6 * 3  # the latest round whole, few before it


# Trap 4: a cut that lands on a tool result orphans it — the kept history never starts with one.
def test_the_cut_never_separates_results_from_their_call():
    messages = [system(), user("go"), assistant(None, [(f"c{i}", "read_file", {"path": f"f{i}"}) for i in range(4)])]
    messages += [tool(f"c{i}", filler(2_000)) for i in range(4)] + [assistant("done")]
    messages = messages + [user("next"), assistant(None, [(f"d{i}", "read_file", {"path": f"g{i}"}) for i in range(5)])]
    messages += [tool(f"d{i}", filler(2_000)) for i in range(5)]
    out, _ = engine(15_000).fit(messages, stub_summarizer(), force=True)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"] + ["tool"] * 5
    assert pairing_problems(out) == []
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == [f"d{i}" for i in range(5)]


# Trap 5: a summary fed whole tool arguments and outputs — the excerpt carries neither.
def test_the_excerpt_does_not_carry_full_tool_arguments_or_outputs():
    body = filler(30_000, "x = 1\n")
    messages = [
        user("write it"),
        assistant(None, [("w", "write_file", {"path": "src/big.py", "content": body})]),
        tool("w", "wrote src/big.py (30,000 chars)"),
    ]
    messages += read_round(1, 15_000)
    text = excerpt(messages)
    assert "src/big.py" in text and "src/module_1.py" in text
    assert len(text) < 2_000


def test_long_user_and_assistant_texts_keep_head_and_tail_in_the_excerpt():
    text = excerpt([user("HEAD " + filler(20_000) + " TAIL")])
    assert "HEAD" in text and "TAIL" in text and len(text) < 7_000


def test_the_models_reasoning_never_reaches_the_excerpt():
    text = excerpt([user("why?"), assistant("<think>secret musing</think>Because the reader opens text mode.")])
    assert "secret musing" not in text and "Because the reader opens text mode." in text


# Trap 6: appending instead of replacing — a summary replaces the previous one.
def test_repeated_compaction_replaces_the_summary_instead_of_accumulating():
    e = engine(25_000)
    messages = chat_history(5, 10)
    for round_ in range(6):
        messages = messages + chat_history(15, 1_500)[1:]
        messages, report = e.fit(messages, stub_summarizer(f"summary {round_}"))
        assert report.layer == "summary"
        assert sum(is_summary_message(m) for m in messages) == 1
        assert len(messages[1]["content"]) < SUMMARY_MAX_CHARS + 500


# Trap 7: a chat without tool calls is never compacted — it is checked before every request.
def test_a_growing_chat_without_tool_calls_stays_under_the_mark_at_every_request():
    e, messages = engine(20_000), [system()]
    for i in range(60):
        messages, _ = e.fit(messages + [user(f"q{i} " + filler(900, "chat "))], stub_summarizer())
        assert total_size(messages) <= 20_000
        messages = messages + [assistant(f"a{i} " + filler(900, "reply "))]


def test_a_summary_longer_than_its_cap_is_cut():
    out, report = engine().fit(chat_history(12, 100), stub_summarizer("word " * 5_000), force=True)
    assert len(report.summary) <= SUMMARY_MAX_CHARS + 40
    assert total_size(out) < total_size(chat_history(12, 100)) + SUMMARY_MAX_CHARS


def test_reasoning_blocks_are_not_kept_in_the_summary():
    _, report = engine().fit(
        chat_history(12, 100), stub_summarizer("<think>hmm, long musing</think>\nGoal: gzip."), force=True
    )
    assert report.summary == "Goal: gzip."


def test_a_summary_cut_inside_unclosed_reasoning_is_a_failure_not_a_summary():
    summarize = stub_summarizer("<think>the user wants gzip, so first I should")
    out, report = engine().fit(chat_history(12, 100), summarize, force=True)
    assert report.layer == "digest" and len(summarize.calls) == 2
    assert "first I should" not in all_text(out)


# Peers' complaint: compactions that free nothing, every turn. Here the part that cannot be
# cut is the system message (a huge persona); each summary frees only the little around it.
def _huge_system_history(turns: int = 3):
    return [system("persona " + filler(40_000))] + [
        m for i in range(turns) for m in (user(f"q{i} " + filler(1_200)), assistant(f"a{i}"))
    ]


def _grow(messages):
    return messages + [user("more " + filler(1_200)), assistant("ok")]


def test_anti_thrash_skips_after_two_small_savings():
    e, summarize = engine(30_000), stub_summarizer()
    messages = _huge_system_history()
    for _ in range(2):
        messages, report = e.fit(messages, summarize)
        assert "summary" in report.layers and report.saved_fraction < 0.10
        messages = _grow(messages)
    messages, report = e.fit(messages, summarize)
    assert report.thrash_skipped and len(summarize.calls) == 2
    assert "skipped" in report.one_line() and "/compact" in report.one_line()


def _after_two_small_compactions():
    e, summarize = engine(30_000), stub_summarizer()
    messages = _huge_system_history()
    for _ in range(2):
        messages, _ = e.fit(messages, summarize)
        messages = _grow(messages)
    return e, summarize, messages


def test_forced_compaction_runs_despite_anti_thrash():
    e, summarize, messages = _after_two_small_compactions()
    _, report = e.fit(messages, summarize, force=True)
    assert not report.thrash_skipped and "summary" in report.layers


def test_anti_thrash_lifts_once_the_conversation_has_moved_on():
    e, summarize, messages = _after_two_small_compactions()
    for _ in range(5):
        messages = _grow(messages)
    _, report = e.fit(messages, summarize)
    assert not report.thrash_skipped and "summary" in report.layers


# How to check a compaction did not break anything: 20 messages, forced, every check.
def test_compaction_passes_the_verification_table():
    messages = tool_history(9, 1_000)[:-1]
    assert len(messages) == 20
    out, _ = engine().fit(messages, stub_summarizer("Goal: gzip support. Files: src/module_0.py."), force=True)
    assert pairing_problems(out) == []  # history valid
    assert out[2]["role"] != "tool"  # cut point valid
    assert out[1]["content"].startswith(SUMMARY_HEADER)  # summary present
    assert total_size(out) < 120_000  # budget effective
    assert out[-2:] == messages[-2:] and out[-2] is messages[-2]  # the latest round unchanged
    assert out[0] is messages[0]
    assert "Goal: gzip support" in all_text(out) and "src/module_0.py" in all_text(out)  # goal and paths known
