"""aider's benchmark protocol on Exercism's Python exercises, as its own benchmark/benchmark.py ran it for the
Qwen2.5-Coder rows of its code-editing leaderboard (aider 0.59.2.dev, October–November 2024), for both agents.

Stdlib only: scripts/bench_aider133.py imports it for NanoHermes, scripts/aider_protocol_driver.py for aider
(run by aider's own Python). Per exercise (aider's run_test of that era):
- the files to edit: the exercise folder's top-level .py files without "test" in the name;
- the first message: .docs/introduction.md + instructions.md + instructions.append.md, then the addendum;
- after a try, the tests: `python -m unittest discover -s DIR -t DIR -p "*_test.py"` (60 s), their output with
  the timing line and rule lines normalised; failing, the first 50 lines and TEST_FAILURES are the next message;
- two tries: pass@1 is the first try's outcome, pass@2 the second's.
The model never sees the tests' source: they are copied beside the solution only to be run.

The exercises: every folder of exercises/practice at exercism/python PINNED_COMMIT (133, aider's "133 practice
exercises"; bench_aider133.py says how that commit was found).
"""

from __future__ import annotations

import hashlib
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

PINNED_COMMIT = "7aef5e9a8940a624f3cd4d604e99955d610058bf"
EXERCISE_COUNT = 133
# sha256 of the 133 folder names, sorted, one a line: a changed export must not silently change what is measured
NAMES_SHA256 = "120a50dc2db0c7d5f44937b9933e96761109e6c3065d7c76edc8e43be68f2153"
TRIES = 2
ERROR_LINES = 50  # aider sends the first 50 lines of the test output "to avoid exceeding the context window"
TEST_TIMEOUT_S = 60
SUBSET_SIZE = 40
SUBSET_SEED = 46  # the number; the subset is sorted names sampled by random.Random(SUBSET_SEED)

# aider's benchmark/prompts.py as of 2024-11 (the Qwen2.5-Coder runs), word for word: the protocol is aider's.
INSTRUCTIONS_ADDENDUM = """
####

Use the above instructions to modify the supplied files: {file_list}
Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.
Only use standard python libraries, don't suggest installing any packages.
"""
TEST_FAILURES = """
####

See the testing errors above.
The tests are correct.
Fix the code in {file_list} to resolve the errors.
"""


def solution_files(exercise: Path) -> list[str]:
    """The files the model edits: top-level .py files without "test" in the name (aider's rule)."""
    names = (p.name for p in exercise.iterdir() if p.is_file() and not p.name.startswith("."))
    return sorted(n for n in names if "test" not in n and n.endswith(".py"))


def test_files(exercise: Path) -> list[str]:
    return sorted(p.name for p in exercise.glob("*_test.py"))


def first_message(exercise: Path) -> str:
    docs = exercise / ".docs"
    text = "".join(
        (docs / name).read_text() for name in ("introduction.md", "instructions.md", "instructions.append.md")
        if (docs / name).exists()
    )  # fmt: skip
    return text + INSTRUCTIONS_ADDENDUM.format(file_list=" ".join(solution_files(exercise)))


def next_message(errors: str, exercise: Path) -> str:
    """The second try's message: the first ERROR_LINES lines of the test output, then TEST_FAILURES."""
    shown = "\n".join(errors.splitlines()[:ERROR_LINES])
    return shown + TEST_FAILURES.format(file_list=" ".join(solution_files(exercise)))


def run_tests(exercise: Path, workdir: Path, judge_dir: Path, python: str = sys.executable) -> str | None:
    """The exercise's original tests against the solution in `workdir`, in a fresh `judge_dir`: None when they
    pass, else their output (cleaned as aider cleans it)."""
    if judge_dir.exists():
        shutil.rmtree(judge_dir)
    judge_dir.mkdir(parents=True)
    for name in test_files(exercise):
        shutil.copy(exercise / name, judge_dir / name)
    for name in solution_files(exercise):
        if (workdir / name).exists():
            shutil.copy(workdir / name, judge_dir / name)
    command = [python, "-m", "unittest", "discover", "-s", str(judge_dir), "-t", str(judge_dir), "-p", "*_test.py"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TEST_TIMEOUT_S, cwd=judge_dir)
    except subprocess.TimeoutExpired:
        return "Tests timed out!"
    output = cleanup_test_output(done.stdout + done.stderr)
    return None if done.returncode == 0 else output


def cleanup_test_output(output: str) -> str:
    """aider's: the timing line and the rule lines made the same every run."""
    output = re.sub(r"^Ran \d+ tests in \d+\.\d+s$", "", output, flags=re.MULTILINE)
    output = re.sub(r"^====*$", "====", output, flags=re.MULTILINE)
    return re.sub(r"^----*$", "----", output, flags=re.MULTILINE)


def names_digest(names: list[str]) -> str:
    return hashlib.sha256("".join(f"{n}\n" for n in sorted(names)).encode()).hexdigest()


def subset(names: list[str], size: int = SUBSET_SIZE) -> list[str]:
    """The fixed random subset both agents run: `size` of the sorted names, sampled with SUBSET_SEED."""
    return sorted(random.Random(SUBSET_SEED).sample(sorted(names), size))
