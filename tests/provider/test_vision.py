"""Whether the model takes images, as each server says it (provider/vision.py), asked of the scripted
server over real HTTP in the shapes llama.cpp, Ollama, LM Studio and a gateway answer; and the
sentence the user reads when it does not, or when nothing says."""

from __future__ import annotations

from nanohermes.configure import load_config
from nanohermes.provider import Provider
from nanohermes.provider.vision import LearnedVision, vision_from_listing, vision_refusal
from tests.support.local_servers import OllamaApi, lmstudio_routes
from tests.support.scripted_server import ScriptedServer

MODEL = "qwen2.5vl:7b"


def learned(server, model="test-model"):
    return Provider(load_config(base_url=server.url, model=model)).learn_vision()


def test_llama_cpp_with_a_projector_says_vision_in_props():
    for vision in (True, False):
        server = ScriptedServer(vision=vision)
        try:
            said = learned(server)
            assert said.takes_images is vision and "llama.cpp's GET /props" in said.source
        finally:
            server.close()


def test_ollama_says_vision_among_a_models_capabilities():
    for vision in (True, False):
        server, api = ScriptedServer(), OllamaApi(MODEL, vision=vision)
        server.routes.update(api.routes())
        try:
            assert learned(server, MODEL) == LearnedVision(vision, "Ollama's capabilities, POST /api/show")
            assert ("POST /api/show", {"model": MODEL}) in server.native and not server.chat_requests()
        finally:
            server.close()


def test_lm_studio_says_vlm_for_a_model_that_takes_images(server):
    server.routes.update(lmstudio_routes(MODEL, kind="vlm"))
    assert learned(server, MODEL).takes_images


def test_a_gateway_lists_the_models_input_modalities(server):
    entry = {"id": "vendor/model", "architecture": {"input_modalities": ["text", "image"]}}
    server.routes["GET /v1/models"] = {"object": "list", "data": [entry]}
    assert learned(server, "vendor/model") == LearnedVision(True, "input_modalities in GET /models")
    assert vision_from_listing([{"id": "m", "input_modalities": ["text"]}], "m") == LearnedVision(
        False, "input_modalities in GET /models"
    )


def test_a_server_that_says_nothing_leaves_it_unknown_and_is_asked_once(server):
    server.routes["GET /props"] = lambda body: (404, {"error": {"message": "File Not Found"}})
    provider = Provider(load_config(base_url=server.url, model="test-model"))
    assert provider.learn_vision() is None and provider.learn_vision() is None
    assert [key for key, _ in server.native] == ["GET /props"] and not server.chat_requests()


def test_the_refusal_names_the_setting_and_the_setting_wins():
    unknown = vision_refusal(None, None, "gpt-4o")
    assert (
        unknown == "the server does not say whether gpt-4o takes images; if it does, set vision = true in config.toml"
    )
    said_no = vision_refusal(None, LearnedVision(False, "llama.cpp's GET /props: no projector"), "qwen")
    assert "the server says qwen takes no images (llama.cpp's GET /props: no projector)" in said_no
    assert "vision = true" in said_no
    assert vision_refusal(None, LearnedVision(True, "x"), "m") is None
    assert vision_refusal(True, LearnedVision(False, "x"), "m") is None  # the user knows better
    assert (
        vision_refusal(False, LearnedVision(True, "x"), "m") == "vision = false in config.toml says m takes no images"
    )
