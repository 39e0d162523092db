"""The tests are the spec: when the user's task says to make tests pass, or a PostToolUse hook runs the
tests after each edit (aider's --auto-test, as docs/hooks.md sets it up), a write_file or edit_file of a
test file is refused with a note saying to change the code instead — unless the task asks for test
changes. Told to make a failing test pass, Qwen2.5-Coder-1.5B edited the test and stopped (one of the
five hidden real tasks); frontier models are known to do the same when a test resists.

A test file (is_test_file), by its path inside the workspace:
- under a directory named test, tests, __tests__, spec, specs or testdata;
- named test_*, *_test.*, *.test.* or *.spec.* (Python, Go, JavaScript/TypeScript), *_spec.rb,
  conftest.py, or *Test / *Tests / *Spec with a capital (Java, Kotlin, C#, Scala, Swift, Groovy).
Commands (`sed -i`, a formatter) are not judged: only the two tools that write files.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from nanohermes.calls import WRITING_TOOLS, parse_tool_call

TEST_FILE = re.compile(
    r"(^|/)((tests?|__tests__|specs?|testdata)/"
    r"|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(test|spec)\.\w+$|[^/]*_spec\.rb$|conftest\.py$"
    r"|[A-Z][^/]*(Tests?|Spec)\.(java|kt|kts|cs|scala|swift|groovy)$)"
)
NAMES_TESTS = re.compile(r"\b(tests?|specs?|pytest|unittest|jest|vitest)\b|\w_tests?\.\w+|\btest_\w+", re.I)
PASS_OR_FAIL = re.compile(r"\b(pass(es|ed|ing)?|green|fail(s|ed|ing|ures?)?)\b", re.I)
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
# "add a test", "update the tests", "rewriting test_calc.py": the task asks for test changes, its verb at
# most two words before them ("change the function so tests pass" is no such ask). "fix" is left out:
# "fix the failing test" asks for the test to pass.
TEST_CHANGE = re.compile(
    r"\b(add|writ|wrote|updat|chang|edit|modif|creat|extend|rewrit|adjust|delet|remov|renam|correct)\w*"
    r"(?:\s+(?!so\b|that\b|then\b|and\b|until\b)[\w'-]+){0,2}?"
    r"\s+(tests?|specs?|test cases?|\w+_tests?\.\w+|test_\w+)\b",
    re.I,
)
NEGATIONS = frozenset({"not", "never", "without", "no", "nor"})
NEGATION_WORDS = 3  # "do not change the tests", "without changing any tests": a negation this close before the verb
# A PostToolUse command that runs tests: a test runner, or a build tool's test command (npm test, go test,
# make test). The shell's `test -f` is no test run.
RUNS_TESTS = re.compile(
    r"\b(pytest|unittest|nose2|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest)\b"
    r"|\b(npm|pnpm|yarn|bun|deno|go|cargo|dotnet|mix|make|gradle|mvn|swift|zig)\s+(run\s+)?test\b"
)

REFUSED = (
    "error: not written: {path} is a test file, and the tests are this task's spec ({why}). Change the code "
    "so that the tests pass, and leave the tests as they are; if a test itself looks wrong, say so in your answer."
)
WHY_ASKED = "the request says to make them pass"
WHY_CHECKED = "a PostToolUse hook runs them after each edit"


def is_test_file(path: str) -> bool:
    """A workspace-relative (or absolute, already made relative) path of a test file (module docstring)."""
    return bool(TEST_FILE.search(path))


def says_tests_must_pass(request: str) -> bool:
    """One sentence of the request names tests and their passing or failing ("so that calc_test.py passes",
    "make the failing test pass")."""
    return any(NAMES_TESTS.search(s) and PASS_OR_FAIL.search(s) for s in SENTENCE_END.split(request))


def asks_for_test_changes(request: str) -> bool:
    """The request asks to change tests ("add a test for …"), not "do not change the tests"."""
    for match in TEST_CHANGE.finditer(request):
        before = [w.lower() for w in request[: match.start()].split()[-NEGATION_WORDS:]]
        if not any(w in NEGATIONS or w.endswith("n't") for w in before):
            return True
    return False


def runs_tests(hooks) -> bool:
    """A PostToolUse hook of the session runs after write_file or edit_file and its command runs tests."""
    specs = getattr(hooks, "specs", ()) or ()
    return any(
        s.event == "PostToolUse"
        and (s.matches("write_file") or s.matches("edit_file"))
        and RUNS_TESTS.search(s.command)
        for s in specs
    )


def refusal(name: str, arguments: str, request: str, checked: bool, workspace: Path | None = None) -> str | None:
    """The note refusing a write of a test file when the tests are the spec, else None. `checked`: a
    PostToolUse hook runs the tests (runs_tests)."""
    if name not in WRITING_TOOLS or asks_for_test_changes(request):
        return None
    asked = says_tests_must_pass(request)
    if not (asked or checked):
        return None
    path = parse_tool_call({"function": {"name": name, "arguments": arguments}}).arguments.get("path")
    if not isinstance(path, str) or not is_test_file(_relative(path, workspace)):
        return None
    return REFUSED.format(path=path, why=WHY_ASKED if asked else WHY_CHECKED)


def _relative(path: str, workspace: Path | None) -> str:
    """`path` inside the workspace, normalised: a workspace under /tmp/tests/ makes no file a test."""
    path = posixpath.normpath(path.replace(os.sep, "/"))
    if workspace is not None and posixpath.isabs(path):
        root = posixpath.normpath(str(workspace).replace(os.sep, "/"))
        if path == root or path.startswith(root + "/"):
            return path[len(root) + 1 :]
    return path
