"""The REPL's start-up check of the endpoint, in the background: GET /models tells whether the
server answers at all (so the user hears it before the first request fails), whether it lists
the configured model (provider/served.py: when it lists several), and its listing is what /model
Tab-completes.

It starts once the first prompt is drawn, so it never delays it. A server that answers a JSON
404 where /v1 is missing (vLLM, FastAPI) is said too, with the address its API is at."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from nanohermes.config import Config

# GET /models answers in milliseconds from a live server; a host that never answers must not
# keep the check (and the model list) waiting long.
CHECK_TIMEOUT_S = 5.0
DRAWN_WAIT_S = 2.0  # start anyway if the prompt never says it was drawn
MODELS_WAIT_S = 3.0  # a Tab after /model waits this long for the list (once; it is kept)
# Kinds of failure (provider/retry.py) that mean the agent cannot work with this endpoint.
# Others (a 404 for /models, which some servers lack) say nothing about the chat API.
UNUSABLE_KINDS = ("connection", "refused", "timeout", "not_api", "web_page", "auth")


class EndpointCheck:
    """Started at once; `models` and `problem` are filled in when the answer arrives."""

    def __init__(
        self, config: Config, on_done: Callable[[], None] = lambda: None, start_after: threading.Event | None = None
    ):
        """`on_done` is called from the check's thread when the answer is in; the check waits
        for `start_after` (the first prompt drawn) so it never slows the start."""
        self.config = config
        self.start_after = start_after
        self.on_done = on_done
        self.models: list[str] = []
        self.problem: str | None = None  # the error paragraph when the endpoint is unusable
        self._done = threading.Event()
        self._take = threading.Lock()
        self._reported = False
        threading.Thread(target=self._run, name="endpoint-check", daemon=True).start()

    def _run(self) -> None:
        if self.start_after is not None:
            self.start_after.wait(DRAWN_WAIT_S)
        from nanohermes.errors import NanoHermesError
        from nanohermes.provider import Provider
        from nanohermes.provider.served import unlisted_model

        provider = Provider(replace(self.config, max_retries=0, request_timeout=CHECK_TIMEOUT_S))
        try:
            self.models = sorted(str(m.get("id")) for m in provider.list_models() if m.get("id"))
            self.problem = unlisted_model(self.config.effective_base_url, self.config.model, self.models)
        except NanoHermesError as exc:
            info = getattr(exc, "info", None) or {}
            if getattr(exc, "kind", "") in UNUSABLE_KINDS or info.get("api_at"):  # a 404 where /v1 is missing too
                self.problem = str(exc)
        except Exception:  # a check must never print a traceback from its thread
            pass
        finally:
            self._done.set()
        try:
            self.on_done()
        except Exception:  # the REPL's printing must not end the thread with a traceback
            pass

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def take_problem(self, timeout: float = 0.0) -> str | None:
        """The problem, once (whichever thread asks first), when the check has finished within
        `timeout`; else None."""
        if not self._done.wait(timeout):
            return None
        with self._take:
            if self._reported:
                return None
            self._reported = True
            return self.problem
