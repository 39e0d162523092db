"""The table and per-agent summaries of scripts/bench_exercism.py (pure: result rows in, Markdown out)."""

from __future__ import annotations

import statistics
import xml.etree.ElementTree as ET
from pathlib import Path


def junit_counts(junit: Path) -> dict[str, int]:
    """Tests run and tests failed (failures + errors) in a pytest JUnit XML file; a collection error is 0 run."""
    tests = failed = 0
    for suite in ET.parse(junit).iter("testsuite"):
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return {"tests": tests, "failed": min(failed, tests)}


def row_line(row: dict) -> str:
    mark = "PASS" if row["pass"] else "fail"
    late = " (timeout)" if row["timed_out"] else ""
    return (
        f"{row['exercise']} d{row['difficulty']} {row['agent']}: {mark} {row['passed']}/{row['total']} "
        f"{row['seconds']:.0f}s{late} {row['prompt_tokens']} prompt tokens in {row['requests']} requests"
    )


def table(rows: list[dict]) -> str:
    lines = [
        "| exercise | set | difficulty | agent | pass | tests passed | seconds | requests | prompt tokens |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        late = " (timeout)" if r["timed_out"] else ""
        cut = f" ({r['unreported']} without usage)" if r.get("unreported") else ""  # cut off, or an error reply
        lines.append(
            f"| {r['exercise']} | {r['set']} | {r['difficulty']} | {r['agent']} | {'✓' if r['pass'] else '✗'} | "
            f"{r['passed']}/{r['total']} | {r['seconds']:.0f}{late} | {r['requests']} | {r['prompt_tokens']}{cut} |"
        )
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    """Per set and agent: pass rate, median seconds, prompt tokens per solved exercise, mean share of tests passed."""
    lines = [
        "| set | agent | passed | pass rate | median s | prompt tokens | per solved | mean share of tests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["set"], r["agent"]), []).append(r)
        if len({r["set"] for r in rows}) > 1:
            groups.setdefault(("all", r["agent"]), []).append(r)
    for (name, agent), rs in sorted(groups.items()):
        solved = sum(r["pass"] for r in rs)
        tokens = sum(r["prompt_tokens"] for r in rs)
        per_solved = f"{tokens / solved:,.0f}" if solved else "– (none solved)"
        share = statistics.mean(r["passed"] / r["total"] for r in rs)
        median = statistics.median(r["seconds"] for r in rs)
        lines.append(
            f"| {name} | {agent} | {solved}/{len(rs)} | {100 * solved / len(rs):.0f} % | {median:.0f} | "
            f"{tokens:,} | {per_solved} | {100 * share:.0f} % |"
        )
    return "\n".join(lines)


def render(rows: list[dict]) -> str:
    return table(rows) + "\n\n" + summary(rows)
