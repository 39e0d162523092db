"""What a language server's diagnostics add to an edit: edit_file's wall time with and without
them, medians over N edits (the machine is shared and noisy: medians, one run, side by side).

  off            edit_file with no language server (ToolContext.diagnostics None)
  start          the session's first edit of a Python file: pylsp started, the file opened, two
                 publications awaited (its text before and after) — once per session, so N sessions
  first edit     a file's first edit with the server running: its old problems, then its new ones
  later edit     another edit of the same file: only the new text's problems (the old are known)

Each edit adds an undefined name, so every check has a new problem to say; the file is a 300-line
module. pylsp waits 0.5 s after a change before it lints (python_lsp.py's LINT_DEBOUNCE_S), so a
check costs at least that, and a file's first check twice that. `--sandbox` runs the server as a
session does with the sandbox on: read-only in bubblewrap (or Landlock).

Usage: python scripts/bench_lsp.py [--runs N] [--sandbox]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanohermes.lsp import Diagnostics  # noqa: E402
from nanohermes.lsp.settings import parse_lsp_table  # noqa: E402
from nanohermes.sandbox import SandboxSettings, policy_for  # noqa: E402
from nanohermes.tools import ToolContext, dispatch  # noqa: E402
from nanohermes.tools.edit import edit_file  # noqa: E402

MODULE = "".join(f"def function_{i}(value):\n    return value + {i}\n\n" for i in range(100))
TIMEOUT_S = 60.0  # measured, never cut short


def edit_ms(ctx: ToolContext, path: str, n: int) -> float:
    arguments = {"path": path, "old_text": f"return value + {n}\n", "new_text": f"return value + missing_{n}\n"}
    began = time.perf_counter()
    result = dispatch(ctx, {"edit_file": edit_file}, "edit_file", arguments)
    elapsed = (time.perf_counter() - began) * 1000
    if not result.ok or (
        ctx.diagnostics is not None and f"missing_{n}" not in result.content.split("new problems")[-1]
    ):
        raise SystemExit(f"the edit or its check failed:\n{result.content[-500:]}")
    return elapsed


def session(workspace: Path, home: Path, policy, checked: bool) -> tuple[ToolContext, Diagnostics | None]:
    table = {"python": {"command": [sys.executable, "-m", "pylsp"], "timeout": TIMEOUT_S, "startup_timeout": TIMEOUT_S}}
    diagnostics = Diagnostics(parse_lsp_table(table, workspace / "c.toml"), workspace, policy) if checked else None
    return ToolContext(workspace=workspace, home=home, diagnostics=diagnostics), diagnostics


def measure(runs: int, sandboxed: bool) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"off": [], "start": [], "first edit": [], "later edit": []}
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp, "ws").resolve(), Path(tmp, "home")
        workspace.mkdir()
        home.mkdir()
        policy = policy_for(SandboxSettings(), workspace, home) if sandboxed else None
        try:
            for run in range(runs):
                for name in ("off.py", "start.py", "a.py"):
                    (workspace / name).write_text(MODULE)
                ctx, _ = session(workspace, home, policy, checked=False)
                times["off"].append(edit_ms(ctx, "off.py", run))
                ctx, diagnostics = session(workspace, home, policy, checked=True)
                try:
                    times["start"].append(edit_ms(ctx, "start.py", run))
                    times["first edit"].append(edit_ms(ctx, "a.py", run))
                    times["later edit"].append(edit_ms(ctx, "a.py", run + 50))
                finally:
                    diagnostics.close()
        finally:
            if policy is not None:
                shutil.rmtree(policy.temp_dir, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sandbox", action="store_true", help="run the server read-only in the sandbox")
    args = parser.parse_args()
    times = measure(args.runs, args.sandbox)
    print(f"edit_file of a 300-line module, pylsp + pyflakes{' (sandboxed)' if args.sandbox else ''}, {args.runs} runs")
    print(f"{'case':<12} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    for case, values in times.items():
        print(f"{case:<12} {statistics.median(values):>10.0f} {min(values):>8.0f} {max(values):>8.0f}")


if __name__ == "__main__":
    main()
