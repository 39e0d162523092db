"""How scripts/bench_exercism.py runs each agent on one exercise directory: the command, its environment, a timeout.

Both agents get the same task text, the same model behind the same counting proxy, a private home
directory per exercise (their sessions and logs stay there for reading afterwards) and the same
`python` first on PATH (the bench's venv, which has pytest), so "run the tests" means the same thing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

AIDER_CONTEXT_TOKENS = 8192  # the server's -c; aider asks litellm for the window, which knows nothing of a local model
AIDER_MAX_OUTPUT_TOKENS = 2048  # a whole-file reply for a difficulty-1–3 exercise fits easily
# "whole": the model sends back the complete file. The stubs are 5–40 lines, so resending them costs little,
# and a 1.5B model rarely reproduces a SEARCH block character for character (aider's own default for models
# it has no settings for is "whole" for the same reason).
AIDER_EDIT_FORMAT = "whole"


@dataclass
class AgentRun:
    exit_code: int | None  # None: killed at the timeout
    seconds: float
    timed_out: bool
    stdout_tail: str
    details: dict = field(default_factory=dict)  # what the agent itself reported (NanoHermes's JSON result)


def agent_env(home: Path, python_bin: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{python_bin}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)
    env["NANOHERMES_HOME"] = str(home / "nanohermes")
    env["OPENAI_API_KEY"] = "sk-local"  # the local server checks none; clients insist on one
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # aider's litellm would otherwise fetch a price list (no internet)
    env["HOME"] = str(home)  # no user config of either agent leaks into the measurement
    return env


def test_command(test_file: str) -> str:
    """The same test run for both agents: aider's --test-cmd, NanoHermes's PostToolUse hook."""
    return f"python -m pytest -q {test_file}"


def nanohermes_auto_test(home: Path, test_file: str) -> None:
    """aider's --auto-test the way NanoHermes users get it (as Claude Code's do): a PostToolUse hook in the
    user's config runs the tests after every edit. Passing, their summary joins the edit's result; failing,
    the hook exits 2 with the end of the run (the failures) on stderr, Claude Code's "the change failed its
    check", which the loop answers as aider answers a failing run: the file again, with the output in view."""
    config = home / "nanohermes" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    tail = "tail -n 40"
    command = (
        f'out=$({test_command(test_file)} 2>&1) && echo "$out" | {tail} || {{ echo "$out" | {tail} >&2; exit 2; }}'
    )
    config.write_text(f'[[hooks.PostToolUse]]\nmatcher = "edit_file|write_file"\ncommand = {json.dumps(command)}\n')


def nanohermes_command(exe: str, task: str, base_url: str, model: str, test_file: str) -> list[str]:
    """The tests are read-only for both agents: aider gets them as a `--read` file, NanoHermes deny rules
    for writing and editing them (a 1.5B model shown failing tests rewrote the test file)."""
    read_only = ("--deny", f"write_file:{test_file}", "--deny", f"edit_file:{test_file}")
    return [exe, "-p", task, "--yes", *read_only, "--base-url", base_url, "--model", model, "--output-format", "json"]


def aider_command(exe: str, task: str, base_url: str, model: str, files: dict[str, str], home: Path) -> list[str]:
    """`files`: solution, test, instructions names. The solution is editable, the tests read-only context.

    INSTRUCTIONS.md travels inside the message (as aider's own benchmark sends an exercise's instructions), not
    as a `--read` file: aider picks a four-backtick fence for every reply when any chat file contains ```, which
    most instructions do, and the 1.5B model answers with three backticks, so aider applied no edit at all.
    """
    message = home / "aider-message.md"
    instructions = Path(files["workdir"], files["instructions"]).read_text()
    message.write_text(f"{task}\n\n{files['instructions']}:\n\n{instructions}")
    metadata = home / "aider-models.json"
    metadata.write_text(
        json.dumps(
            {
                f"openai/{model}": {
                    "max_input_tokens": AIDER_CONTEXT_TOKENS,
                    "max_tokens": AIDER_CONTEXT_TOKENS,
                    "max_output_tokens": AIDER_MAX_OUTPUT_TOKENS,
                    "input_cost_per_token": 0,
                    "output_cost_per_token": 0,
                    "litellm_provider": "openai",
                    "mode": "chat",
                }
            }
        )
    )
    test_cmd = test_command(files["test"])
    return [
        exe,
        *("--model", f"openai/{model}", "--openai-api-base", base_url, "--model-metadata-file", str(metadata)),
        *("--edit-format", AIDER_EDIT_FORMAT, "--map-tokens", "0"),
        *("--yes-always", "--no-git", "--auto-test", "--test-cmd", test_cmd),
        *("--no-check-update", "--analytics-disable", "--no-show-model-warnings", "--no-pretty", "--no-fancy-input"),
        *("--no-detect-urls", "--no-show-release-notes"),
        *("--chat-history-file", str(home / "aider.chat.md"), "--input-history-file", str(home / "aider.input")),
        *("--llm-history-file", str(home / "aider.llm.log")),
        *("--read", files["test"], "--message-file", str(message)),
        files["solution"],
    ]


def run_agent(command: list[str], workdir: Path, env: dict[str, str], timeout_s: float, log: Path) -> AgentRun:
    """Run one agent to its end or the timeout; its whole process group is killed at the timeout."""
    start = time.monotonic()
    timed_out = False
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
    seconds = time.monotonic() - start
    text = log.read_bytes().decode("utf-8", "replace")
    return AgentRun(None if timed_out else proc.returncode, seconds, timed_out, text[-2000:], _json_result(text))


def _kill_group(proc: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _json_result(text: str) -> dict:
    """NanoHermes's `--output-format json` result line, if the output has one."""
    for line in reversed(text.splitlines()):
        if line.startswith("{") and '"type"' in line:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("type") in ("result", "error"):
                return {k: obj.get(k) for k in ("exit_code", "stop_reason", "steps", "usage", "message", "session")}
    return {}


def default_nanohermes() -> str:
    """The nanohermes beside this Python (run the bench with the worktree's .venv/bin/python)."""
    return str(Path(sys.executable).parent / "nanohermes")
