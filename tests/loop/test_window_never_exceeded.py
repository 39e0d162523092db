"""No request goes over the model's window: our own count of everything a request sends (the system
message, the tool schemas, every message) plus its max_tokens stays within the window from the first
request on, whatever the server says of usage (the real count, more, less, zero or nothing), a
resumed session's first request included."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanohermes.context.budget import SUMMARY_REPLY_TOKENS
from nanohermes.context.tokens import count_tokens, message_tokens
from nanohermes.loop.keeper import ContextKeeper
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.recall import recall
from tests.support.agents import make_agent
from tests.support.histories import assistant, system, tool, user
from tests.support.scripted_server import Reply, ScriptedServer, is_summary_request, prompt_tokens

# Text whose tokens per char differ by 8x: ASCII runs, code, CJK, emoji, combining marks.
PIECES = ["a", "ab ", "def f(x):\n", "中文", "😀", "é", "\u0301", '"\\', "0123 "]
READS = 12
USAGE = ["reported", "more", "less", "zero", "missing"]


def schemas(lean: bool) -> list[dict]:
    return [t.schema(lean) for t in [*BUILTIN_TOOLS, recall]]


@functools.cache
def _schema_tokens(text: str) -> int:
    return count_tokens(text)


def schema_tokens(tools: list[dict]) -> int:
    return _schema_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0


COUNTED: dict[str, int] = {}  # a message's tokens by its JSON: the same message is counted once


def sent_tokens(messages: list[dict], tools: list[dict]) -> int:
    """Our own count of a request, counted apart from the code under test."""
    total = schema_tokens(tools)
    for message in messages:
        key = json.dumps(message, sort_keys=True)
        if key not in COUNTED:
            COUNTED[key] = message_tokens(message)
        total += COUNTED[key]
    return total


@st.composite
def texts(draw, max_chars: int) -> str:
    unit = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=4)))
    n = draw(st.integers(1, max_chars))
    return (unit * (n // len(unit) + 1))[:n]


@st.composite
def results(draw, max_bytes: int) -> str:
    """A tool result as the loop's clamp leaves it: at most `max_bytes` of UTF-8."""
    return draw(texts(max_bytes)).encode()[:max_bytes].decode(errors="ignore") or "ok"


@st.composite
def rounds(draw, first_id: int, max_bytes: int) -> list[dict]:
    ids = [f"call_{first_id + i}" for i in range(draw(st.integers(1, 3)))]
    calls = [(cid, "read_file", {"path": draw(texts(40))}) for cid in ids]
    return [assistant(None, calls), *(tool(cid, draw(results(max_bytes))) for cid in ids)]


def check(keeper: ContextKeeper, messages: list[dict], tools: list[dict], window: int) -> None:
    mine = sent_tokens(messages, tools)
    estimated = keeper.tokens.estimate(messages, schema_tokens(tools))
    assert mine <= estimated, (mine, estimated)
    assert estimated + keeper.settings.max_tokens <= window, (estimated, keeper.settings.max_tokens, window)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    window=st.sampled_from([8_192, 12_000, 16_384, 32_768]),
    max_tokens=st.sampled_from([1_024, 2_048, 4_096, 8_192]),
    usages=st.lists(st.sampled_from(USAGE), min_size=1, max_size=4),
    data=st.data(),
)
def test_no_request_plus_its_max_tokens_exceeds_the_window(window, max_tokens, usages, data):
    keeper = ContextKeeper(max_tokens, True, window, record=lambda *a: None, emit=lambda e: None)
    tools = schemas(keeper.settings.lean_tools)
    cap = keeper.settings.tool_result_bytes
    summary = data.draw(texts(2_000), label="summary")

    def summarize(request) -> str:  # a summary request that reuses the prefix fits with its reply too
        if request.reuses_prefix:
            assert sent_tokens(request.messages, tools) + SUMMARY_REPLY_TOKENS <= window
        return summary

    messages = [system(data.draw(texts(3_000), label="system")), user(data.draw(texts(2_000)))]
    for _ in range(data.draw(st.integers(0, 8), label="resumed rounds")):  # a resumed session: never fitted
        messages += data.draw(rounds(len(messages), cap))
    for step in range(data.draw(st.integers(1, 8), label="steps")):
        messages, _ = keeper.fit(messages, summarize, {}, tools=tools)
        check(keeper, messages, tools, window)
        mine = sent_tokens(messages, tools)
        kind = usages[step % len(usages)]
        reported = {"reported": mine + 12, "more": mine * 6 // 5, "less": mine // 2, "zero": 0, "missing": None}[kind]
        keeper.observe(None if reported is None else {"prompt_tokens": reported}, messages, tools)
        next_user = data.draw(st.booleans())
        messages = messages + ([user(data.draw(texts(2_000)))] if next_user else data.draw(rounds(len(messages), cap)))


def test_a_summary_denser_than_what_it_replaced_is_followed_by_a_trim_not_sent_over_the_window():
    """Found by the property above: an 8K window, a 2,477-emoji system message and a 1,233-emoji
    latest user message. Clearing outputs was not enough, so the one extra pass summarised, and the
    678-emoji summary (736 tokens) was denser than the 404 tokens of ASCII it replaced: 6,145 tokens
    plus a 2,048-token reply was one over the window. Another pass trims the user's message."""
    keeper = ContextKeeper(2_048, True, 8_192, record=lambda *a: None, emit=lambda e: None)
    tools = schemas(keeper.settings.lean_tools)
    first = [("call_2", "read_file", {"path": "a"}), ("call_3", "read_file", {"path": "aa"})]
    messages = [system("😀" * 2_477), user("a" * 1_523), assistant(None, first), tool("call_2", "a")]
    messages += [tool("call_3", "a" * 1_237), user("😀" * 1_233)]
    messages += [assistant(None, [("call_7", "read_file", {"path": "a"})]), tool("call_7", "ab ab ")]
    keeper.observe({"prompt_tokens": sent_tokens(messages[:-2], tools) * 6 // 5}, messages[:-2], tools)  # "more"
    fitted, report = keeper.fit(messages, lambda request: "😀" * 678, {}, tools=tools)
    assert {"summary", "trim"} <= set(report.layers), report.layers
    check(keeper, fitted, tools, 8_192)
    assert fitted[0] == messages[0] and fitted[-2:] == messages[-2:]


def test_dense_text_the_usual_trim_floor_keeps_is_cut_further_rather_than_sent_over_the_window():
    """Found by the property above: an 8K window, a system message of 2,968 combining marks (a token
    each), a request of 1,300 "é", and four rounds of reads, the last with two emoji results (469 and
    921 chars). After the summary every message left to cut was at the middle trim's floor of 800
    chars, which at about a token a char was 6,145 tokens with a 2,048-token reply: one over the
    window. The last resort cuts below that floor."""
    keeper = ContextKeeper(2_048, True, 8_192, record=lambda *a: None, emit=lambda e: None)
    tools = schemas(keeper.settings.lean_tools)
    messages = [system("\u0301" * 2_968), user("é" * 1_300)]
    for paths in (["a"], ["a"], ["a", "a" * 10, "0"]):
        ids = [f"call_{len(messages) + i}" for i in range(len(paths))]
        messages += [assistant(None, [(i, "read_file", {"path": p}) for i, p in zip(ids, paths)])]
        messages += [tool(i, "a") for i in ids]
    last = [("call_10", "read_file", {"path": "a"}), ("call_11", "read_file", {"path": "a"})]
    messages += [assistant(None, [*last, ("call_12", "read_file", {"path": "😀" * 21})]), tool("call_10", "a")]
    messages += [tool("call_11", "😀" * 469), tool("call_12", "😀" * 921)]
    fitted, report = keeper.fit(messages, lambda request: "aaaa", {}, tools=tools)
    assert "trim" in report.layers, report.layers
    check(keeper, fitted, tools, 8_192)
    assert fitted[0] == messages[0] and fitted[-4]["tool_calls"] == messages[-4]["tool_calls"]


def saved_session(home, workspace, reads: int) -> None:
    """A session saved at a large window: `reads` read_file rounds of about 1,700 chars, never compacted."""
    from nanohermes.storage.session import Session

    with Session(home, "resumed", workspace) as session:
        session.record_message(user("read each of the part files in turn"))
        for i in range(reads):
            page = "".join(f"{n + 1}\trecord {i}-{n}: value {n * 7}\n" for n in range(55))
            session.record_message(assistant(None, [(f"old_{i}", "read_file", {"path": f"part{i}.txt"})]))
            session.record_message(tool(f"old_{i}", f"read_file part{i}.txt lines 1–55 of 55\n{page}"))
        session.record_message(assistant("They are read."))


@pytest.mark.parametrize("usage", ["none", "a proxy's constant", "real"])
def test_a_resumed_session_over_the_trigger_is_compacted_before_its_first_request(workspace, isolated_home, usage):
    """The resume case of issue 27: a session saved at a large window, resumed at 8,192 tokens with a
    2,048-token reply. Its first request, uncompacted, would be about 6,400 o200k tokens (system,
    schemas and messages) against a trigger of 5,529 (6,283 in the issue): it is compacted first, and every request that
    reaches the server (the reads that follow too), plus its max_tokens, fits the window."""
    saved_session(isolated_home, workspace, reads=9)
    for i in range(READS):
        (workspace / f"more{i}.txt").write_text("".join(f"entry {i}-{n}: {n * 3}\n" for n in range(120)))

    def answer(body: dict) -> Reply:
        counted = {
            "none": None,
            "a proxy's constant": {"prompt_tokens": 100},
            "real": {"prompt_tokens": prompt_tokens(body)},
        }
        if is_summary_request(body):
            return Reply("Goal: find record 3-42 in the part files.", usage=counted[usage])
        done = sum(m["role"] == "tool" and m["tool_call_id"].startswith("call") for m in body["messages"])
        if done < READS:
            return Reply(tool_calls=[("read_file", json.dumps({"path": f"more{done}.txt"}))], usage=counted[usage])
        return Reply("part3.txt", usage=counted[usage])

    server = ScriptedServer(n_ctx=8_192)
    server.handler = answer
    try:
        agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, session_name="resumed")
        uncompacted = [*agent.messages, user("which part holds record 3-42?")]
        would_have_been = prompt_tokens({"messages": uncompacted, "tools": agent.tool_schemas()})
        agent.run_turn("which part holds record 3-42?")
        requests = server.chat_requests()
    finally:
        server.close()
    trigger = agent.settings.high_water_tokens
    assert (trigger, agent.settings.max_tokens) == (5_529, 2_048) and 6_000 < would_have_been < 6_600
    main = [r for r in requests if not is_summary_request(r)]
    assert main[0]["messages"][-1]["content"] == "which part holds record 3-42?" and len(main) == READS + 1
    sizes = [prompt_tokens(r) for r in requests]
    assert all(size + r["max_tokens"] <= 8_192 for size, r in zip(sizes, requests)), sizes
    assert max(sizes) <= trigger, sizes  # a server that reports a constant 100 had one at 6,050
    assert prompt_tokens(main[0]) < trigger * 0.8, sizes  # headroom: the compaction cut deep, not to the trigger
