"""The tests are the spec (loop/coach/spec.py): a task that says to make the tests pass, or a PostToolUse
hook that runs them, has writes of test files refused with a note to change the code — unless the task
asks for test changes. The pure parts directly; the loop through the scripted server over real HTTP."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from nanohermes.hooks import Hooks
from nanohermes.hooks.settings import HookSpec
from nanohermes.loop.coach.spec import (
    WHY_ASKED,
    WHY_CHECKED,
    asks_for_test_changes,
    is_test_file,
    refusal,
    runs_tests,
    says_tests_must_pass,
)
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text

TOOLS = [t for t in BUILTIN_TOOLS if t.name in ("read_file", "edit_file", "write_file")]
PRICING = "RATES = {'BOOK': 0.1}\n\n\ndef vat(kind):\n    return RATES[kind]\n"
TEST = "from shop.pricing import vat\n\n\ndef test_food():\n    assert vat('FOOD') == 0.0\n"


@pytest.mark.parametrize(
    "path, test",
    [
        ("tests/test_pricing.py", True),
        ("test_calc.py", True),
        ("calc_test.py", True),
        ("pkg/handler_test.go", True),
        ("web/src/App.test.tsx", True),
        ("web/app.spec.ts", True),
        ("spec/models/user_spec.rb", True),
        ("src/test/java/app/CalcTest.java", True),
        ("App.Tests/CalcTests.cs", True),
        ("__tests__/x.js", True),
        ("conftest.py", True),
        ("pkg/testdata/input.txt", True),
        ("calc.py", False),
        ("src/latest.py", False),
        ("contest.py", False),
        ("testing/helpers.py", False),
        ("src/attest.py", False),
        ("docs/testing.md", False),
    ],
)
def test_test_files_are_known_by_their_folder_or_their_name(path, test):
    assert is_test_file(path) is test


@pytest.mark.parametrize(
    "request_text, must_pass, asks_changes",
    [
        ("Use INSTRUCTIONS.md to modify calc.py so that it passes calc_test.py. Do not change the tests.", True, False),
        ("The test in tests/test_pricing.py fails. Make it pass.", True, False),
        ("Fix the failing test", True, False),
        ("Make the tests green without changing any tests.", True, False),
        ("Add a test for the discount and make it pass.", True, True),
        ("Update the tests to the new API.", False, True),
        ("rewrite test_calc.py with fixtures", False, True),
        ("change the function so tests pass", True, False),  # the verb's object is the function
        ("fix the bug in calc.py", False, False),
        ("What does the test check?", False, False),
    ],
)
def test_a_task_says_its_tests_must_pass_or_asks_to_change_them(request_text, must_pass, asks_changes):
    assert says_tests_must_pass(request_text) is must_pass
    assert asks_for_test_changes(request_text) is asks_changes


def test_a_write_of_a_test_file_is_refused_only_when_the_tests_are_the_spec(tmp_path):
    edit = json.dumps({"path": "tests/test_pricing.py", "old_text": "0.0", "new_text": "0.1"})
    make_pass = "The test in tests/test_pricing.py fails. Make it pass."
    assert WHY_ASKED in refusal("edit_file", edit, make_pass, checked=False)
    assert WHY_CHECKED in refusal("edit_file", edit, "fix the discount", checked=True)
    assert refusal("edit_file", edit, "fix the discount", checked=False) is None  # nothing says tests are the spec
    assert refusal("edit_file", edit, "Add a test for FOOD and make it pass.", checked=True) is None
    assert refusal("read_file", json.dumps({"path": "tests/test_pricing.py"}), make_pass, checked=True) is None
    code = json.dumps({"path": "shop/pricing.py", "content": PRICING})
    assert refusal("write_file", code, make_pass, checked=True) is None
    inside = json.dumps({"path": str(tmp_path / "tests" / "calc.py"), "content": ""})
    assert refusal("write_file", inside, make_pass, True, workspace=tmp_path / "tests") is None  # the root's name
    assert refusal("write_file", inside, make_pass, True, workspace=tmp_path) is not None


def test_a_post_tool_use_hook_that_runs_a_test_runner_makes_the_tests_the_spec(tmp_path):
    def hooks(command: str, matcher: str | None = "write_file|edit_file") -> Hooks:
        return Hooks([HookSpec("PostToolUse", command, matcher)], tmp_path)

    assert runs_tests(hooks("python -m pytest -q -x || exit 2"))
    assert runs_tests(hooks("npm test", None)) and runs_tests(hooks("go test ./..."))
    assert not runs_tests(hooks("ruff format $FILE")) and not runs_tests(hooks("test -f calc.py && echo ok"))
    assert not runs_tests(hooks("pytest -q", "run_command"))  # not after an edit
    assert not runs_tests(Hooks([HookSpec("Stop", "pytest -q")], tmp_path)) and not runs_tests(None)


def _shop(workspace):
    (workspace / "shop").mkdir()
    (workspace / "shop" / "__init__.py").write_text("")
    (workspace / "shop" / "pricing.py").write_text(PRICING)
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_pricing.py").write_text(TEST)


@pytest.mark.parametrize("coach", ["plain", "small"])
def test_told_to_make_the_failing_test_pass_an_edit_of_the_test_is_refused_and_the_code_is_fixed(
    server, workspace, coach
):
    """The hidden task Qwen2.5-Coder-1.5B lost: told to make the failing test pass, it edited the test."""
    _shop(workspace)
    cheat = {"path": "tests/test_pricing.py", "old_text": "== 0.0", "new_text": "== 0.1"}
    fix = {"path": "shop/pricing.py", "old_text": "{'BOOK': 0.1}", "new_text": "{'BOOK': 0.1, 'FOOD': 0.0}"}
    server.add(call("edit_file", cheat), call("edit_file", fix), text("FOOD has a rate now."))
    agent = make_agent(server, workspace, tools=TOOLS, coach=coach)
    result = agent.run_turn("The test in tests/test_pricing.py fails with a KeyError. Make it pass.")
    assert result.final_text == "FOOD has a rate now."
    assert (workspace / "tests" / "test_pricing.py").read_text() == TEST
    assert "'FOOD': 0.0" in (workspace / "shop" / "pricing.py").read_text()
    refused = server.chat_requests()[1]["messages"][-1]
    assert refused["role"] == "tool" and "is a test file" in refused["content"] and WHY_ASKED in refused["content"]


def test_a_task_that_asks_for_a_test_may_write_one(server, workspace):
    _shop(workspace)
    added = TEST + "\n\ndef test_book():\n    assert vat('BOOK') == 0.1\n"
    server.add(call("write_file", {"path": "tests/test_pricing.py", "content": added}), text("Added."))
    agent = make_agent(server, workspace, tools=TOOLS)
    assert agent.run_turn("Add a test for BOOK in tests/test_pricing.py and make it pass.").final_text == "Added."
    assert (workspace / "tests" / "test_pricing.py").read_text() == added


def test_with_an_auto_test_hook_a_test_edit_is_refused_though_the_task_names_no_test(server, workspace):
    _shop(workspace)
    pytest_run = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests || exit 2"
    hooks = Hooks([HookSpec("PostToolUse", pytest_run, "write_file|edit_file")], workspace)
    cheat = {"path": "tests/test_pricing.py", "content": "def test_food():\n    pass\n"}
    server.add(call("write_file", cheat), text("I could not."))
    agent = make_agent(server, workspace, tools=TOOLS, hooks=hooks)
    agent.run_turn("Give FOOD a VAT rate of zero.")
    assert (workspace / "tests" / "test_pricing.py").read_text() == TEST
    assert WHY_CHECKED in server.chat_requests()[1]["messages"][-1]["content"]
