"""Through the loop: config.toml's [lsp.python] reaches the session, the model's edit comes back with
the new problem and as a success, and the server ends with the session. The scripted model server
over HTTP, the real pylsp."""

from __future__ import annotations

import json
import os
import sys

import pytest

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.tools.diagnosed import MADE
from tests.support.scripted_server import call, text
from tests.support.timing import HANG_GUARD_S

pytestmark = pytest.mark.subprocess


def test_the_models_edit_comes_back_made_with_its_new_problem_and_the_server_ends_with_the_session(
    server, workspace, isolated_home, monkeypatch, tmp_path
):
    pidfile = tmp_path / "pid"
    command = ["bash", "-c", f'echo $$ > {pidfile}; exec "$0" -m pylsp', sys.executable]
    table = f"[lsp.python]\ncommand = {json.dumps(command)}\ntimeout = {HANG_GUARD_S}\n"
    (isolated_home / "config.toml").write_text(table + '[sandbox]\nlevel = "off"\n')
    (workspace / "app.py").write_text("def total(items):\n    return sum(items)\n")
    edit = {"path": "app.py", "old_text": "sum(items)", "new_text": "sum(item.price for item in itmes)"}
    server.add(call("edit_file", edit), text("done"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    runtime = build_runtime(load_config(base_url=server.url, workspace=workspace, mode="auto"), None, print, None)
    try:
        runtime.agent.run_turn("use the prices")
        pid = int(pidfile.read_text())
    finally:
        runtime.close()
    (result,) = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert result.startswith("edit_file app.py: replaced 1 occurrence")
    assert result.endswith(f"{MADE}; new problems in app.py (bash):\n  2:39 undefined name 'itmes'")  # bash runs it
    assert "itmes" in (workspace / "app.py").read_text()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
