"""The REPL's start-up check of the endpoint, in the background: GET /models tells whether the
server answers at all (so the banner can say so before the first request fails), and its
listing is what /model Tab-completes."""

from __future__ import annotations

import threading
from dataclasses import replace

from nanohermes.config import Config

# GET /models answers in milliseconds from a live server; a host that never answers must not
# hold the check (it runs in the background, but the banner waits up to BANNER_WAIT_S for it).
CHECK_TIMEOUT_S = 5.0
BANNER_WAIT_S = 1.0
# Kinds of failure (provider/retry.py) that mean the agent cannot work with this endpoint.
# Others (a 404 for /models, which some servers lack) say nothing about the chat API.
UNUSABLE_KINDS = ("connection", "refused", "timeout", "not_api", "auth")


class EndpointCheck:
    """Started at once; `models` and `problem` are filled in when the answer arrives."""

    def __init__(self, config: Config):
        self.config = config
        self.models: list[str] = []
        self.problem: str | None = None  # the error paragraph when the endpoint is unusable
        self._done = threading.Event()
        self._reported = False
        threading.Thread(target=self._run, name="endpoint-check", daemon=True).start()

    def _run(self) -> None:
        from nanohermes.errors import NanoHermesError
        from nanohermes.provider import Provider

        provider = Provider(replace(self.config, max_retries=0, request_timeout=CHECK_TIMEOUT_S))
        try:
            self.models = sorted(str(m.get("id")) for m in provider.list_models() if m.get("id"))
        except NanoHermesError as exc:
            if getattr(exc, "kind", "") in UNUSABLE_KINDS:
                self.problem = str(exc)
        except Exception:  # a check must never print a traceback from its thread
            pass
        finally:
            self._done.set()

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def take_problem(self, timeout: float = 0.0) -> str | None:
        """The problem, once, when the check has finished within `timeout`; else None."""
        if self._reported or not self._done.wait(timeout):
            return None
        self._reported = True
        return self.problem
