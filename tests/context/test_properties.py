"""Property tests over random valid histories: roles, tool fan-outs 0-5, sizes up to 30k,
Unicode (CJK, emoji, combining marks, quotes and backslashes), pre-existing summaries.

1,400 examples in all: fit() once on a whole history, fit() as the loop calls it while a
history grows, and sanitize_tool_pairs() on broken histories."""

import copy

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nanohermes.context import ContextEngine, is_summary_message, pairing_problems, sanitize_tool_pairs
from nanohermes.context.budget import SUMMARY_RESERVE_CHARS, SUMMARY_TYPICAL_CHARS, TRIM_MIN_KEEP_CHARS, total_size
from nanohermes.context.cut import _round_start, latest_user_index, plan_cut
from nanohermes.context.placeholders import shrink_arguments
from nanohermes.context.summary import ack_message, summary_message
from tests.support.histories import TRIM_MARK, all_text, assistant, system, tool, user

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PIECES = list('ab z\n"\\{}:') + ["中", "文", "😀", "é", "\u0301", "\t", "🇨🇳", "\u200d"]
UNITS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)
SIZES = st.one_of(st.integers(0, 300), st.integers(300, 5_000), st.integers(5_000, 30_000))
TOOLS = {"read_file": "path", "grep": "pattern", "run_command": "command", "web_fetch": "url", "edit_file": "path"}


@st.composite
def texts(draw, sizes=SIZES):
    unit, n = draw(UNITS), draw(sizes)
    return (unit * (n // len(unit) + 1))[:n]


@st.composite
def tool_step(draw, first_id: int) -> list[dict]:
    fanout = draw(st.integers(0, 5))
    if fanout == 0:
        return [assistant(draw(texts()))]
    calls = []
    for i in range(fanout):
        name = draw(st.sampled_from(sorted(TOOLS) + ["write_file"]))
        args = (
            {"path": draw(texts(st.integers(1, 40))), "content": draw(texts())}
            if name == "write_file"
            else {TOOLS[name]: draw(texts(st.integers(1, 60)))}
        )
        calls.append((f"call_{first_id + i}", name, args))
    text = draw(st.one_of(st.none(), texts(st.integers(0, 200))))
    return [assistant(text, calls)] + [tool(cid, draw(texts())) for cid, _, _ in calls]


@st.composite
def histories(draw) -> list[dict]:
    messages = [system(draw(texts(st.integers(10, 3_000))))]
    if draw(st.booleans()):  # an earlier compaction's summary, as the engine leaves it
        messages += [summary_message(draw(texts(st.integers(1, 2_000)))), ack_message()]
    for _ in range(draw(st.integers(1, 5))):
        messages.append(user(draw(texts())))
        for _ in range(draw(st.integers(0, 4))):
            messages += draw(tool_step(len(messages)))
    return messages


def summarizer(kind: str):
    def summarize(request) -> str:
        if kind == "fail":
            raise ConnectionError("summariser down")
        return {
            "ok": "Goal: keep going. Edited a.py.",
            "empty": "",
            "long": "word " * 3_000,
            "cjk": "目标：继续。" * 200,
        }[kind]

    return summarize


def floor_size(message: dict) -> int:
    """The least the middle trim is sure to shrink a message to: content cut to its minimum (counted
    as all escapes, which double in JSON) plus the note, long argument values cut."""
    floor = dict(message)
    if isinstance(message.get("content"), str) and len(message["content"]) > TRIM_MIN_KEEP_CHARS + 200:
        floor["content"] = "\\" * TRIM_MIN_KEEP_CHARS + "n" * 200
    calls = []
    for call in message.get("tool_calls") or ():
        shrunk = shrink_arguments(call["function"]["arguments"], TRIM_MIN_KEEP_CHARS)
        calls.append({**call, "function": {**call["function"], "arguments": shrunk or call["function"]["arguments"]}})
    if calls:
        floor["tool_calls"] = calls
    return min(total_size([message]), total_size([floor]))


def check_fit(before: list[dict], after: list[dict], report, high: int) -> None:
    assert pairing_problems(after) == []
    assert after[0] is before[0]
    low = int(high * 0.3)
    latest = latest_user_index(before)
    user_cut = report is not None and "your message was too long" in report.one_line()
    if latest is not None and not user_cut:
        assert any(m is before[latest] for m in after), "the latest user message must reach the model verbatim"
    assert [i for i, m in enumerate(after) if is_summary_message(m)] in ([], [1])
    if report is not None and {"summary", "digest"} & set(report.layers) and len(after) > 2:
        assert after[1]["role"] == "user" and after[2]["role"] != "user", "roles alternate after the summary"
    start = _round_start(before, len(before))
    for b, a in zip(before[start:], after[len(after) - (len(before) - start) :]):
        trimmed = (
            a["role"] == b["role"]
            and a.get("tool_call_id") == b.get("tool_call_id")
            and TRIM_MARK.search(all_text([a]))
        )
        assert a is b or trimmed, "the latest round is verbatim unless the middle trim cut it"
    event(f"layers: {report.layers if report else 'none'}")
    if report is None:
        assert after is before and total_size(after) <= high
        return
    layers = set(report.layers)
    minimal = total_size(before[start:]) + (
        total_size([before[latest]]) if latest is not None and latest < start else 0
    )
    plan = plan_cut(before, max(0, low - SUMMARY_RESERVE_CHARS - total_size(before[:1])))
    kept = (
        total_size(before[plan.start :]) + (total_size([before[plan.kept_user]]) if plan and plan.kept_user else 0)
        if plan
        else 0
    )
    summary_reaches_low = plan is not None and total_size(before[:1]) + kept + SUMMARY_TYPICAL_CHARS <= low
    if layers == {"placeholders"} and summary_reaches_low:
        assert total_size(after) <= low, "clearing outputs is used only when it reaches the low-water mark"
    elif (
        layers & {"summary", "digest"}
        and "trim" not in layers
        and total_size(before[:1]) + minimal + SUMMARY_RESERVE_CHARS <= low
    ):
        event("low-water bound checked")
        assert total_size(after) <= low, "a compaction lands at the low-water mark whenever it can"
    if "trim" in layers:
        protected = {0, latest_user_index(after)} | ({1} if len(after) > 1 and is_summary_message(after[1]) else set())
        floor = sum(total_size([m]) if i in protected else floor_size(m) for i, m in enumerate(after))
        if floor <= low:
            assert total_size(after) <= low, report.one_line()


@settings(max_examples=350, **SETTINGS)
@given(
    histories(),
    st.sampled_from([2_000, 8_000, 30_000, 120_000]),
    st.sampled_from(["ok", "fail", "empty", "long", "cjk"]),
    st.booleans(),
)
def test_fit_keeps_every_invariant_on_random_histories(messages, high, kind, force):
    snapshot = copy.deepcopy(messages)
    after, report = ContextEngine(high_water_chars=high).fit(messages, summarizer(kind), force=force)
    assert messages == snapshot, "fit must not mutate its input"
    check_fit(messages, after, report, high)


@settings(max_examples=200, **SETTINGS)
@given(
    histories(),
    st.sampled_from([2_000, 8_000, 30_000]),
    st.lists(st.sampled_from(["ok", "fail", "empty", "cjk"]), min_size=1, max_size=8),
)
def test_fit_as_the_loop_calls_it_keeps_every_invariant(messages, high, kinds):
    engine, working, calls = ContextEngine(high_water_chars=high), [messages[0]], 0
    for message in messages[1:]:
        if (message["role"] != "tool" and working[-1]["role"] != "assistant") or message["role"] == "user":
            before = list(working)
            working, report = engine.fit(before, summarizer(kinds[calls % len(kinds)]))
            check_fit(before, working, report, high)
            calls += 1
        working = working + [message]


@st.composite
def broken_histories(draw) -> list[dict]:
    messages = [system()]
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "tool"]))
        ids = [f"c{draw(st.integers(0, 8))}" for _ in range(draw(st.integers(1, 3)))]
        if kind == "calls":
            messages.append(assistant(None, [(i, "grep", {"pattern": "x"}) for i in ids]))
        elif kind == "tool":
            messages.append(tool(ids[0], "result"))
        else:
            messages.append(user("u") if kind == "user" else assistant("a"))
    return messages


@settings(max_examples=300, **SETTINGS)
@given(broken_histories())
def test_sanitize_makes_any_history_valid_and_keeps_what_was_valid(messages):
    out = sanitize_tool_pairs(messages)
    assert pairing_problems(out) == []
    assert [m for m in out if m["role"] != "tool"] == [m for m in messages if m["role"] != "tool"]
    assert sanitize_tool_pairs(out) == out
