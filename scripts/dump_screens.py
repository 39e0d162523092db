"""The screens the REPL's tests keep for a reader, as one Markdown file of pyte text.

Finds the tests under tests/ that take the `keep_screen` fixture (tests/ui/conftest.py), runs
them once, serially, with KEEP_SCREENS_TO naming a fresh file, and writes that file: each kept
screen is the emulated terminal (tests/support/terminal.py: 100×30 unless the test says) at the
moment the test shows it. The tests still assert what they always do; a failure is reported and
the file written with the screens that were kept.

    python scripts/dump_screens.py OUT.md [PYTEST_ARGS…]
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = "keep_screen"


def tests_keeping_screens(tests: Path) -> list[str]:
    """pytest node ids of the test functions that take the fixture, in file order."""
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and any(a.arg == FIXTURE for a in node.args.args):
                found.append(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out, extra = Path(argv[0]), argv[1:]
    ids = tests_keeping_screens(ROOT / "tests")
    with tempfile.TemporaryDirectory() as scratch:
        kept = Path(scratch) / "screens.md"
        env = {**os.environ, "KEEP_SCREENS_TO": str(kept)}
        run = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", *extra, *ids], cwd=ROOT, env=env)
        body = kept.read_text(encoding="utf-8") if kept.exists() else ""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    head = f"# Screens of the REPL (pyte text, commit {commit.stdout.strip() or '?'})\n\n"
    head += "Made by `scripts/dump_screens.py` from these tests:\n\n" + "".join(f"- `{i}`\n" for i in ids) + "\n"
    out.write_text(head + body, encoding="utf-8")
    print(
        f"{sum(line.startswith('## ') for line in body.splitlines())} screen(s) written to {out}; pytest exit code {run.returncode}"
    )
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
