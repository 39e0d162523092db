"""Property tests over random valid histories whose user messages and tool results carry images:
fit() counts them, clears the old ones (a line each says what was there), never leaves more than
a request may carry, and never splits a call from its result; the wire puts every image in a user
message without breaking a block of results."""

import copy

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nanohermes.context import ContextEngine, message_size, pairing_problems
from nanohermes.context.budget import MAX_IMAGES_PER_REQUEST
from nanohermes.context.cut import _round_start
from nanohermes.context.images import IMAGES, chars_of, count_images, images_of, on_the_wire, tokens_of
from nanohermes.context.tokens import message_tokens
from tests.context.test_properties import texts
from tests.support.histories import assistant, stub_summarizer, system, tool, user

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SIDES = st.sampled_from([16, 300, 512, 800, 1_536, 2_048])
SIZES = st.one_of(st.integers(0, 300), st.integers(300, 6_000))


@st.composite
def entries(draw, label: str) -> list[dict]:
    n = draw(st.integers(0, 2))
    return [
        {
            "ref": f"{i:064x}",
            "mime": "image/png",
            "width": draw(SIDES),
            "height": draw(SIDES),
            "name": f"{label}-{i}.png",
        }
        for i in range(n)
    ]


def carrying(message: dict, images: list[dict]) -> dict:
    return {**message, IMAGES: images} if images else message


@st.composite
def histories(draw) -> list[dict]:
    messages = [system(draw(texts(st.integers(10, 2_000))))]
    for turn in range(draw(st.integers(1, 4))):
        messages.append(carrying(user(draw(texts(SIZES))), draw(entries(f"u{turn}"))))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"c{len(messages)}_{i}" for i in range(draw(st.integers(1, 3)))]
            messages.append(assistant(None, [(i, "read_file", {"path": f"{i}.png"}) for i in ids]))
            messages += [carrying(tool(i, draw(texts(SIZES))), draw(entries(i))[:1]) for i in ids]
    return messages


def cleared_lines(messages: list[dict]) -> int:
    return sum(str(m.get("content")).count("cleared to save context; read_file reads it again") for m in messages)


@settings(max_examples=150, **SETTINGS)
@given(histories(), st.sampled_from([4_000, 20_000, 120_000]), st.booleans())
def test_fit_counts_clears_and_caps_images_and_keeps_pairs(messages, high, force):
    snapshot = copy.deepcopy(messages)
    after, report = ContextEngine(high_water_chars=high).fit(messages, stub_summarizer(), force=force)
    assert messages == snapshot, "fit must not mutate its input"
    assert pairing_problems(after) == []
    assert count_images(after) <= MAX_IMAGES_PER_REQUEST
    for message in after:
        assert message_size(message) >= chars_of(message) and message_tokens(message) >= tokens_of(message)
    kept = {id(e) for m in after for e in images_of(m)}
    gone = count_images(messages) - len(kept)
    event(f"images cleared or summarised: {min(gone, 3)}")
    if report is None:
        assert after is messages
        return
    summarised = {"summary", "digest"} & set(report.layers)
    if not summarised:  # nothing dropped: every image is still there, or a line says what it was
        assert cleared_lines(after) - cleared_lines(messages) == gone
    if force and summarised:  # a forced summary keeps the latest round only: no older image survives it
        start = _round_start(messages, len(messages))
        latest = {id(e) for m in messages[start:] for e in images_of(m)}
        assert kept <= latest


@settings(max_examples=150, **SETTINGS)
@given(histories(), st.sampled_from([4_000, 120_000]))
def test_the_wire_puts_images_in_user_messages_and_keeps_blocks_whole(messages, high):
    after, _ = ContextEngine(high_water_chars=high).fit(messages, stub_summarizer())
    wire = on_the_wire(after, lambda ref, mime: f"data:{mime};base64,AAAA")
    assert not any(IMAGES in m for m in wire)
    parts = [(m["role"], p) for m in wire if isinstance(m["content"], list) for p in m["content"]]
    assert all(role == "user" for role, p in parts if p["type"] == "image_url")
    assert sum(p["type"] == "image_url" for _, p in parts) == count_images(after)
    assert pairing_problems([m for m in wire if m["role"] != "user"]) == []
    added = 0  # a block of results with images and no user message after it gets one of its own
    for i, message in enumerate(after):
        ends_block = message["role"] == "tool" and (i + 1 == len(after) or after[i + 1]["role"] != "tool")
        if ends_block and (i + 1 == len(after) or after[i + 1]["role"] != "user"):
            j = i
            while after[j]["role"] == "tool":
                j -= 1
            added += any(images_of(m) for m in after[j + 1 : i + 1])
    assert len(wire) == len(after) + added
    roles, i = [], 0  # the wire's roles without the messages it added: the working set's
    for k, message in enumerate(wire):
        if (
            message["role"] == "user"
            and wire[k - 1]["role"] == "tool"
            and (i == len(after) or after[i]["role"] != "user")
        ):
            continue
        roles.append(message["role"])
        i += 1
    assert roles == [m["role"] for m in after]
