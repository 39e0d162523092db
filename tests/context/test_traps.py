"""The traps table and the verification table of seed 000 ("七个常见上下文陷阱",
"如何验证压缩没有坏"), plus the peers' complaints the issue lists (anti-thrash)."""

import json

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

from nanohermes.context import (
    KEEP_RECENT,
    SUMMARY_HEADER,
    ContextEngine,
    cut_point,
    is_summary_message,
    pairing_problems,
    render_summary_input,
    total_size,
)
from nanohermes.context.budget import SUMMARY_MAX_CHARS


# Trap 1: 只截断，不留痕 — every cut leaves a note the model can see.
def test_every_cut_leaves_a_visible_note():
    placeholders, _ = ContextEngine(budget_chars=35_000).fit(tool_history(12, 3_000), stub_summarizer())
    assert 'recall(id="call_0") returns it' in all_text(placeholders)
    huge = [system(), user("build"), assistant(None, [("big", "run_command", {"command": "make"})]), tool("big", filler(50_000))]
    trimmed, _ = ContextEngine(budget_chars=20_000).fit(huge, stub_summarizer())
    assert "chars trimmed from the middle" in trimmed[3]["content"]
    summarised, _ = ContextEngine().fit(chat_history(12, 10), stub_summarizer(), force=True)
    assert summarised[1]["content"].startswith(SUMMARY_HEADER)


# Trap 2: 在 UTF-8 中间截断 — trimming CJK and emoji never yields a broken character.
def test_trimming_never_splits_a_character():
    messages = [system(), user("总结日志"), assistant(None, [("c1", "run_command", {"command": "cat 日志.txt"})])]
    messages.append(tool("c1", "开始" + "错误信息😀🇨🇳é\u0301" * 6_000 + "结束"))
    out, _ = ContextEngine(budget_chars=6_000).fit(messages, stub_summarizer())
    content = out[3]["content"]
    content.encode("utf-8")  # strict: no lone surrogates
    assert content.startswith("开始") and content.endswith("结束")
    assert json.loads(json.dumps(out, ensure_ascii=False)) == out


# Trap 3: 按「最近 N 轮」保留 — KEEP_RECENT counts messages, so a fan-out turn cannot keep 70.
def test_keep_recent_counts_messages_not_turns():
    messages = [system(), user("go")]
    for turn in range(10):
        ids = [f"t{turn}c{i}" for i in range(5)]
        messages.append(assistant(None, [(cid, "grep", {"pattern": cid}) for cid in ids]))
        messages += [tool(cid, filler(500)) for cid in ids]
    messages.append(assistant("done"))
    out, _ = ContextEngine().fit(messages, stub_summarizer(), force=True)
    assert len(out) <= 2 + 1 + KEEP_RECENT  # system, summary, kept user request, tail


# Trap 4: 切点落在 tool 上 — the kept history never starts with an orphaned tool result.
def test_cut_point_moves_past_tool_messages_so_no_result_is_orphaned():
    messages = [system(), user("go"), assistant(None, [(f"c{i}", "read_file", {"path": f"f{i}"}) for i in range(4)])]
    messages += [tool(f"c{i}", filler(2_000)) for i in range(4)] + [assistant("done")]
    messages = messages + [user("next"), assistant(None, [(f"d{i}", "read_file", {"path": f"g{i}"}) for i in range(5)])]
    messages += [tool(f"d{i}", filler(2_000)) for i in range(5)] + [assistant("done again")]
    assert messages[len(messages) - KEEP_RECENT]["role"] == "tool"
    out, _ = ContextEngine().fit(messages, stub_summarizer(), force=True)
    first_live = next(m for m in out[1:] if not is_summary_message(m))
    assert first_live["role"] != "tool" and pairing_problems(out) == []
    assert messages[cut_point(messages, KEEP_RECENT)]["role"] != "tool"


# Trap 5: 摘要包含完整工具参数 — the summary input does not carry whole arguments or outputs.
def test_summary_input_does_not_carry_full_tool_arguments_or_outputs():
    body = filler(30_000, "x = 1\n")
    messages = [user("write it"), assistant(None, [("w", "write_file", {"path": "src/big.py", "content": body})]), tool("w", "wrote src/big.py (30,000 chars)")]
    messages += read_round(1, 15_000)
    text = render_summary_input(messages)
    assert "src/big.py" in text and "src/module_1.py" in text
    assert len(text) < 2_000


def test_long_user_and_assistant_texts_keep_head_and_tail_in_the_summary_input():
    text = render_summary_input([user("HEAD " + filler(20_000) + " TAIL")])
    assert "HEAD" in text and "TAIL" in text and len(text) < 7_000


# Trap 6: 每轮追加 (the memory block's trap, as it applies to summaries) — replaced, not appended.
def test_repeated_compaction_replaces_the_summary_instead_of_accumulating():
    engine = ContextEngine(budget_chars=25_000)
    messages = chat_history(5, 10)
    for round_ in range(6):
        messages = messages + chat_history(15, 1_500)[1:]
        messages, report = engine.fit(messages, stub_summarizer(f"summary {round_}"))
        assert report.layer == "summary"
        assert sum(is_summary_message(m) for m in messages) == 1
        assert len(messages[1]["content"]) < SUMMARY_MAX_CHARS + 500


# Trap 7: 纯聊天不触发压缩 — see test_context_rules.test_chat_without_tools_is_compacted;
# here the loop's pattern: a chat grows one message pair at a time and stays under budget.
def test_a_growing_chat_without_tool_calls_stays_under_budget_at_every_request():
    engine, messages = ContextEngine(budget_chars=20_000), [system()]
    for i in range(60):
        messages, _ = engine.fit(messages + [user(f"q{i} " + filler(900, "chat "))], stub_summarizer())
        assert total_size(messages) <= 20_000
        messages = messages + [assistant(f"a{i} " + filler(900, "reply "))]


def test_a_summary_longer_than_its_cap_is_cut():
    out, report = ContextEngine().fit(chat_history(12, 100), stub_summarizer("word " * 5_000), force=True)
    assert len(report.summary) <= SUMMARY_MAX_CHARS + 40
    assert total_size(out) < total_size(chat_history(12, 100)) + SUMMARY_MAX_CHARS


def test_reasoning_blocks_are_not_kept_in_the_summary():
    _, report = ContextEngine().fit(chat_history(12, 100), stub_summarizer("<think>hmm, long musing</think>\nGoal: gzip."), force=True)
    assert report.summary == "Goal: gzip."


# Peers' complaint: compactions that free nothing, every turn.
def _huge_request_history():
    messages = [system(), user("Goal: gzip.")] + [assistant(f"note {i} " + filler(200)) for i in range(12)]
    return messages + [user("Here is the whole log:\n" + filler(50_000))]


def test_anti_thrash_skips_after_two_small_savings():
    engine, summarize = ContextEngine(budget_chars=30_000), stub_summarizer()
    messages = _huge_request_history()
    for _ in range(2):
        messages, report = engine.fit(messages, summarize)
        assert report.layer == "summary" and report.saved_fraction < 0.10
        messages = messages + [assistant("thinking " + filler(300))]
    messages, report = engine.fit(messages, summarize)
    assert report.thrash_skipped and len(summarize.calls) == 2
    assert "skipped" in report.one_line() and "/compact" in report.one_line()


def test_forced_compaction_runs_despite_anti_thrash():
    engine, summarize = ContextEngine(budget_chars=30_000), stub_summarizer()
    messages = _huge_request_history()
    for _ in range(2):
        messages, _ = engine.fit(messages, summarize)
        messages = messages + [assistant("thinking " + filler(300))]
    _, report = engine.fit(messages, summarize, force=True)
    assert not report.thrash_skipped and report.layer == "summary"


def test_anti_thrash_lifts_once_the_tail_has_moved_on():
    engine, summarize = ContextEngine(budget_chars=30_000), stub_summarizer()
    messages = _huge_request_history()
    for _ in range(2):
        messages, _ = engine.fit(messages, summarize)
        messages = messages + [assistant("thinking " + filler(300))]
    messages = messages + [m for i in range(5) for m in (user(f"u{i}"), assistant(f"a{i}"))]
    _, report = engine.fit(messages, summarize)
    assert not report.thrash_skipped and "summary" in report.layers


# Seed 000, 如何验证压缩没有坏: 20 messages, forced compaction, every check of the table.
def test_compaction_passes_the_seed_verification_table():
    messages = tool_history(9, 1_000)[:-1]
    assert len(messages) == 20
    out, _ = ContextEngine().fit(messages, stub_summarizer("Goal: gzip support. Files: src/module_0.py."), force=True)
    assert pairing_problems(out) == []  # history valid
    assert out[2]["role"] != "tool"  # cut point valid
    assert out[1]["content"].startswith(SUMMARY_HEADER)  # summary present
    assert total_size(out) < 120_000  # budget effective
    assert out[-KEEP_RECENT:] == messages[-KEEP_RECENT:]  # recent 10 unchanged
    assert out[0] is messages[0]
    assert "Goal: gzip support" in all_text(out) and "src/module_0.py" in all_text(out)  # goal and paths known
