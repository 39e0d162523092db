#!/usr/bin/env python3
"""The pass-rate table of scripts/e2e_pass_rate.sh: one row per task, one column per round.

    python scripts/e2e_pass_table.py /tmp/e2e-pass-rate
An xfail (the check passed, the `ideal` did not) counts as a pass: the outcome checks held.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def results(junit: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(junit).iter("testcase"):
        name = re.sub(r".*\[(.*)\]", r"\1", case.get("name", ""))
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped")
        xfail = skipped is not None and "xfail" in (skipped.get("type", "") + skipped.get("message", "")).lower()
        out[name] = "fail" if failed else "pass" if skipped is None or xfail else "skip"
    return out


def main(root: Path) -> None:
    rounds = sorted(
        (d for d in root.glob("round-*") if (d / "junit.xml").exists()), key=lambda d: int(d.name.split("-")[1])
    )
    table = {d.name: results(d / "junit.xml") for d in rounds}
    tasks = sorted({t for r in table.values() for t in r})
    heads = [d.name.split("-", 2)[2].replace("t", "T=") for d in rounds]
    print("| task | " + " | ".join(heads) + " | pass rate |")
    print("|---|" + "---|" * (len(rounds) + 1))
    passed = total = 0
    for task in tasks:
        cells = [table[d.name].get(task, "–") for d in rounds]
        p, n = cells.count("pass"), sum(c in ("pass", "fail") for c in cells)
        passed, total = passed + p, total + n
        print(f"| {task} | " + " | ".join(cells) + f" | {p}/{n} |")
    print(f"| overall | | | | {passed}/{total} ({100 * passed / max(total, 1):.0f} %) |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/e2e-pass-rate"))
