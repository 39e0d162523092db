"""Images as the context engine sees them: counted by OpenAI's formula (never their base64), put on
the wire as content parts in user messages, cleared like old outputs, capped in number."""

from nanohermes.context import ContextEngine, message_size
from nanohermes.context.budget import MAX_IMAGES_PER_REQUEST
from nanohermes.context.images import (
    ASCII_CHARS_PER_IMAGE_TOKEN,
    IMAGES,
    cap_images,
    count_images,
    image_tokens,
    on_the_wire,
    without_images,
)
from nanohermes.context.tokens import PromptTokenTracker, message_tokens
from nanohermes.memory.block import BLOCK_END, BLOCK_START, attach_block
from tests.support.histories import assistant, stub_summarizer, system, tool, user


def entry(name: str = "shot.png", width: int = 800, height: int = 600, ref: str = "a" * 64) -> dict:
    return {"ref": ref, "mime": "image/png", "width": width, "height": height, "name": name}


def with_images(message: dict, *entries: dict) -> dict:
    return {**message, IMAGES: list(entries)}


def data_url(ref: str, mime: str) -> str:
    return f"data:{mime};base64,{ref[:8]}"


def test_an_image_costs_what_openai_publishes():
    assert image_tokens(800, 600) == 85 + 170 * 4  # 765: two tiles by two
    assert image_tokens(1024, 1024) == 765  # scaled to 768 x 768 first
    assert image_tokens(2048, 4096) == 1_105  # to 1024 x 2048, then 768 x 1536: 2 x 3 tiles
    assert image_tokens(100, 100) == 255  # one tile: a small image is never scaled up
    assert image_tokens(4000, 3000) == image_tokens(2048, 1536)


def test_an_image_is_counted_by_its_tokens_not_its_base64():
    plain = user("look")
    shown = with_images(plain, entry())
    assert message_size(shown) == message_size(plain) + 765 * ASCII_CHARS_PER_IMAGE_TOKEN
    assert message_tokens(shown) == message_tokens(plain) + 765
    tracker = PromptTokenTracker()
    assert tracker.estimate([shown]) == tracker.estimate([plain]) + 765


def test_a_users_images_go_as_parts_after_their_words():
    [wire] = on_the_wire([with_images(user("what is wrong here?"), entry())], data_url)
    assert wire == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is wrong here?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aaaaaaaa"}},
        ],
    }


def test_a_tool_results_image_goes_in_a_user_message_after_its_block():
    calls = assistant(None, [("c1", "read_file", {"path": "shot.png"}), ("c2", "read_file", {"path": "a.py"})])
    messages = [
        system(),
        user("look"),
        calls,
        with_images(tool("c1", "read_file shot.png: PNG"), entry()),
        tool("c2", "x"),
    ]
    wire = on_the_wire(messages, data_url)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "read_file shot.png: PNG"}
    parts = wire[5]["content"]
    assert parts[0]["text"] == "[The image of the tool result above (c1):]" and parts[1]["type"] == "image_url"


def test_the_image_joins_a_user_message_that_follows_the_block():
    calls = assistant(None, [("c1", "read_file", {"path": "shot.png"})])
    nudge = user("now answer")
    wire = on_the_wire([system(), calls, with_images(tool("c1", "shot"), entry()), nudge], data_url)
    assert [m["role"] for m in wire] == ["system", "assistant", "tool", "user"]  # never two user messages in a row
    assert [p["type"] for p in wire[3]["content"]] == ["text", "image_url", "text"]
    assert wire[3]["content"][-1]["text"] == "now answer"


def test_an_image_no_longer_stored_is_said_not_dropped():
    [wire] = on_the_wire([with_images(user("look"), entry())], lambda ref, mime: None)
    assert "shot.png is no longer stored" in wire["content"][1]["text"]


def test_messages_without_images_are_sent_as_they_are():
    messages = [system(), user("hi")]
    assert on_the_wire(messages, data_url) is messages


def test_a_cleared_image_leaves_a_line_before_the_memory_block():
    block = f"{BLOCK_START}\n[remembered] x\n{BLOCK_END}"
    message = with_images({"role": "user", "content": attach_block("look at @shot.png", block)}, entry())
    cleared = without_images(message)
    assert IMAGES not in cleared
    assert "[image shot.png (800×600) cleared to save context; read_file reads it again]" in cleared["content"]
    assert cleared["content"].index("cleared to save context") < cleared["content"].index("[remembered]")


def test_the_oldest_images_beyond_the_cap_are_cleared():
    messages = [system(), *(with_images(user(f"u{i}"), entry(f"{i}.png")) for i in range(MAX_IMAGES_PER_REQUEST + 2))]
    capped, cleared = cap_images(messages, MAX_IMAGES_PER_REQUEST)
    assert cleared == 2 and count_images(capped) == MAX_IMAGES_PER_REQUEST
    assert "0.png" in capped[1]["content"] and "1.png" in capped[2]["content"] and capped[3] is messages[3]


def test_the_engine_clears_images_over_the_cap_even_under_the_marks():
    messages = [system(), *(with_images(user(f"u{i}"), entry(f"{i}.png")) for i in range(MAX_IMAGES_PER_REQUEST + 1))]
    after, report = ContextEngine().fit(messages, stub_summarizer())
    assert report.layers == ["images"] and report.images_cleared == 1 and "1 old image cleared" in report.one_line()
    assert count_images(after) == MAX_IMAGES_PER_REQUEST and after[2:] == messages[2:]


def test_old_images_are_cleared_with_old_outputs():
    read = lambda i: [  # noqa: E731
        assistant(None, [(f"c{i}", "read_file", {"path": f"{i}.png"})]),
        with_images(tool(f"c{i}", f"read_file {i}.png: PNG image"), entry(f"{i}.png", 2048, 1536)),
    ]
    messages = [system(), user("compare the screenshots"), *read(1), *read(2), *read(3)]
    after, report = ContextEngine(high_water_chars=8_000).fit(messages, stub_summarizer())
    assert report is not None and report.images_cleared >= 1
    assert count_images(after) < count_images(messages)
    assert IMAGES in after[-1], "the latest round keeps its image"
    assert any("1.png (2048×1536) cleared to save context" in str(m["content"]) for m in after)
