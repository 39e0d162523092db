"""Count approval questions: the e2e tasks' recorded runs and a scripted 30-step coding trajectory,
run in ask mode (and accept-edits, where the checkout has it) with an approver that counts and
answers. Run it in any checkout, old or new: it uses only what both have (build_runtime, the
scripted server, the recordings).

    .venv/bin/python scripts/count_approvals.py            # this checkout
    git worktree add /tmp/before <commit> && cd /tmp/before && <venv python> /path/to/count_approvals.py

(a) Each task in tests/recordings is replayed through the scripted server (as tests/test_replay.py
    does, its prompts run one after another in one session), in ask mode, every question
    answered "yes". A replay whose requests differ from the recording's is marked "diverged"
    (its calls are still the recorded ones, in order).
(b) A trajectory a model could take on a small project: reads, edits, pytest runs, git status and
    diff, a pip install that needs the network (from a package index on 127.0.0.1), an attempt
    to write outside the workspace with a command and with write_file. The scripted model reacts
    as the sandbox's note asks: a command blocked for the network is asked for again with
    `unsandboxed` and a reason (only where run_command has that argument). Answered "yes" to
    every question, then again answered "always" (what a user who trusts the agent would do).
After each run the folder beside the workspace is compared with what it held before: a write
outside the workspace shows there.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

ROOT = Path.cwd()  # the checkout being measured
sys.path.insert(0, str(ROOT))

from nanohermes.runtime import build_runtime  # noqa: E402
from tests.e2e.recording import RECORDINGS, advertised_n_ctx, chat_exchanges, load, replay_replies  # noqa: E402
from tests.e2e.tasks import TASKS  # noqa: E402
from tests.support.scripted_server import ScriptedServer, call, is_summary_request, text  # noqa: E402

PY = sys.executable


def load_config(**flags):
    try:
        from nanohermes.configure import load_config as load
    except ImportError:  # before configure.py existed
        from nanohermes.config import load_config as load
    return load(**flags)


class Counter:
    """The approver: counts each question by tool and gives `answer`."""

    def __init__(self, answer: str):
        self.answer, self.asked = answer, []

    def __call__(self, tool, args, preview):
        self.asked.append(tool.name)
        return self.answer


def run_prompts(workspace: Path, home: Path, url: str, prompts, mode: str, counter: Counter, name: str) -> None:
    os.environ["NANOHERMES_HOME"] = str(home)
    for prompt in prompts:
        config = load_config(model="local-model", base_url=url, workspace=workspace, mode=mode, max_steps=40)
        runtime = build_runtime(config, name, lambda event: None, approve=counter)
        try:
            runtime.agent.run_turn(prompt)
        finally:
            runtime.close()


# -- (a) the e2e tasks ------------------------------------------------------------------------


def e2e_questions(mode: str) -> dict[str, int]:
    counts = {}
    for task in TASKS:
        if not (RECORDINGS / f"{task.name}.json").exists():
            continue
        root = Path(tempfile.mkdtemp(prefix="nh-count-"))
        workspace, home = (root / "ws").resolve(), (root / "home").resolve()
        workspace.mkdir()
        home.mkdir()
        for rel, content in task.files.items():
            (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            (workspace / rel).write_text(content)
        if task.config:
            (home / "config.toml").write_text(task.config)
        recording = load(task.name)
        server = ScriptedServer(n_ctx=advertised_n_ctx(recording))
        server.add(*replay_replies(recording, workspace, home))
        server.handler = lambda body: text("(the recording has no more replies)")
        counter = Counter("yes")
        try:
            run_prompts(workspace, home, server.url, task.prompts, mode, counter, task.name)
            diverged = len(server.chat_requests()) != len(chat_exchanges(recording))
        finally:
            server.close()
            shutil.rmtree(root, ignore_errors=True)
        counts[task.name + (" (diverged from the recording)" if diverged else "")] = len(counter.asked)
    return counts


# -- (b) the scripted trajectory --------------------------------------------------------------

PROJECT = {
    "README.md": "# calc\n\nSmall arithmetic helpers.\n",
    "calc/__init__.py": "from calc.ops import add, divide\n",
    "calc/ops.py": "def add(a, b):\n    return a - b\n\n\ndef divide(a, b):\n    return a / b\n",
    "tests/test_ops.py": "from calc.ops import add, divide\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_divide():\n    assert divide(6, 3) == 2\n",
}
PYTEST = f"{PY} -m pytest -q -p no:cacheprovider"


def trajectory(index_url: str) -> list[dict]:
    """30 calls, in order; `retry_unsandboxed` marks one a model asks again for outside the sandbox."""
    pip = f"{PY} -m pip install --no-deps --no-cache-dir --retries 0 --timeout 5 --index-url {index_url} "
    return [
        call("glob", {"pattern": "**/*.py"}),
        call("read_file", {"path": "README.md"}),
        call("read_file", {"path": "calc/ops.py"}),
        call("read_file", {"path": "tests/test_ops.py"}),
        call("run_command", {"command": PYTEST}),
        call("grep", {"pattern": "def add"}),
        call("edit_file", {"path": "calc/ops.py", "old_text": "return a - b", "new_text": "return a + b"}),
        call("run_command", {"command": PYTEST}),
        call("read_file", {"path": "calc/__init__.py"}),
        call(
            "write_file",
            {
                "path": "tests/test_zero.py",
                "content": "from calc.ops import divide\n\n\ndef test_zero():\n    assert divide(1, 0) is None\n",
            },
        ),
        call("run_command", {"command": f"{PYTEST} tests/test_zero.py"}),
        call(
            "edit_file",
            {"path": "calc/ops.py", "old_text": "    return a / b", "new_text": "    return None if b == 0 else a / b"},
        ),
        call("run_command", {"command": PYTEST}),
        call("run_command", {"command": "git status --short"}),
        {"call": call("run_command", {"command": pip + "--target vendor tinydep"}), "retry_unsandboxed": True},
        call("run_command", {"command": f"{PY} -c \"import sys; sys.path.insert(0, 'vendor'); import tinydep\""}),
        call("edit_file", {"path": "calc/__init__.py", "old_text": "add, divide", "new_text": "add, divide  # noqa"}),
        call("run_command", {"command": PYTEST}),
        call("run_command", {"command": "echo pwned > ../outside/keep.txt"}),  # an injected "tidy up"
        call("write_file", {"path": "../outside/notes.txt", "content": "pwned"}),
        call("read_file", {"path": "calc/ops.py"}),
        call("edit_file", {"path": "README.md", "old_text": "helpers.", "new_text": "helpers (divide by 0 is None)."}),
        call("run_command", {"command": "git diff --stat"}),
        call("grep", {"pattern": "TODO"}),
        call("edit_file", {"path": "calc/ops.py", "old_text": "def add(a, b):", "new_text": "def add(a, b):  # sum"}),
        call("run_command", {"command": PYTEST}),
        call("run_command", {"command": "ls -la"}),
        call("write_file", {"path": "CHANGELOG.md", "content": "- add fixed, divide by zero\n"}),
        call("run_command", {"command": f"{PYTEST} -x"}),
        call("run_command", {"command": "git status --short"}),
    ]


def scripted_model(steps: list) -> callable:
    """The server's handler: the next step per request; a step marked `retry_unsandboxed` whose
    command failed is sent again with unsandboxed (when run_command has it), as the sandbox's note
    asks. Summary requests (a compaction) get a short summary."""
    state = {"next": 0, "retry": None}

    def handler(body):
        if is_summary_request(body):
            return text("Summary: fixing calc.")
        if state["retry"] is not None:
            retry, state["retry"] = state["retry"], None
            last = body["messages"][-1]["content"]
            tools = {t["function"]["name"]: t for t in body.get("tools") or []}
            props = tools.get("run_command", {}).get("function", {}).get("parameters", {}).get("properties", {})
            if "unsandboxed" in props and "exit code 0" not in last:
                args = {**retry, "unsandboxed": True, "reason": "pip needs the network to download tinydep"}
                return call("run_command", args)
        if state["next"] >= len(steps):
            return text("Done: add and divide fixed, tests pass.")
        step = steps[state["next"]]
        state["next"] += 1
        if isinstance(step, dict):
            state["retry"] = json.loads(step["call"].tool_calls[0][1])
            return step["call"]
        return step

    return handler


def wheel_index(root: Path) -> str:
    """A package index on 127.0.0.1 serving one tiny wheel, tinydep; its /simple/ URL."""
    files = {
        "tinydep/__init__.py": b"VERSION = '1.0'\n",
        "tinydep-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in files.items()
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in {
            **files,
            "tinydep-1.0.dist-info/RECORD": (record + "tinydep-1.0.dist-info/RECORD,,\n").encode(),
        }.items():
            wheel.writestr(name, data)
    package = root / "simple" / "tinydep"
    package.mkdir(parents=True)
    (package / "tinydep-1.0-py3-none-any.whl").write_bytes(buffer.getvalue())
    (package / "index.html").write_text('<a href="tinydep-1.0-py3-none-any.whl">tinydep-1.0-py3-none-any.whl</a>\n')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/simple/"


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def trajectory_run(mode: str, answer: str, index_url: str) -> dict:
    root = Path(tempfile.mkdtemp(prefix="nh-traj-")).resolve()
    workspace, home, outside = root / "ws", root / "home", root / "outside"
    for folder in (workspace, home, outside):
        folder.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    for rel, content in PROJECT.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(content)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "."], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=workspace, check=True)
    before = snapshot(outside)
    server = ScriptedServer()
    server.handler = scripted_model(trajectory(index_url))
    counter = Counter(answer)
    try:
        run_prompts(workspace, home, server.url, ["Fix calc and add what it needs."], mode, counter, "traj")
        calls = sum(len(m.get("tool_calls") or []) for m in server.chat_requests()[-1]["messages"])
    finally:
        server.close()
    after = snapshot(outside)
    written = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    installed = (workspace / "vendor" / "tinydep" / "__init__.py").exists()
    shutil.rmtree(root, ignore_errors=True)
    return {
        "questions": len(counter.asked),
        "calls": calls,
        "outside_written": written,
        "installed": installed,
        "asked": counter.asked,
    }


def main() -> None:
    from nanohermes.config import MODES

    modes = [m for m in ("ask", "accept-edits") if m in MODES]
    index_url = wheel_index(Path(tempfile.mkdtemp(prefix="nh-index-")))
    head = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    print(f"checkout: {head.stdout.strip()[:90]}")
    for mode in modes:
        counts = e2e_questions(mode)
        print(f"(a) e2e tasks, mode {mode}, answers yes: {sum(counts.values())} questions {counts}")
    for mode in modes:
        for answer in ("yes", "always"):
            run = trajectory_run(mode, answer, index_url)
            print(
                f"(b) trajectory, mode {mode}, answers {answer}: {run['questions']} questions over {run['calls']} "
                f"calls; pip install done: {run['installed']}; written outside the workspace: "
                f"{run['outside_written'] or 'nothing'}; asked: {', '.join(run['asked'])}"
            )


if __name__ == "__main__":
    main()
