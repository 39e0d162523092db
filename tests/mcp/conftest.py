"""`configure`: a config.toml with the given MCP servers, loaded against the scripted model server."""

import pytest

from nanohermes.configure import load_config
from tests.support.mcp_servers import toml_for


@pytest.fixture
def configure(server, isolated_home, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def write(*servers, **flags):
        (isolated_home / "config.toml").write_text("\n".join(toml_for(s) for s in servers))
        return load_config(base_url=server.url, workspace=workspace, **flags)

    return write
