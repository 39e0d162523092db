"""Images through the whole loop, against the scripted server over real HTTP, which checks every
content part as a server taking images does: `@shot.png` and read_file on an image reach it as
`{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}`; a server that takes none
is never sent one (the request refused in a sentence first); old images are cleared; a resumed
session sends its image again."""

from __future__ import annotations

import json

import pytest

from nanohermes.context import size_by_kind
from nanohermes.context.budget import MAX_IMAGES_PER_REQUEST
from nanohermes.context.images import IMAGES
from nanohermes.errors import ImagesRefused, ProviderError
from nanohermes.provider import IMAGE_REFUSED
from nanohermes.tools.files import read_file
from tests.loop.test_recorded_once import REDACTED, SECRET, SECRETS
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.images import image_bytes, image_parts
from tests.support.scripted_server import ScriptedServer, call, calls, text

TOOLS = [read_file, *TEST_TOOLS]


@pytest.fixture
def vision_server():
    server = ScriptedServer(vision=True)  # llama.cpp with a projector: GET /props says modalities.vision
    yield server
    server.close()


@pytest.fixture
def shot(workspace):
    data = image_bytes(800, 600)
    (workspace / "shot.png").write_bytes(data)
    return data


def test_a_named_image_reaches_a_vision_server_as_an_image_part(vision_server, workspace, shot):
    vision_server.add(text("A red rectangle."))
    agent = make_agent(vision_server, workspace, tools=TOOLS)
    result = agent.run_turn("what is in @shot.png?")
    assert result.final_text == "A red rectangle." and not vision_server.refused
    [request] = vision_server.chat_requests()
    last = request["messages"][-1]
    assert last["role"] == "user" and [p["type"] for p in last["content"]] == ["text", "image_url"]
    assert last["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "what is in @shot.png?" in last["content"][0]["text"]
    assert "read_file shot.png: PNG image 800×600" in last["content"][0]["text"]
    assert image_parts(request) == [(len(request["messages"]) - 1, "user", "image/png", shot)]
    assert size_by_kind(agent.messages)["images"] == 765 * 4  # counted by its tokens: /context's row
    assert agent.keeper.tokens.estimate(agent.messages) >= 765


def test_a_text_only_server_is_never_sent_an_image(workspace, shot):
    llama = ScriptedServer(vision=False)  # llama.cpp without a projector
    try:
        agent = make_agent(llama, workspace, tools=TOOLS)
        with pytest.raises(ImagesRefused) as refused:
            agent.run_turn("what is in @shot.png?")
        assert str(refused.value) == (
            "Your request was not sent: shot.png is an image (PNG), which this model is not sent: the server says "
            "test-model takes no images (llama.cpp's GET /props: no projector); use a model that does (/model), "
            "or set vision = true in config.toml if the server is wrong."
        )
        assert not llama.chat_requests() and len(agent.messages) == 1  # nothing sent, nothing kept
    finally:
        llama.close()


def test_a_server_that_says_nothing_gets_an_image_only_once_the_setting_says_so(server, workspace, shot):
    agent = make_agent(server, workspace, tools=TOOLS)
    with pytest.raises(ImagesRefused, match=r"if it does, set vision = true in config\.toml"):
        agent.run_turn("look at @shot.png")
    assert not server.chat_requests()
    server.vision = True  # the server takes them (config.toml's `vision` says so: it is not asked)
    server.add(text("ok"))
    make_agent(server, workspace, tools=TOOLS, vision=True).run_turn("look at @shot.png")
    assert len(image_parts(server.chat_requests()[0])) == 1


def test_read_file_on_an_image_sends_it_after_the_result(vision_server, workspace, shot):
    vision_server.add(call("read_file", {"path": "shot.png"}), text("It is red."))
    agent = make_agent(vision_server, workspace, tools=TOOLS)
    assert agent.run_turn("describe the screenshot").final_text == "It is red."
    second = vision_server.chat_requests()[1]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-2]["content"].startswith("read_file shot.png: PNG image 800×600")
    caption, image = second[-1]["content"]
    assert caption["text"].startswith("[The image of the tool result above (") and image["type"] == "image_url"
    assert image_parts({"messages": second})[0][3] == shot and not vision_server.refused


def test_read_file_on_an_image_is_recorded_once_its_name_redacted_its_image_still_sent(vision_server, workspace):
    """The transcript records the result (loop/transcript.py: add_result) with its image beside it:
    the one record the request, the session and the placeholders read, a secret in the file's name
    redacted in its text, facts and image entry alike."""
    data = image_bytes(32, 24)
    (workspace / f"{SECRET}.png").write_bytes(data)
    vision_server.add(call("read_file", {"path": f"{SECRET}.png"}), text("It is red."))
    agent = make_agent(vision_server, workspace, tools=TOOLS, redactor=SECRETS, session_name="named")
    agent.run_turn("describe it")
    second = vision_server.chat_requests()[1]
    assert image_parts(second)[0][3] == data and not vision_server.refused  # still sent, as an image part
    assert SECRET not in json.dumps(vision_server.chat_requests()) and SECRET not in agent.session.path.read_text()
    [result] = [m for m in agent.messages if m["role"] == "tool"]
    [entry] = result[IMAGES]
    assert entry["name"] == f"{REDACTED}.png" and result["content"].startswith(f"read_file {REDACTED}.png: PNG")
    assert agent.transcript.outputs.facts()[result["tool_call_id"]].path == f"{REDACTED}.png"


def test_a_model_without_vision_reading_an_image_gets_the_sentence(server, workspace, shot):
    server.add(call("read_file", {"path": "shot.png"}), text("I cannot see it."))
    make_agent(server, workspace, tools=TOOLS).run_turn("describe shot")
    result = server.chat_requests()[1]["messages"][-1]
    assert result["role"] == "tool" and result["content"].startswith(
        "error: shot.png is an image (PNG), which this model is not sent: the server does not say"
    )
    assert not any(image_parts(r) for r in server.requests)


def test_images_over_the_cap_are_cleared_oldest_first(vision_server, workspace):
    names = [f"s{i}.png" for i in range(MAX_IMAGES_PER_REQUEST + 1)]
    for i, name in enumerate(names):
        (workspace / name).write_bytes(image_bytes(16, 16, colour=(i * 30, 0, 0)))
    vision_server.add(calls(*[("read_file", {"path": name}) for name in names]), text("seen"))
    agent = make_agent(vision_server, workspace, tools=TOOLS)
    agent.run_turn("compare them")
    second = vision_server.chat_requests()[1]
    assert len(image_parts(second)) == MAX_IMAGES_PER_REQUEST and not vision_server.refused
    cleared = [m for m in second["messages"] if "s0.png (16×16) cleared to save context" in str(m.get("content"))]
    assert [m["role"] for m in cleared] == ["tool"]


def test_a_compaction_clears_an_old_image_and_says_so(vision_server, workspace, shot):
    vision_server.add(call("read_file", {"path": "shot.png"}), text("It is red."))
    agent = make_agent(vision_server, workspace, tools=TOOLS)
    agent.run_turn("describe the screenshot")
    vision_server.add(text("Goal: describe shot.png. It is red."), text("done"))  # the summary, then the answer
    report = agent.fit_context(force=True)
    assert "summary" in report.layers
    agent.run_turn("thanks")
    last = vision_server.chat_requests()[-1]
    assert image_parts(last) == [] and size_by_kind(agent.messages)["images"] == 0


def test_a_resumed_session_sends_its_image_again(vision_server, workspace, shot, isolated_home):
    vision_server.add(text("A red rectangle."), text("Still red."))
    first = make_agent(vision_server, workspace, tools=TOOLS, session_name="pics")
    first.run_turn("what is in @shot.png?")
    first.session.close()
    log = (isolated_home / "sessions" / "pics.jsonl").read_text()
    assert "base64" not in log and len(log) < 4_000  # the session names the image by its digest
    (workspace / "shot.png").unlink()  # the session's own copy is sent, not the file
    resumed = make_agent(vision_server, workspace, tools=TOOLS, session_name="pics")
    resumed.run_turn("and now?")
    assert image_parts(vision_server.chat_requests()[-1])[0][3] == shot


def test_a_server_that_refuses_an_image_it_was_said_to_take_says_what_to_do(workspace, shot):
    llama = ScriptedServer(vision=False)  # no projector, but config.toml says vision = true
    try:
        agent = make_agent(llama, workspace, tools=TOOLS, vision=True)
        with pytest.raises(ProviderError) as refused:
            agent.run_turn("what is in @shot.png?")
        assert "image input is not supported" in str(refused.value)
        assert str(refused.value).endswith(IMAGE_REFUSED) and len(llama.refused) == 1
    finally:
        llama.close()
