#!/usr/bin/env python3
"""What the model does when its first whole file failed the tests and it is asked again, under
different histories: a replay on the dev set, so a change to that ask is judged before a bench run.

    .venv/bin/python scripts/replay_reask.py --exercises /work/exercism-python --samples 3

Per dev exercise: NanoHermes runs two requests through scripts/usage_proxy.py (which keeps what was
sent). If its first file fails the exercise's tests, the second request — the file as a write_file
call, its result with the auto-test output, the ask — is sent again `--samples` times, sampled as the
loop samples a second ask, in each variant of VARIANTS; each reply's largest block (a ```json call's
content too) is judged by the tests. "same": the first file again; "no block": prose only (in the
"+cause" variants such a reply is followed by the ask for the file alone, and the file it brings is judged).
Held-out exercises are refused: nobody tunes to them (scripts/bench_exercism.py).
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this script
import bench_exercism as bench
import exercism_agents as agents
from usage_proxy import UsageProxy

from nanohermes.loop.coach.small_texts import RESAMPLE_TEMPERATURE  # a second ask is sampled so
from nanohermes.loop.coach.wholefile import FENCED

EXPLAIN_FIRST = "Say in one sentence what makes it fail, then reply with the whole"


def as_recorded(messages: list[dict]) -> list[dict]:
    """What the loop sends today: the whole file as a write_file call, its result, the ask."""
    return messages


def as_text(messages: list[dict]) -> list[dict]:
    """The whole file as the block the model wrote (aider's history), its result joined to the ask."""
    *head, call, result, ask = messages
    content = json.loads(call["tool_calls"][0]["function"]["arguments"])["content"]
    block = f"```python\n{content.rstrip()}\n```"
    return [
        *head,
        {"role": "assistant", "content": block},
        {"role": "user", "content": f"{result['content']}\n\n{ask['content']}"},
    ]


def explain_first(variant: Callable[[list[dict]], list[dict]]) -> Callable[[list[dict]], list[dict]]:
    """`variant` with an ask that wants the cause said before the file."""

    def explained(messages: list[dict]) -> list[dict]:
        *head, ask = variant(messages)
        return [*head, {**ask, "content": ask["content"].replace("Reply with the whole", EXPLAIN_FIRST)}]

    return explained


VARIANTS = {
    "call": as_recorded,
    "text": as_text,
    "call+cause": explain_first(as_recorded),
    "text+cause": explain_first(as_text),
}
# A reply in prose (no file) to a "cause first" ask is followed, in these, by the ask for the file alone.
THEN_THE_FILE = {"call+cause", "text+cause"}
FILE_NOW = "[Now reply with the whole new content of {path} in one ```python block, no tool call.]"


def second_ask(requests: list[dict]) -> dict | None:
    """The request after the first write, when it ends with the ask after a failed check."""
    for body in requests[1:]:
        messages = body["messages"]
        if len(messages) >= 3 and messages[-3].get("tool_calls") and "failed" in str(messages[-1]["content"]):
            return body
    return None


def complete(base_url: str, body: dict) -> str:
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=900)
    body = {**body, "stream": False, "temperature": RESAMPLE_TEMPERATURE}
    body.pop("stream_options", None)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    reply = json.loads(conn.getresponse().read())
    return reply["choices"][0]["message"].get("content") or ""


def code_of(reply: str) -> str | None:
    """The reply's largest block; a ```json write_file call's content."""
    blocks = sorted(FENCED.finditer(reply), key=lambda m: len(m.group(2)), reverse=True)
    if not blocks:
        return None
    code = blocks[0].group(2)
    try:
        return str(json.loads(code)["arguments"]["content"])
    except (ValueError, KeyError, TypeError):
        return code


def verdict(ex: dict, code: str | None, first: str, scratch: Path) -> str:
    if code is None:
        return "no block"
    if code.strip() == first.strip():
        return "same"
    solution = scratch / ex["solution"]
    solution.write_text(code)
    result = bench.judge(ex, solution, Path(tempfile.mkdtemp(dir=scratch)) / "judge")
    return f"{result['passed']}/{ex['total']}"


def replay(args: argparse.Namespace, slug: str, root: Path) -> None:
    ex = {**bench.exercise_files(args.exercises, slug), "slug": slug}
    work, home = root / slug / "work", root / slug / "home"
    if not work.exists():
        bench.lay_out(ex, work)
        home.mkdir(parents=True)
        agents.nanohermes_auto_test(home, ex["test"])
    task = bench.TASK.format(solution=ex["solution"], test=ex["test"])
    captured = root / slug / "ask.json"  # a replay again in the same --out reuses the request
    if captured.exists():
        body = json.loads(captured.read_text())
    else:
        with UsageProxy(args.base_url.removesuffix("/v1")) as proxy:
            cmd = agents.nanohermes_command(args.nanohermes, task, proxy.base_url, args.model, ex["test"])
            subprocess.run([*cmd, "--max-steps", "2"], cwd=work, env=agents.agent_env(home, Path(sys.executable).parent), capture_output=True, timeout=1800)  # fmt: skip
        body = second_ask(proxy.requests)
        if body is not None:
            captured.write_text(json.dumps(body))
    if body is None:
        print(f"{slug}: the first reply wrote no file that failed a check", flush=True)
        return
    written = json.loads(body["messages"][-3]["tool_calls"][0]["function"]["arguments"])
    first, path = written["content"], written["path"]
    scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=root / slug))
    ex["total"] = bench.count_tests(ex, scratch)
    print(f"{slug}: first file {verdict(ex, first, '', scratch)}", flush=True)
    for name in args.variants:
        sent = {**body, "messages": VARIANTS[name](body["messages"])}
        replies = [complete(args.base_url, sent) for _ in range(args.samples)]
        if name in THEN_THE_FILE:
            replies = [r if code_of(r) else then_the_file(args.base_url, sent, r, path) for r in replies]
        (root / slug / f"{name}.json").write_text(json.dumps(replies, indent=1))
        print(f"  {name}: {', '.join(verdict(ex, code_of(r), first, scratch) for r in replies)}", flush=True)


def then_the_file(base_url: str, sent: dict, prose: str, path: str) -> str:
    """The file asked for alone after a reply that only said the cause, that reply in the history."""
    asked = [
        *sent["messages"],
        {"role": "assistant", "content": prose},
        {"role": "user", "content": FILE_NOW.format(path=path)},
    ]
    return f"{prose}\n\n(then) {complete(base_url, {**sent, 'messages': asked})}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exercises", type=Path, required=True, help="the prepared track (bench_exercism.py prepare)")
    parser.add_argument("--only", help="comma-separated dev slugs (default: the whole dev set)")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--variants", help=f"comma-separated, of: {', '.join(VARIANTS)} (default: all)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8091/v1")
    parser.add_argument("--model", default="local-model")
    parser.add_argument("--nanohermes", default=str(Path(sys.executable).parent / "nanohermes"))
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="replay-reask-")))
    args = parser.parse_args()
    slugs = args.only.split(",") if args.only else bench.DEV
    args.variants = args.variants.split(",") if args.variants else list(VARIANTS)
    if unknown := [v for v in args.variants if v not in VARIANTS]:
        parser.error(f"no such variant: {', '.join(unknown)}")
    if held := [s for s in slugs if s not in bench.DEV]:
        parser.error(f"not in the dev set (held-out exercises are not tuned to): {', '.join(held)}")
    print(f"replies and runs in {args.out}", flush=True)
    for slug in slugs:
        replay(args, slug, args.out)


if __name__ == "__main__":
    main()
