"""What workspace checkpoints (storage/snapshots.py) cost: storage and time per checkpoint on a
generated 5,000-file repository, and a 500-step session with a command in each, run through the
real loop (the scripted server over HTTP → real run_command), its storage split into the blobs
that actually changed and everything else (the index of deltas, the session file).

  first      the first checkpoint of a session: every file hashed, every content stored once
  rescan     a checkpoint with nothing changed: the listing and one stat per file
  command    a command that changed 2 files and created 1: the checkpoint after it

Usage: python scripts/measure_checkpoints.py [--files 5000] [--steps 500]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanohermes.storage.scan import RACY_NS  # noqa: E402
from nanohermes.storage.snapshots import AFTER, BEFORE, Snapshots  # noqa: E402

FILE_BYTES = (200, 12_000)  # source files: a few lines to a few hundred
DIRS = 120


def _source(rnd: random.Random, size: int) -> bytes:
    """Lines of identifiers and operators: compresses about as well as real source (~3-4x)."""
    words = [f"{rnd.choice(VOCABULARY)}_{rnd.randint(0, 99)}" for _ in range(size // 8)]
    lines = [" ".join(words[i : i + 6]) + " = None" for i in range(0, len(words), 6)]
    return "\n".join(lines).encode()


VOCABULARY = [f"{a}{b}" for a in ("get", "set", "make", "run", "load", "parse", "read") for b in "abcdefghijklmnop"]


def generate(root: Path, count: int) -> int:
    rnd = random.Random(7)
    total = 0
    for i in range(count):
        path = root / f"pkg{i % DIRS}" / f"sub{i % 7}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _source(rnd, rnd.randint(*FILE_BYTES))
        path.write_bytes(data)
        total += len(data)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\0" * 100_000)  # ignored: never scanned
    return total


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def stored(cp: Path) -> int:
    """The contents kept: packs (the snapshots') and loose blobs (write_file/edit_file's)."""
    return du(cp / "packs") + du(cp / "blobs") - (cp / "packs" / "packs.idx").stat().st_size


def timed(fn) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def per_checkpoint(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, cp = Path(tmp) / "repo", Path(tmp) / "cp"
        size = generate(repo, files)
        time.sleep(RACY_NS / 1e9 + 0.1)  # a real repository's files are older than the racy window
        snaps = Snapshots(cp, repo, prompt=lambda: 1)
        first = timed(lambda: snaps.checkpoint(BEFORE))
        stored_first = du(cp)
        rescans = [timed(lambda: snaps.checkpoint(AFTER)) for _ in range(7)]
        index_before = snaps.index.stat().st_size
        blobs_before = stored(cp)
        (repo / "pkg1/sub1/mod1.py").write_text("changed\n")
        (repo / "pkg2/sub2/mod2.py").write_text("changed too\n")
        (repo / "pkg3/new.py").write_text("created\n")
        command = timed(lambda: snaps.checkpoint(AFTER, "gen"))
        print(f"repository: {files:,} files, {size / 2**20:.1f} MB")
        print(f"first checkpoint   {first:7.0f} ms  stores {stored_first / 2**20:.1f} MB (each content once, zlib)")
        print(f"rescan, no change  {statistics.median(rescans):7.0f} ms  (median of 7)  stores 0 B")
        grown = snaps.index.stat().st_size - index_before
        print(f"after a command    {command:7.0f} ms  index +{grown} B, contents +{stored(cp) - blobs_before} B")


def session_of_steps(files: int, steps: int) -> None:
    """`steps` run_command calls, each appending a line to one of 20 files, through the real loop."""
    from nanohermes.configure import load_config
    from nanohermes.runtime import build_runtime
    from tests.support.scripted_server import ScriptedServer, call, text

    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        generate(repo, files)
        os.environ.update(NANOHERMES_HOME=str(home), OPENAI_API_KEY="sk-test")
        server = ScriptedServer()
        server.add(*[call("run_command", {"command": f"echo step {i} >> pkg{i % 20}/log.txt"}) for i in range(steps)])
        server.add(text("done"))
        config = load_config(base_url=server.url, workspace=repo, mode="auto", max_steps=steps + 5)
        runtime = build_runtime(config, "bench", lambda event: None, approve=None)
        spent: list[float] = []
        snaps = runtime.snapshots
        original = snaps.checkpoint

        def checkpoint(*args, **kw):
            began = time.perf_counter()
            try:
                return original(*args, **kw)
            finally:
                spent.append(time.perf_counter() - began)

        snaps.checkpoint = checkpoint
        began = time.perf_counter()
        runtime.agent.run_turn("append a line, many times")
        wall = time.perf_counter() - began
        runtime.close()
        server.close()
        cp = home / "checkpoints" / "bench"
        blobs, index = stored(cp), next(cp.glob("workspace-*.jsonl")).stat().st_size
        pack_index = (cp / "packs" / "packs.idx").stat().st_size
        print(f"\n{steps} steps, a command each, on {files:,} files: {wall:.1f} s in all")
        print(f"checkpoints: {len(spent)} taken, {sum(spent):.1f} s ({statistics.median(spent) * 1000:.0f} ms median)")
        print(f"contents {blobs / 2**20:.2f} MB (the first scan's, then each changed content once)")
        print(f"beyond them: snapshot index {index / 2**20:.2f} MB, pack index {pack_index / 2**20:.2f} MB")
        print(f"session file {(home / 'sessions' / 'bench.jsonl').stat().st_size / 2**20:.2f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    per_checkpoint(args.files)
    if args.steps:
        session_of_steps(args.files, args.steps)


if __name__ == "__main__":
    main()
