"""Real MCP servers for the tests: tests/support/mcp_demo_server.py over stdio or streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from nanohermes.mcp.settings import McpServerSettings

DEMO_SERVER = str(Path(__file__).with_name("mcp_demo_server.py"))
HTTP_START_TIMEOUT_S = 30.0  # the SDK and uvicorn take ~1-2 s to import on a loaded machine


def demo_settings(name: str = "demo", *extra_args: str, **kw) -> McpServerSettings:
    """A stdio server running the demo (or, with "--tools", "10", the catalogue)."""
    return McpServerSettings(name, command=sys.executable, args=(DEMO_SERVER, *extra_args), **kw)


def toml_for(settings: McpServerSettings) -> str:
    """The config.toml table that configures `settings` (a stdio server, or one at a url)."""
    args = ", ".join(f'"{a}"' for a in settings.args)
    lines = [f"[mcp.servers.{settings.name}]"]
    lines += [f'url = "{settings.url}"'] if settings.url else [f'command = "{settings.command}"', f"args = [{args}]"]
    if settings.protocol_version:
        lines.append(f'protocol_version = "{settings.protocol_version}"')
    if settings.trusted:
        lines.append("trusted = true")
    if settings.env:
        lines.append("env = { " + ", ".join(f'{k} = "{v}"' for k, v in settings.env) + " }")
    return "\n".join(lines) + "\n"


def tool_results(server) -> list[str]:
    """The tool results the scripted model server received with its last request."""
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http_demo(*extra_args: str) -> tuple[subprocess.Popen, str]:
    """The demo server (`extra_args`: another of its servers) over streamable HTTP on 127.0.0.1:
    (process, its /mcp URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, DEMO_SERVER, *extra_args, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(proc, port)
    return proc, f"http://127.0.0.1:{port}/mcp"


def wait_for_port(proc: subprocess.Popen, port: int) -> None:
    """Until a server process listens on 127.0.0.1:`port` (killed, and an error, if it never does)."""
    deadline = time.monotonic() + HTTP_START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the HTTP MCP server did not start")
