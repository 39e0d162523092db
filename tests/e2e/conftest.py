"""End-to-end tests against a real model server. Skipped unless NANOHERMES_E2E_BASE_URL is
set (scripts/e2e_real_model.sh starts llama.cpp's server and sets it).

NANOHERMES_E2E_RECORD_URL (the root of scripts/record_real_model.py) makes every task go
through the recording proxy and rewrites tests/recordings/TASK.json with placeholders for
the temp paths. NANOHERMES_E2E_TEMPERATURE sets the
sampling temperature (config.toml's `temperature`; default 0). NANOHERMES_E2E_REPORT names a file that gets one line per task (wall time,
tokens), also printed at the end of the run.
"""

from __future__ import annotations

import os
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from tests.e2e.recording import HOME, WORKSPACE, normalise_file
from tests.e2e.tasks import Outcome, Task, run_task

BASE_URL = os.environ.get("NANOHERMES_E2E_BASE_URL")
RECORD_URL = os.environ.get("NANOHERMES_E2E_RECORD_URL")
MODEL = os.environ.get("NANOHERMES_E2E_MODEL", "local-model")
TEMPERATURE = os.environ.get("NANOHERMES_E2E_TEMPERATURE")  # e.g. 0.3 for pass rates at a temperature above 0
_reports: list[str] = []


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.e2e)
            if not BASE_URL:
                item.add_marker(pytest.mark.skip(reason="set NANOHERMES_E2E_BASE_URL (see scripts/e2e_real_model.sh)"))


class RealModel:
    def url_for(self, name: str) -> str:
        """The base URL to use for recording NAME (a fresh recording), or the server's."""
        if not RECORD_URL:
            return BASE_URL
        url = f"{RECORD_URL.rstrip('/')}/rec/{name}"
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE")).close()
        return url + "/v1"

    def run(self, task: Task, root: Path) -> Outcome:
        if TEMPERATURE:
            task = replace(task, config=task.config + f"temperature = {float(TEMPERATURE)}\n")
        outcome = run_task(task, root, self.url_for(task.name), MODEL)
        if RECORD_URL:
            normalise_file(task.name, {str(outcome.workspace.resolve()): WORKSPACE, str(outcome.home.resolve()): HOME})
        line = outcome.report() + ("" if all(r.returncode == 0 for r in outcome.runs) else " (failed)")
        _reports.append(line)
        if os.environ.get("NANOHERMES_E2E_REPORT"):
            with open(os.environ["NANOHERMES_E2E_REPORT"], "a", encoding="utf-8") as f:
                f.write(line + "\n")
        return outcome


@pytest.fixture
def real_model() -> RealModel:
    return RealModel()


def pytest_terminal_summary(terminalreporter):
    if _reports:
        terminalreporter.section("real model: wall time and tokens per task")
        for line in _reports:
            terminalreporter.write_line(line)
