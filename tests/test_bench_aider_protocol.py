"""scripts/bench_aider133.py's protocol (aider's two tries, the tests fed back) on a made-up exercise: the
messages, the judge (a real unittest run), the fixed subset, and NanoHermes's two tries through the real
executable against the scripted server."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from tests.support.scripted_server import ScriptedServer, calls, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import aider_protocol as protocol
import bench_aider133 as bench

STUB = "def double(n):\n    pass\n"
RIGHT = "def double(n):\n    return 2 * n\n"
WRONG = "def double(n):\n    return n + 1\n"
TESTS = (
    "import unittest\n\nfrom twice import double\n\n\nclass TwiceTest(unittest.TestCase):\n"
    "    def test_one(self):\n        self.assertEqual(double(1), 2)\n\n"
    "    def test_three(self):\n        self.assertEqual(double(3), 6)\n"
)


@pytest.fixture
def exercise(tmp_path) -> Path:
    root = tmp_path / "track" / "twice"
    (root / ".docs").mkdir(parents=True)
    (root / ".meta").mkdir()
    (root / ".docs" / "instructions.md").write_text("# Instructions\n\nDouble a number.\n")
    (root / ".docs" / "instructions.append.md").write_text("Use `*`.\n")
    (root / ".meta" / "example.py").write_text(RIGHT)  # the reference solution: never shown
    (root / "twice.py").write_text(STUB)
    (root / "twice_test.py").write_text(TESTS)
    return root


def test_the_messages_are_aiders_and_name_the_solution_file_only(exercise):
    assert protocol.solution_files(exercise) == ["twice.py"] and protocol.test_files(exercise) == ["twice_test.py"]
    first = protocol.first_message(exercise)
    assert first.startswith("# Instructions\n\nDouble a number.\nUse `*`.\n\n####\n")
    assert "modify the supplied files: twice.py\n" in first
    errors = "\n".join(f"line {n}" for n in range(80))
    second = protocol.next_message(errors, exercise)
    assert second.startswith("line 0\n") and "line 49" in second and "line 50" not in second
    assert second.endswith("The tests are correct.\nFix the code in twice.py to resolve the errors.\n")


def test_the_judge_runs_the_original_tests_beside_the_solution_alone(exercise, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "twice.py").write_text(WRONG)
    (work / "twice_test.py").write_text("import unittest\n")  # a test file the agent left is never used
    failed = protocol.run_tests(exercise, work, tmp_path / "judge")
    assert "FAIL: test_three" in failed and "Ran 2 tests in" not in failed
    (work / "twice.py").write_text(RIGHT)
    assert protocol.run_tests(exercise, work, tmp_path / "judge") is None


def test_the_subset_is_fixed_and_the_pinned_names_are_checked():
    names = [f"ex-{n:03}" for n in range(133)]
    assert protocol.subset(names) == protocol.subset(list(reversed(names)))
    assert len(protocol.subset(names)) == protocol.SUBSET_SIZE == len(set(protocol.subset(names)))
    assert protocol.names_digest(names) != protocol.NAMES_SHA256


def test_nanohermes_gets_a_second_try_with_the_test_output_in_the_same_session(exercise, tmp_path):
    server = ScriptedServer(n_ctx=32_768)
    write = lambda code: calls(("write_file", {"path": "twice.py", "content": code}))  # noqa: E731
    replies = [write(WRONG), text("Done."), write(RIGHT), text("Done.")]
    probe = lambda body: body["messages"][-1]["content"] == "ok"  # noqa: E731  (the proxy's settling request)
    server.handler = lambda body: text("ok") if probe(body) else replies.pop(0)
    args = argparse.Namespace(nanohermes=str(Path(sys.executable).parent / "nanohermes"), coach="plain")
    args.model, args.timeout, args.profile = "local-model", 120, tmp_path / "coach.json"
    try:
        with bench.UsageProxy(server.url) as proxy:
            tries = bench.run_nanohermes(args, proxy, exercise, tmp_path / "out")
    finally:
        server.close()
    assert [t["pass"] for t in tries] == [False, True]
    assert (tmp_path / "out" / "work" / "twice.py").read_text() == RIGHT
    assert not (tmp_path / "out" / "work" / "twice_test.py").exists()  # the model never saw the tests
    config = (tmp_path / "out" / "home" / "nanohermes" / "config.toml").read_text()
    assert config == f"request_timeout = {bench.REPLY_WAIT_S}\n"  # a reply waited for as aider waits
    chats = [r for r in server.chat_requests() if r["messages"][-1]["content"] != "ok"]
    second_try = next(r for r in chats if "See the testing errors above." in str(r["messages"][-1]["content"]))
    assert second_try["messages"][1]["content"].startswith("# Instructions")  # the first try is in the history
    row = bench.row("twice", "nanohermes", "plain", tries, tmp_path / "out")
    assert (row["pass1"], row["pass2"], row["requests"]) == (False, True, 4)
    assert "| nanohermes (plain) | 1 | 0.0 % | 100.0 % |" in bench.summary([row])
    other = {**row, "exercise": "other", "pass2": False}  # run by one agent only: not in the comparison
    aider = {**row, "agent": "aider", "coach": "", "pass1": True}
    table = bench.summary([row, other, aider])
    assert "| nanohermes (plain) | 1 | 0.0 % | 100.0 % |" in table and "| aider | 1 | 100.0 % | 100.0 % |" in table
    per_exercise = f"| {row['prompt_tokens']:,} | {row['evaluated_tokens']:,} | 4.0 |"  # sent, evaluated, requests
    assert table.splitlines()[-1].endswith(per_exercise), table
    json.dumps(row)  # the results file holds it
