"""`nanohermes --local`: a small coding model on this computer, for a session with no key and no
other server. A server (local/server.py) is started on a free loopback port with the model
(local/models.py: --model-file, else Qwen2.5-Coder-1.5B-Instruct from the cache directory,
downloaded once: local/download.py), the session is pointed at it, and the CLI stops it when the
session ends, however it ends.

Imported only with --local: nothing here costs the other starts anything.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.local.models import DEFAULT_MODEL, cache_dir, cached_model, model_file
from nanohermes.local.server import RunningServer, find_server, free_port

# The window the server is started with unless config.toml's context_window says otherwise: what
# NanoHermes's small-model settings were measured at (README's window table), and ~2 GB of RAM for
# the 1.5B model on a CPU. The server is started with it and the session assumes it, so they agree.
DEFAULT_CONTEXT = 8_192
# What the default model is good for, measured here (README, "No key: a model on this computer").
GOOD_FOR = (
    "a 1.5B model on the CPU: good for reading and explaining code, a small fix in one file and running its test; "
    "weak at changes across several files, long tasks and subtle bugs (a hosted model does those: OPENAI_API_KEY)"
)
LOG_NAME = "local-server-{stamp}-{pid}.log"  # under $NANOHERMES_HOME/logs, beside crash logs (crash.py)


@dataclass
class LocalServer:
    server: RunningServer
    model: str  # the id the server answers to
    context: int  # the window it was started with (or says it uses)

    def session_config(self, config):
        """The configuration pointed at this server: its URL and model id, its window, no key
        sent (a key from the environment is not for it), and a price of nothing."""
        from nanohermes.config import PLACEHOLDER_KEY
        from nanohermes.provider.prices import Price

        free = Price(input=0.0, output=0.0, source="a model on this computer")
        return replace(
            config,
            base_url=self.server.base_url,
            model=self.model,
            api_key=PLACEHOLDER_KEY,
            context_window=self.context,
            prices={**config.prices, self.model: free},
        )

    def stop(self) -> None:
        self.server.stop()


def serve_locally(config, model_path: Path | None, say=None) -> LocalServer:
    """Start the server with the model and wait until it is ready. LocalModelError when there is
    no server program, no model, or the server fails to start (its last lines said)."""
    say = say or _say
    program = find_server()  # first: no point in downloading a gigabyte with nothing to serve it
    if model_path is not None:
        path, name, trained = model_file(model_path), model_path.stem, None
    else:
        path = cached_model(DEFAULT_MODEL, cache_dir(), lambda spec, target: _download(spec, target, say), say)
        name, trained = DEFAULT_MODEL.name, DEFAULT_MODEL.trained_context
    context = config.context_window or DEFAULT_CONTEXT
    if trained and context > trained:
        say(f"context_window {context:,} is more than {name} was trained for: using {trained:,}")
        context = trained
    port = free_port()
    log = config.home / "logs" / LOG_NAME.format(stamp=time.strftime("%Y%m%d-%H%M%S"), pid=os.getpid())
    server = RunningServer(program, program.argv(path, name, port, context), port, log)
    say(f"loading the model {name} into {program.where} on 127.0.0.1:{port}, {context:,}-token window…")
    try:
        listing = server.wait_ready(config.local_start_timeout)
    except BaseException:  # Ctrl-C or SIGTERM while it loads: nothing is left running
        server.stop_quietly()
        raise
    served = _advertised_window(listing, name)
    if served and served != context:
        say(f"the server uses a {served:,}-token window, not {context:,}: the session follows the server")
        context = served
    said = GOOD_FOR if model_path is None else f"the model in {path}"
    say(f"local model ready in {time.monotonic() - server.started:.0f} s — {said}")
    return LocalServer(server, name, context)


def _advertised_window(listing: dict, model: str) -> int | None:
    from nanohermes.provider.window import window_from_listing

    data = listing.get("data") if isinstance(listing, dict) else None
    learned = window_from_listing([m for m in data if isinstance(m, dict)], model) if isinstance(data, list) else None
    return learned.tokens if learned else None


def _download(spec, target: Path, say) -> None:
    from nanohermes.local.download import download

    say(f"downloading {spec.name} ({spec.size / 1e9:.1f} GB, once) into {target.parent}")
    download(spec.url, target, spec.size)


def _say(text: str) -> None:
    print(f"nanohermes: {text}", file=sys.stderr, flush=True)
