"""The real `nanohermes` executable against the scripted server."""

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.support.scripted_server import Error, Reply, call, prose, text

pytestmark = pytest.mark.subprocess

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def run(args, workspace, env_extra=None, input=None, timeout=60):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [BIN, *args], cwd=workspace, env=env, input=input, capture_output=True, text=True, timeout=timeout
    )


def test_version_does_not_import_openai():
    code = "import sys; sys.argv=['nanohermes','--version']\nfrom nanohermes.cli import main\ntry: main()\nexcept SystemExit: pass\nprint('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    assert out == ["nanohermes", "0.1.0", "False"]


def test_the_commands_version_imports_neither_typer_nor_the_cli_and_the_rest_reaches_the_cli():
    """The console script (launch.py) answers --version before typer (~40 ms) is imported."""
    code = (
        "import sys; sys.argv=['nanohermes',{arg!r}]\nfrom nanohermes.launch import main\n"
        "try: main()\nexcept SystemExit as e: print('exit', e.code)\n"
        "print('typer' in sys.modules, 'nanohermes.cli' in sys.modules)"
    )
    version = subprocess.run([sys.executable, "-c", code.format(arg="--version")], capture_output=True, text=True)
    assert version.stdout.split() == ["nanohermes", "0.1.0", "exit", "0", "False", "False"]
    usage = subprocess.run([sys.executable, "-c", code.format(arg="--bogus")], capture_output=True, text=True)
    assert usage.stdout.split()[:2] == ["exit", "2"] and "--bogus" in usage.stderr  # typer's own usage error


def test_one_shot_prints_only_the_answer_on_stdout(server, workspace):
    (workspace / "notes.txt").write_text("the secret is 42\n")
    server.add(call("read_file", {"path": "notes.txt"}, content="Let me look."), text("The secret is 42."))
    r = run(["-p", "what is the secret?", "--base-url", server.url, "--model", "m"], workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "The secret is 42.\n"
    assert "read_file notes.txt" in r.stderr and "Let me look." in r.stderr
    assert "resume with --session" in r.stderr


def test_prompt_dash_reads_the_task_from_stdin(server, workspace):
    server.add(text("ok"))
    r = run(["-p", "-", "--base-url", server.url], workspace, input="task from stdin\n")
    assert r.returncode == 0 and server.chat_requests()[0]["messages"][-1]["content"] == "task from stdin\n"


def test_missing_key_is_one_clear_paragraph_without_traceback(workspace):
    r = run(["-p", "hi"], workspace)
    assert r.returncode == 1
    assert "OPENAI_API_KEY" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_unreachable_server_is_a_clear_error(workspace, isolated_home):
    (isolated_home / "config.toml").write_text("max_retries = 1\n")
    r = run(["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    assert r.returncode == 1 and "Cannot reach http://127.0.0.1:9/v1" in r.stderr and "Traceback" not in r.stderr


def test_rejected_key_and_unknown_model_say_what_to_set(server, workspace):
    server.add(Error(401, {"error": {"message": "invalid key"}}), Error(404, {"error": {"message": "model not found"}}))
    r = run(["-p", "hi", "--base-url", server.url], workspace, {"OPENAI_API_KEY": "sk-bad"})
    assert r.returncode == 1 and "rejected the API key" in r.stderr
    r = run(["-p", "hi", "--base-url", server.url, "--model", "nosuch"], workspace)
    assert r.returncode == 1 and "does not serve model 'nosuch' (HTTP 404: model not found)" in r.stderr
    assert "It serves: test-model." in r.stderr and "--model" in r.stderr


def test_bad_usage_exits_2(workspace):
    assert run(["--mode", "wild", "-p", "x", "--base-url", "http://127.0.0.1:9/v1"], workspace).returncode == 2
    assert run(["--no-such-flag"], workspace).returncode == 2
    assert run(["-p", "   ", "--base-url", "http://127.0.0.1:9/v1"], workspace).returncode == 2


def test_bad_config_file_is_reported(workspace, isolated_home):
    (isolated_home / "config.toml").write_text("model = [unclosed\n")
    r = run(["-p", "hi"], workspace)
    assert r.returncode == 1 and "is not valid TOML" in r.stderr


def test_environment_and_flags_override_config_file(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text('model = "from-file"\n')
    server.add(text("a"), text("b"), text("c"))
    run(["-p", "x", "--base-url", server.url], workspace)
    run(["-p", "x"], workspace, {"OPENAI_BASE_URL": server.url, "NANOHERMES_MODEL": "from-env"})
    run(["-p", "x", "--model", "from-flag"], workspace, {"OPENAI_BASE_URL": server.url, "NANOHERMES_MODEL": "from-env"})
    assert [r["model"] for r in server.chat_requests()] == ["from-file", "from-env", "from-flag"]


def test_a_run_stopped_by_the_step_limit_exits_3_unfinished(server, workspace):
    server.add(*[call("read_file", {"path": "x"}) for _ in range(3)])
    r = run(["-p", "loop", "--base-url", server.url, "--max-steps", "2"], workspace)
    assert r.returncode == 3 and "--max-steps 2" in r.stderr and r.stdout == ""


def test_named_session_resumes_and_is_listed(server, workspace):
    server.add(text("first"), text("second"))
    assert run(["-p", "remember x", "--session", "proj", "--base-url", server.url], workspace).returncode == 0
    assert run(["-p", "what was it", "--session", "proj", "--base-url", server.url], workspace).returncode == 0
    contents = [m["content"] for m in server.chat_requests()[1]["messages"][1:]]
    assert contents == ["remember x", "first", "what was it"]
    listing = run(["sessions"], workspace).stdout
    assert "proj" in listing and "4" in listing


def test_ctrl_c_in_one_shot_exits_130_and_saves(server, workspace, isolated_home):
    server.add(Reply(content=prose(1_000, "slow"), delay=0.05, chunk_size=5))
    # As from an interactive shell: a runner that ignores SIGINT would pass that on to the child.
    proc = subprocess.Popen(
        [BIN, "-p", "hi", "--session", "cc", "--base-url", server.url, "--output-format", "stream-json"],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    said = ""  # Ctrl-C once the reply has begun to arrive (a wait by the clock was too short under load)
    while "slow1" not in said and (line := proc.stdout.readline()):
        said += json.loads(line).get("text", "")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    saved = (isolated_home / "sessions" / "cc.jsonl").read_text()
    assert "[interrupted by user]" in saved and "slow0 slow1" in saved


def test_resume_uses_the_current_agents_md_not_the_stored_rules(server, workspace):
    (workspace / "AGENTS.md").write_text("Rule one: use tabs.\n")
    server.add(text("first"), text("second"))
    run(["-p", "hello", "--session", "rules", "--base-url", server.url], workspace)
    (workspace / "AGENTS.md").write_text("Rule two: use spaces.\n")
    run(["-p", "again", "--session", "rules", "--base-url", server.url], workspace)
    first, second = (r["messages"][0]["content"] for r in server.chat_requests())
    assert "Rule one" in first and "Rule two" in second and "Rule one" not in second


def test_wrongly_typed_settings_are_clear_errors(workspace, isolated_home):
    (isolated_home / "config.toml").write_text('max_steps = "ten"\n')
    r = run(["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    assert r.returncode == 1 and "max_steps = 'ten'" in r.stderr and "Traceback" not in r.stderr
    (isolated_home / "config.toml").write_text('context_window = "8k"\n')
    r = run(["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    assert r.returncode == 1 and "context_window" in r.stderr and not (isolated_home / "sessions").exists()


def test_plan_with_yes_and_a_missing_workspace_are_usage_errors(workspace):
    assert run(["--mode", "plan", "--yes", "-p", "x"], workspace).returncode == 2
    assert run(["-C", str(workspace / "nope"), "-p", "x"], workspace).returncode == 2


def test_an_at_path_in_a_one_shot_task_attaches_the_file_and_an_at_directory_its_listing(server, workspace):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    server.add(text("It adds."))
    r = run(["-p", "what does @calc/ops.py do? see @calc/", "--base-url", server.url], workspace, input="")
    assert r.returncode == 0, r.stderr
    sent = server.chat_requests()[0]["messages"][-1]["content"]
    assert sent.startswith("what does @calc/ops.py do? see @calc/\n\n[NanoHermes attached")
    assert "return a + b" in sent and "directory calc/: 1 file" in sent
