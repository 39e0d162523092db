"""Ollama's and LM Studio's own APIs as routes of the scripted server (ScriptedServer.routes), in
the shapes those servers answer: Ollama's api/types.go (ShowResponse, ProcessModelResponse,
GenerateResponse) and LM Studio's REST API v0 (GET /api/v0/models/{model})."""

from __future__ import annotations


class OllamaApi:
    """One pulled model. It runs once loaded (an empty POST /api/generate, or `running=True`),
    with the Modelfile's num_ctx or the server's default (`default_context`), never more than it
    was trained for; an Ollama older than 0.9.7 (`reports_context=False`) leaves the context out
    of /api/ps."""

    def __init__(
        self,
        model: str,
        *,
        trained: int = 32_768,
        default_context: int = 4_096,
        num_ctx: int | None = None,
        running: bool = False,
        reports_context: bool = True,
        vision: bool = False,
    ):
        self.model, self.trained, self.num_ctx = model, trained, num_ctx
        self.vision = vision  # "vision" among its capabilities (a model with a projector: qwen2.5vl, gemma3)
        self.default_context, self.reports_context = default_context, reports_context
        self.running = running
        self.loads = 0

    @property
    def context(self) -> int:
        return min(self.num_ctx or self.default_context, self.trained)

    def routes(self) -> dict:
        listing = {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 1, "owned_by": "library"}],
        }
        return {
            "GET /api/version": {"version": "0.12.6"},
            "GET /v1/models": listing,
            "POST /api/show": self._show,
            "GET /api/ps": lambda body: (200, {"models": [self._process()] if self.running else []}),
            "POST /api/generate": self._load,
        }

    def _known(self, body) -> bool:
        return (body or {}).get("model") in (self.model, f"{self.model}:latest")

    def _show(self, body):
        if not self._known(body):
            return 404, {"error": f"model '{(body or {}).get('model')}' not found"}
        parameters = 'stop                           "<|im_end|>"'
        if self.num_ctx:
            parameters = f"num_ctx                        {self.num_ctx}\n{parameters}"
        return 200, {
            "modelfile": f"FROM {self.model}\n",
            "parameters": parameters,
            "template": "{{ .Prompt }}",
            "details": {"format": "gguf", "family": "qwen2", "parameter_size": "1.5B", "quantization_level": "Q4_K_M"},
            "model_info": {
                "general.architecture": "qwen2",
                "general.parameter_count": 1_543_714_304,
                "qwen2.block_count": 28,
                "qwen2.context_length": self.trained,
                "qwen2.embedding_length": 1536,
            },
            "capabilities": ["completion", "tools", *(["vision"] if self.vision else [])],
        }

    def _process(self) -> dict:
        process = {
            "name": self.model,
            "model": self.model,
            "size": 1_929_912_320,
            "digest": "6d3abb8d2d53",
            "details": {"format": "gguf", "family": "qwen2", "parameter_size": "1.5B"},
            "expires_at": "2099-01-01T00:00:00Z",
            "size_vram": 0,
        }
        if self.reports_context:
            process["context_length"] = self.context
        return process

    def _load(self, body):
        if not self._known(body):
            return 404, {"error": f"model '{(body or {}).get('model')}' not found"}
        self.running, self.loads = True, self.loads + 1
        return 200, {
            "model": self.model,
            "created_at": "2026-01-01T00:00:00Z",
            "response": "",
            "done": True,
            "done_reason": "load",
        }


def lmstudio_routes(
    model: str, *, max_context: int = 32_768, loaded_context: int | None = None, kind: str = "llm"
) -> dict:
    """`kind`: "llm", or "vlm" for a model that takes images."""
    info = {
        "id": model,
        "object": "model",
        "type": kind,
        "publisher": "lmstudio-community",
        "arch": "qwen2",
        "compatibility_type": "gguf",
        "quantization": "Q4_K_M",
        "state": "loaded" if loaded_context else "not-loaded",
        "max_context_length": max_context,
    }
    if loaded_context:
        info["loaded_context_length"] = loaded_context
    listing = {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "organization_owner"}]}
    return {f"GET /api/v0/models/{model}": info, "GET /v1/models": listing}
