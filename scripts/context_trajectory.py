"""A fixed, deterministic long agent trajectory for scripts/bench_context.py.

66 tool calls on a fictional `logkit` repository: reads of 6-18 KB files, greps, test runs
whose long logs (clamped head+tail to 20,000 bytes, as run_command does) end with the
failure, edits of six files, a goal up front, a constraint added midway and a late request.
Events are ("user", message) or ("assistant", message, [tool results]).
"""

from __future__ import annotations

import json
import random

from nanohermes.text import head_tail_text

GOAL = (
    "Goal: make parse_log() in src/logkit/parser.py read gzip-compressed logs (.log.gz) "
    "transparently, with tests. Keep the diff small."
)
CONSTRAINT = "Don't change the public API of parse_log(): other teams call it with positional arguments."
LATE_REQUEST = "When the tests pass, also mention .gz support in README.md under Usage."
SOURCE_FILES = [
    "src/logkit/parser.py",
    "src/logkit/reader.py",
    "src/logkit/formats.py",
    "src/logkit/filters.py",
    "src/logkit/cli.py",
    "src/logkit/__init__.py",
    "tests/test_parser.py",
    "tests/test_reader.py",
    "tests/test_cli.py",
    "docs/usage.md",
    "README.md",
    "src/logkit/compat.py",
]
TOOL_CAP_BYTES = 20_000
_WORDS = [
    "record",
    "line",
    "level",
    "stamp",
    "field",
    "source",
    "buffer",
    "stream",
    "entry",
    "token",
    "offset",
    "chunk",
]


def code_file(path: str, size: int, rng: random.Random) -> str:
    """Python-looking text of about `size` chars, numbered like read_file output."""
    lines, n = [], 1
    while sum(len(x) + 1 for x in lines) < size:
        a, b = rng.choice(_WORDS), rng.choice(_WORDS)
        body = rng.choice(
            [
                f"def {a}_{b}(self, {a}: str) -> list[str]:",
                f"    {a} = self._{b}.get({a!r}, None)",
                f"    if {a} is None:\n        return []",
                f"    return [{b} for {b} in {a} if {b}]",
                f"# {a} {b} handling for {path.rsplit('/', 1)[-1]}",
                f"class {a.title()}{b.title()}:",
            ]
        )
        lines.append(f"{n:>5}→{body}")
        n += 1
    return f"read_file {path} lines 1–{n - 1} of {n - 1}\n" + "\n".join(lines)


def test_log(rng: random.Random, failure: str | None, tests: int = 420) -> str:
    out = ["$ pytest -v", f"exit code {1 if failure else 0}", "============ test session starts ============"]
    for i in range(tests):
        module = rng.choice(["tests/test_parser.py", "tests/test_reader.py", "tests/test_cli.py"])
        out.append(f"{module}::test_{rng.choice(_WORDS)}_{i} PASSED [{100 * i // tests:>3}%]")
    if failure:
        out += ["================ FAILURES ================", f"____ {failure} ____"]
        out += [f"    {rng.choice(_WORDS)} = reader.open(path)  # frame {i}" for i in range(40)]
        out.append(f"E   {failure}")
        out.append(f"FAILED {failure}\n=========== 1 failed, {tests - 1} passed in 3.21s ===========")
    else:
        out.append(f"=========== {tests} passed in 3.02s ===========")
    text = "\n".join(out)
    # ASCII log: chars are bytes. Head and tail, as run_command shapes what reaches the model.
    return head_tail_text(text, TOOL_CAP_BYTES, "\n… stdout truncated ({n} bytes not shown)\n", head_share=2 / 5)


def grep_output(pattern: str, rng: random.Random, matches: int) -> str:
    lines = [f"grep {pattern!r} in . → {matches} matches"]
    for _ in range(matches):
        path = rng.choice(SOURCE_FILES)
        lines.append(f"{path}:{rng.randint(1, 400)}:    {pattern}({rng.choice(_WORDS)}, {rng.choice(_WORDS)})")
    return "\n".join(lines)


class _Builder:
    def __init__(self) -> None:
        self.rng = random.Random(20251129)
        self.events: list[tuple] = []
        self.calls = 0

    def user(self, text: str) -> None:
        self.events.append(("user", {"role": "user", "content": text}))

    def step(self, text: str | None, *actions: tuple[str, dict, str]) -> None:
        calls, results = [], []
        for name, args, output in actions:
            self.calls += 1
            cid = f"call_{self.calls:03d}"
            calls.append({"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}})
            results.append({"role": "tool", "tool_call_id": cid, "content": output})
        self.events.append(("assistant", {"role": "assistant", "content": text, "tool_calls": calls}, results))

    def answer(self, text: str) -> None:
        self.events.append(("assistant", {"role": "assistant", "content": text}, []))

    def read(self, path: str) -> tuple[str, dict, str]:
        return ("read_file", {"path": path}, code_file(path, self.rng.randint(6_000, 18_000), self.rng))

    def grep(self, pattern: str) -> tuple[str, dict, str]:
        return ("grep", {"pattern": pattern, "path": "."}, grep_output(pattern, self.rng, self.rng.randint(20, 90)))

    def tests(self, failure: str | None) -> tuple[str, dict, str]:
        return ("run_command", {"command": "pytest -v"}, test_log(self.rng, failure))

    def edit(self, path: str, what: str) -> tuple[str, dict, str]:
        old = code_file(path, self.rng.randint(200, 600), self.rng).split("\n", 1)[1]
        new = old + f"\n# {what}"
        return (
            "edit_file",
            {"path": path, "old_text": old, "new_text": new},
            f"edit_file {path}: replaced 1 occurrence ({what})",
        )


def build_trajectory() -> list[tuple]:
    b = _Builder()
    b.user(GOAL)
    b.step("I'll look at the layout first.", ("glob", {"pattern": "**/*.py"}, "\n".join(SOURCE_FILES)))
    for path in SOURCE_FILES[:6]:
        b.step(None, b.read(path))
    b.step("Where is parse_log used?", b.grep("parse_log"), b.grep("open_log"))
    for path in SOURCE_FILES[6:9]:
        b.step(None, b.read(path))
    b.step("Baseline test run.", b.tests(None))
    b.step(None, b.grep("gzip"), b.read("src/logkit/compat.py"))
    b.step(
        "The reader opens files in text mode; I'll add a gzip branch in reader.py.",
        b.edit("src/logkit/reader.py", "open .gz with gzip.open"),
    )
    b.step(None, b.tests("tests/test_reader.py::test_open_gz - OSError: Not a gzipped file"))
    b.step("The fixture is plain text; reading the test.", b.read("tests/test_reader.py"))
    b.step(
        None,
        b.edit("tests/test_reader.py", "write a real gzip fixture"),
        b.tests(
            "tests/test_parser.py::test_parse_gz - TypeError: parse_log() missing 1 required positional argument: 'compressed'"
        ),
    )
    b.step("I'll add a compressed flag to parse_log.", b.edit("src/logkit/parser.py", "add compressed parameter"))
    b.step(None, b.read("src/logkit/parser.py"), b.grep("parse_log("))
    b.step(None, b.tests("tests/test_cli.py::test_cli_gz - TypeError: parse_log() got an unexpected keyword argument"))
    for path in ("src/logkit/cli.py", "src/logkit/formats.py"):
        b.step(None, b.read(path))
    b.step(None, b.grep("compressed"), b.grep("def parse_log"))
    b.user(CONSTRAINT)
    b.step(
        "Understood: I'll revert the new parameter and detect gzip from the magic bytes instead.",
        b.edit("src/logkit/parser.py", "revert compressed parameter"),
    )
    b.step(None, b.read("src/logkit/reader.py"), b.read("src/logkit/formats.py"))
    b.step(
        None,
        b.edit("src/logkit/formats.py", "sniff gzip magic bytes"),
        b.edit("src/logkit/reader.py", "use formats.sniff"),
    )
    b.step(None, b.tests("tests/test_parser.py::test_parse_gz - AssertionError: assert 0 == 12"))
    b.step(
        "Empty result: the gzip stream is read as bytes; decoding it.",
        b.read("src/logkit/reader.py"),
        b.grep("decode("),
    )
    b.step(None, b.edit("src/logkit/reader.py", "decode gzip stream as utf-8"))
    b.step(None, b.tests("tests/test_parser.py::test_parse_gz_multiline - AssertionError: 11 != 12"))
    b.step(None, b.read("tests/test_parser.py"), b.read("src/logkit/filters.py"))
    b.step(
        None,
        b.edit("tests/test_parser.py", "add multiline gzip test"),
        b.edit("src/logkit/reader.py", "keep trailing line"),
    )
    b.step(None, b.tests("tests/test_cli.py::test_cli_gz - AssertionError: exit code 2"))
    b.step(None, b.read("src/logkit/cli.py"), b.grep("argparse"), b.grep("suffix"))
    b.step(None, b.edit("src/logkit/formats.py", "accept .log.gz suffix"))
    b.step(None, b.tests(None))
    b.user(LATE_REQUEST)
    b.step(None, b.read("README.md"), b.read("docs/usage.md"))
    b.step(None, b.edit("README.md", "document .gz support"))
    b.step(None, b.grep(".gz"), b.grep("parse_log"))
    for path in ("src/logkit/parser.py", "src/logkit/reader.py", "src/logkit/formats.py"):
        b.step(None, b.read(path))
    b.step("Final full run.", b.tests(None), b.grep("TODO"), b.grep("gzip"))
    b.step(None, b.read("tests/test_reader.py"), b.read("tests/test_parser.py"), b.read("src/logkit/cli.py"))
    b.step(None, b.tests(None), b.grep("compressed"))
    b.answer(
        "Done: parse_log() reads .log.gz transparently (gzip detected from magic bytes), its signature is unchanged, tests pass, README documents it."
    )
    return b.events


def changed_paths(events: list[tuple]) -> list[str]:
    """Files edited so far in `events`, in order."""
    paths: list[str] = []
    for event in events:
        if event[0] == "assistant":
            for call in event[1].get("tool_calls") or ():
                path = json.loads(call["function"]["arguments"]).get("path")
                if call["function"]["name"] in ("edit_file", "write_file") and path not in paths:
                    paths.append(path)
    return paths
