"""Benchmark the search and read tools against raw ripgrep on a generated tree.

    .venv/bin/python scripts/bench_tools.py [--files 20000] [--runs 7]

Builds a tree of --files Python-like files (plus ignored build output) in a temp dir, then
prints the median wall time of each tool next to a raw reference and their ratio. The target
is grep ≤ 1.3× raw rg: the tool adds a process, a JSON parse per match and formatting.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nanohermes.tools import ToolContext
from nanohermes.tools.files import read_file
from nanohermes.tools.search import RG_MAX_FILESIZE, find_rg, glob, run_grep

FILES_PER_DIR = 100
RARE = "XYZZY_RARE_TOKEN"  # in 3 files
MEDIUM = r"class Widget1\d\d7\b"  # Widget1007..1997: 100 matches, under the cap, so a full scan
COMMON = r"def "  # every file: the tool stops at 200, raw rg prints them all


def build_tree(root: Path, n_files: int) -> None:
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for i in range(n_files):
        directory = root / f"pkg{i // FILES_PER_DIR:04}"
        if i % FILES_PER_DIR == 0:
            directory.mkdir()
        lines = [f"class Widget{i}:", "    '''A generated widget.'''", ""]
        for j in range(12):
            lines += [f"    def method_{j}(self, value):", f"        return value * {j} + {i}", ""]
        if i in (7, n_files // 2, n_files - 1):
            lines.append(f"{RARE} = True")
        (directory / f"mod{i}.py").write_text("\n".join(lines) + "\n")
    build = root / "build"
    build.mkdir()
    for i in range(2000):  # ignored: both rg and the walker must skip it
        (build / f"gen{i}.py").write_text(f"def generated_{i}(): {RARE}\n")
    (root / "big.log").write_text("".join(f"log line {i} with some text for a 3 MB file\n" for i in range(70_000)))


def paired_medians(tool, reference, runs: int) -> tuple[float, float]:
    """Median seconds of each, runs interleaved so a busy machine slows both alike."""
    tool(), reference()  # warm the page cache and imports
    tool_times, reference_times = [], []
    for _ in range(runs):
        for func, times in ((tool, tool_times), (reference, reference_times)):
            start = time.perf_counter()
            func()
            times.append(time.perf_counter() - start)
    return statistics.median(tool_times), statistics.median(reference_times)


def raw_rg(rg: str, root: Path, *args: str):
    command = [
        rg,
        "--no-config",
        "--hidden",
        "--no-require-git",
        "--max-filesize",
        RG_MAX_FILESIZE,
        "-g",
        "!.git",
        *args,
    ]
    return lambda: subprocess.run(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    options = parser.parse_args()
    rg = find_rg()
    if rg is None:
        sys.exit("rg not found: install the ripgrep package")
    root = Path(tempfile.mkdtemp(prefix="nh-bench-"))
    try:
        started = time.perf_counter()
        build_tree(root, options.files)
        print(
            f"tree: {options.files} files + 2000 ignored in {root} (built in {time.perf_counter() - started:.1f} s), {options.runs} runs each\n"
        )
        ctx = ToolContext(workspace=root, home=root.parent / "nh-bench-home-unused")
        grep_rg = lambda pattern: lambda: run_grep(ctx, pattern, ".", None, False, rg)  # noqa: E731
        rows = []
        for label, pattern in (("rare", RARE), ("medium", MEDIUM), ("common", COMMON)):
            times = paired_medians(grep_rg(pattern), raw_rg(rg, root, "-n", "-e", pattern, "."), options.runs)
            rows.append((f"grep {label} ({pattern})", times[0], f"rg -n {label}", times[1]))
        fallback = lambda: run_grep(ctx, RARE, ".", None, False, None)  # noqa: E731
        times = paired_medians(fallback, raw_rg(rg, root, "-n", "-e", RARE, "."), options.runs)
        rows.append(("grep rare, Python fallback", times[0], "rg -n rare", times[1]))
        times = paired_medians(
            lambda: glob.func(ctx, pattern="**/*.py"), raw_rg(rg, root, "--files", "-g", "*.py"), options.runs
        )
        rows.append(("glob **/*.py", times[0], "rg --files -g *.py", times[1]))
        big = root / "big.log"
        naive = lambda: big.read_text().splitlines()  # noqa: E731
        times = paired_medians(lambda: read_file.func(ctx, path="big.log"), naive, options.runs)
        rows.append((f"read_file 3 MB ({big.stat().st_size} B)", times[0], "read_text+splitlines", times[1]))
        times = paired_medians(
            lambda: read_file.func(ctx, path="big.log", offset=69_000, limit=500), naive, options.runs
        )
        rows.append(("read_file offset=69000 limit=500", times[0], "read_text+splitlines", times[1]))
        print_table(rows)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def print_table(rows) -> None:
    print(f"{'tool':<44} {'median':>9}   {'reference':<22} {'median':>9}  {'ratio':>6}")
    for name, tool_time, ref_name, ref_time in rows:
        print(
            f"{name:<44} {tool_time * 1000:7.1f}ms   {ref_name:<22} {ref_time * 1000:7.1f}ms  {tool_time / ref_time:5.2f}×"
        )


if __name__ == "__main__":
    main()
