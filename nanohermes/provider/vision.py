"""Whether a model takes images, from what its server answers, and what the user is told when it
does not. Pure: answers in, a LearnedVision or a sentence out (provider/__init__.py asks).

- A gateway's GET /models entry may list its input: OpenRouter's `architecture.input_modalities`,
  others' `input_modalities` (["text", "image"]).
- llama.cpp's GET /props says `modalities.vision`: true when it was started with a projector
  (--mmproj, or -hf with a model that has one).
- Ollama's POST /api/show lists the model's `capabilities` ("completion", "tools", "vision", …).
- LM Studio's GET /api/v0/models/{model} has `type`: "vlm" for a model that takes images, "llm".
Others (OpenAI, vLLM, most proxies) say nothing: the `vision` setting of config.toml says it.

When nothing says so, the model is not sent an image: a sentence naming the setting, before any
request, rather than a request a text-only server answers with an HTTP 400 after the tool call
that read the image is in the history (every later request would carry it again), or one it
accepts and drops the image from, so the model answers about a picture it never saw.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LearnedVision:
    takes_images: bool
    source: str  # where the server said it, as the refusal names it


def vision_from_listing(models: list[dict], model: str) -> LearnedVision | None:
    """The configured model's entry in GET /models, when it lists its input modalities."""
    for entry in models:
        if entry.get("id") != model:
            continue
        architecture = entry.get("architecture")
        found = architecture.get("input_modalities") if isinstance(architecture, dict) else None
        found = found if isinstance(found, list) else entry.get("input_modalities")
        if isinstance(found, list):
            return LearnedVision("image" in found, "input_modalities in GET /models")
    return None


def vision_from_props(props) -> LearnedVision | None:
    """llama.cpp's GET /props: `modalities.vision`."""
    modalities = props.get("modalities") if isinstance(props, dict) else None
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    if not isinstance(vision, bool):
        return None
    return LearnedVision(vision, "llama.cpp's GET /props: " + ("a projector is loaded" if vision else "no projector"))


def vision_from_ollama(show) -> LearnedVision | None:
    """Ollama's POST /api/show: `capabilities` holds "vision" for a model that takes images."""
    capabilities = show.get("capabilities") if isinstance(show, dict) else None
    if not isinstance(capabilities, list):
        return None
    return LearnedVision("vision" in capabilities, "Ollama's capabilities, POST /api/show")


def vision_from_lmstudio(info) -> LearnedVision | None:
    """LM Studio's GET /api/v0/models/{model}: `type` "vlm" (vision) or "llm"."""
    kind = info.get("type") if isinstance(info, dict) else None
    if kind not in ("vlm", "llm"):
        return None
    return LearnedVision(kind == "vlm", f"LM Studio's model type {kind!r}, GET /api/v0/models")


def vision_refusal(configured: bool | None, learned: LearnedVision | None, model: str) -> str | None:
    """Why `model` is not sent images, in a sentence (None: it is). `configured`: config.toml's
    `vision` (None: not set), which wins over what the server says."""
    if configured is not None:
        return None if configured else f"vision = false in config.toml says {model} takes no images"
    if learned is not None and learned.takes_images:
        return None
    if learned is not None:
        return (
            f"the server says {model} takes no images ({learned.source}); use a model that does (/model), "
            "or set vision = true in config.toml if the server is wrong"
        )
    return f"the server does not say whether {model} takes images; if it does, set vision = true in config.toml"
