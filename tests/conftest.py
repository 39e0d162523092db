import signal

import pytest
from hypothesis import HealthCheck, settings

from tests.support.scripted_server import ScriptedServer

# Run from a background job (`pytest &`, `nohup`), the suite inherits SIGINT ignored: Python then
# installs no KeyboardInterrupt handler, and every Ctrl-C test, in-process or in a child it starts,
# would see its Ctrl-C ignored. The tests are of Ctrl-C as a terminal delivers it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# hypothesis times each example (200 ms) and its data generation: on a busy machine (CI's hogs beside the
# suite) a pure function's example took longer, and the property failed for the clock. No example is timed;
# a hang is still caught by the tests' own guards.
settings.register_profile("busy", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("busy")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Every test gets its own NANOHERMES_HOME and no real key or endpoint."""
    home = tmp_path_factory.mktemp("nh_home")
    monkeypatch.setenv("NANOHERMES_HOME", str(home))
    # Claude Code's and Codex's user directories (their commands, prompts, skills are read too): never the real ones
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude-home"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NANOHERMES_MODEL", "OPENAI_ORG_ID"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return home


@pytest.fixture
def server():
    srv = ScriptedServer()
    yield srv
    srv.close()


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws
